"""Render a probe as a Markdown card with a ready-to-paste curl command."""

from __future__ import annotations

import json
import shlex

from ._model import Probe

DEFAULT_CURL_URL = "https://openrouter.ai/api/v1/chat/completions"


def request_body(probe: Probe, model: str) -> dict:
    """The exact body a model receives for this probe (chat completions, or completions for a
    completion-style probe; for a probe with cases, for its first case).

    Example:
        >>> import jevalkit
        >>> body = request_body(jevalkit.load_probe("schema-ten-records@2"), "some/model")
        >>> sorted(body)
        ['max_tokens', 'messages', 'model', 'temperature']
    """
    case = probe.cases[0] if probe.cases else None
    return {"model": model, **probe.request_input(case), **dict(probe.parameters)}


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
    if probe.prompt_style == "completion":
        url = (
            url.removesuffix("chat/completions") + "completions"
            if url.endswith("chat/completions")
            else url
        )
    return (
        f"curl {url} \\\n"
        '  -H "Authorization: Bearer $OPENROUTER_API_KEY" \\\n'
        '  -H "Content-Type: application/json" \\\n'
        f"  -d {shlex.quote(body)}"
    )


def case_lines(probe: Probe, shown: int = 5) -> list[str]:
    """The Markdown ``Cases`` section of a probe card: how many, where they come from (with the
    case file's sha256), and the first ``shown`` of them.

    Example:
        >>> import jevalkit
        >>> case_lines(jevalkit.load_probe("unit-conversion"))[2]
        '40 cases, from `cases.csv` (sha256 ...); the first 5:'
    """
    n = len(probe.cases)
    where = (
        f"from `{probe.cases_file}` (sha256 {probe.cases_sha256[:12]}...)"
        if probe.cases_file and probe.cases_sha256
        else "listed in the probe file"
    )
    lines = ["## Cases", "", f"{n} cases, {where}; the first {min(shown, n)}:", ""]
    names = list(dict.fromkeys(k for c in probe.cases[:shown] for k in c.fields))
    lines += ["| id | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for c in probe.cases[:shown]:
        cells = [_cell(c.fields.get(k, "")) for k in names]
        lines.append(f"| {_cell(c.id)} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _cell(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


def _wording(probe: Probe, variant: str | None) -> list[str]:
    if probe.prompt_style == "completion":
        return ["```text", probe.variant_prompt(variant) or "", "```", ""]
    lines = []
    for m in probe.variant_messages(variant):
        lines += [f"**{m.role}**", "", "```text", m.content, "```", ""]
    return lines


def probe_card(probe: Probe) -> str:
    """A Markdown probe card: messages, parameters, rubric, scoring, examples, history, curl.

    Example:
        >>> import jevalkit
        >>> card = probe_card(jevalkit.load_probe("schema-ten-records@2"))
        >>> card.splitlines()[0]
        '# schema-ten-records@2: Hold a schema steady across ten generated items'
    """
    completion = probe.prompt_style == "completion"
    lines = [f"# {probe.name}: {probe.title}", "", probe.description.strip(), ""]
    lines += [
        "## Prompt (completion-style, sent to /completions)" if completion else "## Messages",
        "",
    ]
    lines += _wording(probe, None)
    for v in probe.variants:
        lines += [f"### Variant `{v.id}`" + (f": {v.note}" if v.note else ""), ""]
        lines += _wording(probe, v.id)
    if probe.cases:
        lines += case_lines(probe)
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
        on = f"case `{ex.case}`; " if ex.case is not None else ""
        lines += [
            f"### {ex.label} ({on}{verdict}; scores {result.score.value:g}, {status})",
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
