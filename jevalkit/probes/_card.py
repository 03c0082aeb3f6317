"""Render a probe as a Markdown card with a ready-to-paste curl command."""

from __future__ import annotations

import json
import shlex

from ._model import Probe

DEFAULT_CURL_URL = "https://openrouter.ai/api/v1/chat/completions"


def request_body(probe: Probe, model: str) -> dict:
    """The exact chat-completions body a model receives for this probe.

    Example:
        >>> import jevalkit
        >>> body = request_body(jevalkit.load_probe("schema-ten-records@2"), "some/model")
        >>> sorted(body)
        ['max_tokens', 'messages', 'model', 'temperature']
    """
    return {"model": model, "messages": probe.chat_messages(), **dict(probe.parameters)}


def curl_command(
    probe: Probe, *, model: str = "openai/gpt-4o-mini", url: str = DEFAULT_CURL_URL
) -> str:
    """A curl command that sends the probe as it stands; the key stays a shell variable.

    Example:
        >>> import jevalkit
        >>> "$OPENROUTER_API_KEY" in curl_command(jevalkit.load_probe("schema-ten-records"))
        True
    """
    body = json.dumps(request_body(probe, model), indent=2, ensure_ascii=False)
    return (
        f"curl {url} \\\n"
        '  -H "Authorization: Bearer $OPENROUTER_API_KEY" \\\n'
        '  -H "Content-Type: application/json" \\\n'
        f"  -d {shlex.quote(body)}"
    )


def probe_card(probe: Probe) -> str:
    """A Markdown probe card: messages, parameters, rubric, scoring, examples, history, curl.

    Example:
        >>> import jevalkit
        >>> card = probe_card(jevalkit.load_probe("schema-ten-records@2"))
        >>> card.splitlines()[0]
        '# schema-ten-records@2: Hold a schema steady across ten generated items'
    """
    lines = [f"# {probe.name}: {probe.title}", "", probe.description.strip(), "", "## Messages", ""]
    for m in probe.messages:
        lines += [f"**{m.role}**", "", "```text", m.content, "```", ""]
    lines += ["## Parameters", ""]
    lines += [f"- `{k}`: {json.dumps(v)}" for k, v in probe.parameters.items()]
    lines += ["", "## Rubric", ""]
    lines += [f"{i}. {c.text}" for i, c in enumerate(probe.rubric, 1)]
    scoring = dict(probe.scoring)
    lines += ["", "## Scoring", "", f"Scorer: `{scoring.pop('type')}`"]
    if "schema" in scoring:
        if scoring.get("bare_json", True):
            lines.append("The output must be bare JSON: no code fence, no prose around it.")
        lines += ["", "```json", json.dumps(scoring["schema"], indent=2), "```"]
    else:
        lines += ["", "```json", json.dumps(scoring, indent=2), "```"]
    lines += ["", "## Worked examples", ""]
    for result in probe.check_examples():
        ex = result.example
        verdict = "must score 1" if ex.expect == "pass" else "must not score 1"
        status = "ok" if result.ok else "BROKEN"
        lines += [
            f"### {ex.label} ({verdict}; scores {result.score.value:g}, {status})",
            "",
            "```json",
            ex.output,
            "```",
            "",
        ]
    lines += ["## Version history", ""]
    lines += [f"- v{v}: {note}" for v, note in probe.history]
    lines += ["", "## Run it yourself", "", "```bash", curl_command(probe), "```", ""]
    return "\n".join(lines)
