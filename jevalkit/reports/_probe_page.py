"""A self-contained HTML page for one probe version, as a public probe page shows it."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..errors import ReportError
from ..metrics import pass_rate, per_case
from ..probes import Probe, curl_command
from ..results import read_results
from ._html import write_page
from ._probe_summary import headline

_CSS = """body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f6f6f6;padding:.8rem;overflow:auto;white-space:pre-wrap}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}.ok{color:#176b2c}.bad{color:#a1121a}
.muted{color:#666}"""


def _e(text: object) -> str:
    return html.escape(str(text))


def json_for_script(value: object) -> str:
    r"""JSON safe inside an HTML ``<script>`` element: ``<``, ``>`` and ``&`` are written as
    ``\u`` escapes, so no ``</script>`` or ``<!--`` in a value can end or blank the element.

    Example:
        >>> json_for_script({"name": "<!--<script>"})
        '{"name": "\\u003c!--\\u003cscript\\u003e"}'
    """
    text = json.dumps(value, indent=None, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_probe_page(probe: Probe, results: Sequence[str | Path], out: str | Path) -> Path:
    """Write :func:`probe_page` to ``out`` (its folder is created when missing); return the path.

    Raises:
        ReportError: ``out`` is a folder, or cannot be written.
    """
    if Path(out).is_dir():  # refuse before the work
        raise ReportError(f"{out} is a folder; give --out a file name such as page.html")
    return write_page(probe_page(probe, results), out, option="--out", what="probe page")


def _rows_of(probe_id: str, results: Sequence[str | Path]) -> pd.DataFrame:
    frames = [read_results(p) for p in results]
    if not frames:
        return pd.DataFrame(columns=["probe", "version"])
    df = pd.concat(frames, ignore_index=True)
    return df[df["probe"] == probe_id].reset_index(drop=True)


def probe_runs(probe: Probe, results: Sequence[str | Path]) -> pd.DataFrame:
    """The rows of ``results`` files that ran this probe version (empty when none did)."""
    df = _rows_of(probe.id, results)
    return df[df["version"] == probe.version].reset_index(drop=True)


def versions_run(probe: Probe, results: Sequence[str | Path]) -> dict[str, int]:
    """``id@version`` -> rows, for every version of ``probe`` that ``results`` ran (so a page of
    one version can say which versions the files hold instead of only "Not yet run").

    Example:
        >>> import jevalkit
        >>> from jevalkit.reports import open_results
        >>> _, demo = open_results(None, default="schema-ten-records__local-demo.jsonl")
        >>> versions_run(jevalkit.load_probe("schema-ten-records@3"), [demo])
        {'schema-ten-records@2': 15}
    """
    counts = _rows_of(probe.id, results)["version"].value_counts().sort_index()
    return {f"{probe.id}@{int(v)}": int(n) for v, n in counts.items()}


_TECHNIQUE = {
    "json_schema": "JSON Schema draft 2020-12, bare JSON required",
    "exact_match": "exact match against the expected text",
    "levenshtein": "normalised Levenshtein similarity to the expected text",
    "json_similarity": "structural JSON similarity to the expected value",
    "constraints": "deterministic checks of instruction-following constraints",
}


def dataset_jsonld(probe: Probe, runs: pd.DataFrame) -> dict:
    """schema.org Dataset describing real runs of the probe (only ever built from real rows).

    Example:
        >>> import jevalkit
        >>> p = jevalkit.load_probe("schema-ten-records@2")
        >>> runs = pd.DataFrame({"model": ["m"], "finished_at": ["2026-11-30T09:48:00+00:00"]})
        >>> dataset_jsonld(p, runs)["@type"]
        'Dataset'
    """
    return {
        "@context": "https://schema.org",
        "@type": "Dataset",
        "name": f"{probe.name} results: {probe.title}",
        "description": probe.description,
        "version": str(probe.version),
        "identifier": f"sha256:{probe.content_hash}",
        "variableMeasured": f"pass rate ({probe.scoring['type']} scorer)",
        "measurementTechnique": _TECHNIQUE.get(probe.scoring["type"], probe.scoring["type"]),
        "temporalCoverage": f"{runs['finished_at'].min()}/{runs['finished_at'].max()}",
        "size": f"{len(runs)} runs",
        "about": sorted({str(m) for m in runs["model"]}),
    }


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_fmt(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "–" if value != value else f"{value:.2f}"
    if isinstance(value, str):
        return value if len(value) <= 120 else value[:117] + "..."
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)


def _cases_section(probe: Probe, shown: int = 10) -> list[str]:
    where = (
        f"from <code>{_e(probe.cases_file)}</code> (sha256 {_e(probe.cases_sha256[:16])}…, "
        "part of the locked version)"
        if probe.cases_file and probe.cases_sha256
        else "listed in the probe file"
    )
    rows = [{"id": c.id, **dict(c.fields)} for c in probe.cases[:shown]]
    return [
        f"<h2>Cases</h2><p>{len(probe.cases)} cases, {where}; the first {len(rows)}:</p>",
        _table(pd.DataFrame(rows).fillna("")),
    ]


def _variant_results(runs: pd.DataFrame) -> list[str]:
    if runs["variant"].isna().all():
        return []
    rates = pass_rate(runs[runs["variant"].notna()], by=["system", "variant"])
    keys = list(rates.columns[: list(rates.columns).index("n")])  # with settings kept apart
    shown = rates[[*keys, "n", "n_cases", "value", "ci_low", "ci_high"]]
    return ["<h3>By prompt variant</h3>", _table(shown.rename(columns={"value": "pass rate"}))]


def _subset_note(runs: pd.DataFrame) -> list[str]:
    """Say which systems ran only part of the cases (the rows' ``subset``): their numbers
    describe those cases, not the probe's."""
    if "subset" not in runs or runs["subset"].isna().all():
        return []
    items = "".join(
        f"<li>{_e(system)}: {_e('; '.join(sorted(set(group['subset'].dropna()))))}"
        + ("" if group["subset"].notna().all() else " (and rows of all cases)")
        + "</li>"
        for system, group in runs.groupby("system", sort=True)
        if group["subset"].notna().any()
    )
    return [
        "<p><strong>A subset of the cases.</strong> These runs did not cover every case; their "
        f"numbers describe the cases run, not the whole probe:</p><ul>{items}</ul>"
    ]


def _case_results(runs: pd.DataFrame, shown: int = 15) -> list[str]:
    if runs["case_id"].isna().all():
        return []
    table = per_case(runs, by="system")
    # a version or setting kept apart is shown beside the system (its cases are other cases)
    apart = [c for c in ("version", "params_hash") if c in table and table[c].nunique() > 1]
    columns = ["system", *apart, "case_id", "n", "n_missing", "passed", "pass_rate"]
    return [
        f"<h3>Per case, worst first</h3><p>{table['case_id'].nunique()} cases; the "
        f"{min(shown, len(table))} with the lowest pass rate over their repeats.</p>",
        _table(table[columns].head(shown)),
    ]


def probe_page(probe: Probe, results: Sequence[str | Path] = ()) -> str:
    """The page: what it measures, the exact messages, parameters, rubric, scoring schema, worked
    examples with their real scores, version history, how to run it, and results. Without real
    runs the results section says "Not yet run" and there is no Dataset JSON-LD.

    Example:
        >>> import jevalkit
        >>> page = probe_page(jevalkit.load_probe("schema-ten-records@2"))
        >>> "Not yet run" in page, "application/ld+json" in page
        (True, False)
    """
    runs = probe_runs(probe, results)
    parts = [
        f"<h1>{_e(probe.title)}</h1>",
        f"<p class=muted>{_e(probe.name)} · sha256 {probe.content_hash[:16]}…</p>",
        f"<p>{_e(probe.description)}</p>",
        "<h2>Results</h2>",
    ]
    others = versions_run(probe, results) if runs.empty and results else {}
    if others:
        held = ", ".join(f"<code>{_e(name)}</code> ({n} rows)" for name, n in others.items())
        parts.append(
            f"<p><strong>Not yet run.</strong> The results given hold no rows of "
            f"<code>{_e(probe.name)}</code>; they hold {held}. Make the page of the version "
            "they ran (<code>jevalkit probes page ID@N --results ...</code>). This page carries "
            "no Dataset structured data.</p>"
        )
    elif runs.empty:
        parts.append(
            "<p><strong>Not yet run.</strong> No model has been run against this version, so there "
            "are no numbers to show, and this page carries no Dataset structured data.</p>"
        )
    else:
        parts.append(
            "<table><tr><th>model</th><th>n</th><th>passed</th><th>pass rate</th><th>95% CI</th></tr>"
        )
        for h in headline(runs):
            parts.append(
                f"<tr><td>{_e(h['system'])}</td><td>{h['n']}</td><td>{h['passed']}</td>"
                f"<td>{h['pass_rate']:.2f}</td><td>{h['ci_low']:.2f}–{h['ci_high']:.2f}</td></tr>"
            )
        parts.append("</table>")
        parts += _subset_note(runs) + _variant_results(runs) + _case_results(runs)
    if probe.cases:
        parts.append(
            "<h2>Prompt</h2><p>Exactly what every model receives, with each case's fields filled "
            "into the <code>{{field}}</code> placeholders. Nothing else is sent.</p>"
        )
    else:
        parts.append(
            "<h2>Prompt</h2><p>Exactly what every model receives. Nothing else is sent.</p>"
        )
    if probe.prompt_style == "completion":
        parts.append("<p>A completion-style prompt (sent to <code>/completions</code>).</p>")
    for m in probe.messages:
        parts.append(f"<h3>{_e(m.role)}</h3><pre>{_e(m.content)}</pre>")
    if probe.prompt is not None:
        parts.append(f"<pre>{_e(probe.prompt)}</pre>")
    for v in probe.variants:
        parts.append(f"<h3>Variant <code>{_e(v.id)}</code></h3><p>{_e(v.note)}</p>")
        for m in v.messages:
            parts.append(f"<h4>{_e(m.role)}</h4><pre>{_e(m.content)}</pre>")
        if v.prompt is not None:
            parts.append(f"<pre>{_e(v.prompt)}</pre>")
    if probe.cases:
        parts += _cases_section(probe)
    parts.append(
        "<h2>Parameters</h2><ul>"
        + "".join(
            f"<li><code>{_e(k)}</code>: {_e(json.dumps(v))}</li>"
            for k, v in probe.parameters.items()
        )
        + "</ul>"
    )
    parts.append(
        "<h2>Rubric</h2><ol>" + "".join(f"<li>{_e(c.text)}</li>" for c in probe.rubric) + "</ol>"
    )
    parts.append(
        f"<h2>Scoring</h2><p>Scorer: <code>{_e(probe.scoring['type'])}</code>. Deterministic.</p>"
    )
    if "schema" in probe.scoring:
        parts.append(f"<pre>{_e(json.dumps(probe.scoring['schema'], indent=2))}</pre>")
    parts.append("<h2>Worked examples</h2><p>Run through the real scorer on every build.</p>")
    for r in probe.check_examples():
        cls = "ok" if r.ok else "bad"
        want = "must score 1" if r.example.expect == "pass" else "must not score 1"
        if r.example.case is not None:
            want = f"case {r.example.case}; {want}"
        parts.append(
            f"<h3>{_e(r.example.label)} <span class={cls}>({_e(want)}; scores {r.score.value:g})</span></h3>"
            f"<pre>{_e(r.example.output)}</pre>"
        )
    parts.append(
        "<h2>Version history</h2><ul>"
        + "".join(f"<li>v{v}: {_e(note)}</li>" for v, note in probe.history)
        + "</ul>"
    )
    parts.append(
        f"<h2>Run it yourself</h2><pre>{_e(curl_command(probe))}</pre>"
        f"<pre>jevalkit run {_e(probe.name)} --model MODEL --repeats 5</pre>"
    )
    head = f"<meta charset=utf-8><title>{_e(probe.name)}: {_e(probe.title)}</title><style>{_CSS}</style>"
    if not runs.empty:
        ld = json_for_script(dataset_jsonld(probe, runs))
        head += f'<script type="application/ld+json">{ld}</script>'
    return f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>\n"
