"""A short Markdown report of a probe's runs: the numbers a careful reader asks for first."""

from __future__ import annotations

import json
import numbers
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ReportError, StatsError
from ..files import write_file
from ..metrics import consistency, pass_rate
from ..results import has_repeats, truncated
from ._notebook import escape_markdown, probe_names


def fenced(text: str, language: str) -> list[str]:
    """``text`` in a Markdown code fence longer than any run of backticks inside it, so model
    output can never close the fence and be rendered as Markdown or HTML.

    Example:
        >>> fenced("a ``` b", "text")
        ['````text', 'a ``` b', '````']
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence]


def _fmt_ci(low: float, high: float) -> str:
    return "n/a" if pd.isna(low) else f"[{low:.2f}, {high:.2f}]"


def headline(results: pd.DataFrame) -> list[dict[str, Any]]:
    """Headline numbers per probe version (``probe``, as ``id@version``) and system (label,
    else model): pass rate with n and CI, errors, answers cut off at ``max_tokens``
    (``truncated``), consistency across repeats. JSON-ready.

    Example:
        >>> df = pd.DataFrame({"system": ["m"] * 2, "probe": ["p"] * 2, "version": [1] * 2,
        ...                    "case_id": [None] * 2, "repeat": [0, 1], "passed": [True, False],
        ...                    "error": [None] * 2})
        >>> h = headline(df)[0]
        >>> h["probe"], h["pass_rate"], h["n"], h["truncated"]
        ('p@1', 0.5, 2, 0)
    """
    frame = results.assign(_probe=probe_names(results), _cut=truncated(results).astype(int))
    rates = pass_rate(frame, by=["_probe", "system"])
    # the probe version and system, then settings the statistic kept apart (never pooled)
    keys = list(rates.columns[: list(rates.columns).index("n")])
    cut = frame.groupby(keys, sort=False, dropna=False)["_cut"].sum()
    agree = None
    if has_repeats(frame):
        try:
            agree = consistency(frame, by=["_probe", "system"], level=None).set_index(keys)
        except StatsError:  # no case ran twice within a version or setting: no agreement
            agree = None
    out = []
    for _, row in rates.iterrows():
        key = tuple(_plain(row[k]) for k in keys)
        item = {
            "probe": key[0],
            **dict(zip(keys[1:], key[1:], strict=True)),
            "n": int(row["n"]),
            "passed": int(row["passed"]),
            "errors": int(row["n_missing"]),
            "truncated": int(cut.get(key, 0)),
            "pass_rate": float(row["value"]),
            "ci_low": float(row["ci_low"]),
            "ci_high": float(row["ci_high"]),
            "ci_method": row["method"],
        }
        if agree is not None and key in agree.index:
            item["verdict_agreement"] = float(agree.loc[key, "value"])
            item["flip_rate"] = float(agree.loc[key, "flip_rate"])
        out.append(item)
    return out


def _plain(value: Any) -> Any:
    """A table's key as JSON takes it (numpy's scalars as Python's)."""
    return value.item() if isinstance(value, np.generic) else value


FAILED_CHECK_COLUMNS = ["system", "check", "text", "failed", "judged"]
FIRST_FAILING_COLUMNS = ["system", "item", "runs"]


def _scored(results: pd.DataFrame) -> pd.DataFrame:
    """The rows the scorer could judge (a verdict and no error)."""
    return results[results["passed"].notna() & results["error"].isna()]


def failed_checks(results: pd.DataFrame) -> pd.DataFrame:
    """Per system and rubric check: how many scored runs broke it (``failed``) of those where
    the scorer could tell (``judged``; an output that does not parse cannot be judged on its
    items), in the order the checks appear.

    Example:
        >>> df = pd.DataFrame({"system": ["m", "m"], "passed": [False, True], "error": [None, None],
        ...                    "checks": [[{"id": "x", "text": "X holds", "passed": False}],
        ...                               [{"id": "x", "text": "X holds", "passed": True}]]})
        >>> failed_checks(df).values.tolist()
        [['m', 'x', 'X holds', 1, 2]]
    """
    rows = []
    for system, group in _scored(results).groupby("system"):
        failed: Counter[str] = Counter()
        judged: Counter[str] = Counter()
        texts: dict[str, str] = {}
        for checks in group["checks"]:
            for c in checks or []:
                texts[c["id"]] = c["text"]
                if c["passed"] is not None:
                    judged[c["id"]] += 1
                    failed[c["id"]] += c["passed"] is False
        rows += [(system, cid, text, failed[cid], judged[cid]) for cid, text in texts.items()]
    return pd.DataFrame(rows, columns=FAILED_CHECK_COLUMNS)


def first_failing_items(results: pd.DataFrame) -> pd.DataFrame:
    """Per system: the 0-based index of the first list item that broke the schema, and in how
    many scored runs (runs whose output did not parse, or broke no single item, have none).

    Example:
        >>> df = pd.DataFrame({"system": "m", "passed": False, "error": None,
        ...                    "first_failing_item": [9, 9, None, 3]})
        >>> first_failing_items(df).values.tolist()
        [['m', 3, 1], ['m', 9, 2]]
    """
    rows = []
    for system, group in _scored(results).groupby("system"):
        counts = group["first_failing_item"].dropna().astype(int).value_counts().sort_index()
        rows += [(system, int(i), int(c)) for i, c in counts.items()]
    return pd.DataFrame(rows, columns=FIRST_FAILING_COLUMNS)


def violations(row: Any) -> list[str]:
    """What a failing row broke, as a report shows it: the scorer's messages, led by the cut
    when the answer was cut off at ``max_tokens`` (``finish_reason`` ``length``); a parse
    failure of a cut answer is said to be the cut's ("not valid JSON" alone would blame the
    model's format for an answer that was only incomplete).

    Example:
        >>> violations({"score_errors": ["$: not valid JSON: EOF"], "finish_reason": "length",
        ...             "completion_tokens": 240})
        ["cut off at max_tokens after 240 tokens (finish_reason 'length'): raise max_tokens", 'incomplete, so not valid JSON: EOF']
        >>> violations({"score_errors": ["$[9].id: bad"], "finish_reason": "stop"})
        ['$[9].id: bad']
    """
    get = row.get
    errors = [str(e) for e in (get("score_errors") if get("score_errors") is not None else [])]
    if get("finish_reason") != "length":
        return errors
    tokens = get("completion_tokens")
    counted = isinstance(tokens, numbers.Real) and not pd.isna(tokens)  # numpy's ints too
    after = f" after {int(tokens)} tokens" if counted else ""
    lead = f"cut off at max_tokens{after} (finish_reason 'length'): raise max_tokens"
    return [
        lead,
        *(
            f"incomplete, so {e.removeprefix('$: ')}" if e.startswith("$: not valid JSON") else e
            for e in errors
        ),
    ]


def failing_outputs(results: pd.DataFrame, *, per_system: int = 1) -> pd.DataFrame:
    """The first ``per_system`` failing scored runs of each system (all their columns).

    Example:
        >>> df = pd.DataFrame({"system": ["m", "m", "m"], "passed": [True, False, False],
        ...                    "error": None, "output": ["a", "b", "c"]})
        >>> failing_outputs(df)["output"].tolist()
        ['b']
    """
    scored = _scored(results)
    return scored[scored["passed"] == False].groupby("system").head(per_system)  # noqa: E712


def probe_summary_markdown(results: pd.DataFrame, *, title: str) -> str:
    """Pass rate with n and CI, failing rubric checks, where the list first drifts, agreement of
    verdicts across repeats, and one failing output per system.

    Example:
        >>> df = pd.DataFrame({"system": ["m"], "probe": ["p"], "version": [1], "case_id": [None], "repeat": [0],
        ...                    "passed": [False], "score": [0.0], "error": [None],
        ...                    "checks": [[{"id": "x", "text": "X holds", "passed": False}]],
        ...                    "first_failing_item": [9], "score_errors": [["$[9]: bad"]],
        ...                    "output": ["[...]"], "parameters": [{"temperature": 0}]})
        >>> "| m | 1 | 0 |" in probe_summary_markdown(df, title="t")
        True
    """
    lines = [f"# {title}", ""]
    if results.empty:
        return "\n".join([*lines, "Not yet run: no results, so no numbers.", ""])
    names = probe_names(results)
    versions = list(dict.fromkeys(names))
    if len(versions) == 1:
        return "\n".join([*lines, *_summary_body(results, "##")]) + "\n"
    lines += [
        "## Pass rate by probe version",
        "",
        "The same systems scored by each version's scorer (one column per version).",
        "",
        "| system | " + " | ".join(escape_markdown(v) for v in versions) + " |",
        "|---|" + "---|" * len(versions),
    ]
    rates = {(h["probe"], h["system"]): h for h in headline(results)}
    for system in dict.fromkeys(results["system"]):
        cells = [
            f"{rates[(v, system)]['passed']}/{rates[(v, system)]['n']} "
            f"({rates[(v, system)]['pass_rate']:.2f})"
            if (v, system) in rates
            else "not run"
            for v in versions
        ]
        lines.append(f"| {escape_markdown(system)} | " + " | ".join(cells) + " |")
    for version in versions:
        lines += ["", f"## {escape_markdown(version)}", ""]
        lines += _summary_body(results[names == version], "###")
    return "\n".join(lines) + "\n"


def _summary_body(results: pd.DataFrame, level: str) -> list[str]:
    """The sections of :func:`probe_summary_markdown` for one probe version's rows, their
    headings at ``level``."""
    frame = results.assign(_unscored=results["passed"].isna() | results["error"].notna())
    lines = [
        f"{level} Pass rate",
        "",
        "| system | n | passed | errors | cut off at max_tokens | pass rate | 95% CI | interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    heads = headline(frame)
    for h in heads:
        lines.append(
            f"| {escape_markdown(h['system'])} | {h['n']} | {h['passed']} | {h['errors']} | "
            f"{h['truncated']} | {h['pass_rate']:.2f} | {_fmt_ci(h['ci_low'], h['ci_high'])} | "
            f"{h['ci_method']} |"
        )
    if any(h["truncated"] for h in heads):
        lines += [
            "",
            "Answers cut off at max_tokens (finish_reason `length`) are incomplete: a cut "
            "answer fails whatever the model would have written next (a JSON answer cut short "
            "is never valid JSON); raise max_tokens to judge its format.",
        ]
    if any("verdict_agreement" in h for h in heads):
        lines += [
            "",
            f"{level} Agreement across repeats",
            "",
            "| system | modal verdict share | cases whose verdict flipped |",
            "|---|---|---|",
        ]
        for h in heads:
            if "verdict_agreement" in h:
                lines.append(
                    f"| {escape_markdown(h['system'])} | {h['verdict_agreement']:.2f} | {h['flip_rate']:.0%} |"
                )
    lines += [
        "",
        f"{level} Rubric checks that failed",
        "",
        "| system | check | failed | of runs that could be judged |",
        "|---|---|---|---|",
    ]
    for row in failed_checks(results).itertuples():
        lines.append(
            f"| {escape_markdown(row.system)} | {escape_markdown(row.text)} | "
            f"{row.failed} | {row.judged} |"
        )
    lines += [
        "",
        f"{level} Where the list first drifts",
        "",
        "0-based index of the first item that breaks the schema (empty when the output did "
        "not parse or no single item broke it).",
        "",
        "| system | first failing item: runs |",
        "|---|---|",
    ]
    items = first_failing_items(results)
    for system in sorted(set(_scored(results)["system"])):
        mine = items[items["system"] == system]
        cells = ", ".join(f"item {r.item}: {r.runs}" for r in mine.itertuples()) or "none"
        lines.append(f"| {escape_markdown(system)} | {cells} |")
    lines += ["", f"{level} A failing output per system", ""]
    for _, row in failing_outputs(results).iterrows():
        system = row["system"]
        said = "; ".join(escape_markdown(e) for e in violations(row)[:5]) or "none recorded"
        lines += [
            f"**{escape_markdown(system)}**, repeat {row.get('repeat')}, parameters",
            *fenced(json.dumps(row["parameters"], sort_keys=True), "json"),
            "",
            *fenced(str(row["output"])[:600], "text"),
            "",
            f"Violations: {said}",
            "",
        ]
    return lines


def write_probe_summary(results: pd.DataFrame, out_dir: Path, *, title: str) -> tuple[Path, Path]:
    """Write ``probe_summary.md`` and ``headline.json`` into ``out_dir``; return both paths."""
    report = out_dir / "probe_summary.md"
    write_file(report, probe_summary_markdown(results, title=title), ReportError, what="summary")
    numbers = out_dir / "headline.json"
    write_file(numbers, json.dumps(headline(results), indent=2), ReportError, what="headline")
    return report, numbers
