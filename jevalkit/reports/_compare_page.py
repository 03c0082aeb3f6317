"""A self-contained HTML diff page of a comparison: the table with intervals drawn, then every
changed case, its two outputs side by side with the differing spans marked."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

from ._html import distribution_html, highlight_differences, interval_svg, write_page

_CSS = """body{font:14px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.5rem;margin:0;max-height:24em;overflow:auto}
del{background:#fdd;text-decoration:none}ins{background:#dfd;text-decoration:none}
.regressed{color:#a1121a}.improved{color:#176b2c}.unstable{color:#8a6d00}"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(value: object, digits: int = 3) -> str:
    return (
        ""
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _case_details(r: dict) -> str:
    """The case's input and target, and every repeat's output of both sides (escaped)."""
    parts = []
    for field in ("input", "target"):
        if not _missing(r.get(field)):
            parts.append(f"<p><b>{field}</b></p><pre>{_e(r[field])}</pre>")
    for side, name in (("a", "baseline"), ("b", "system")):
        outputs = r.get(f"outputs_{side}")
        if isinstance(outputs, list) and len(outputs) > 1:
            items = "".join(f"<li><pre>{_e('' if o is None else o)}</pre></li>" for o in outputs)
            parts.append(
                f"<details><summary>{name}: all {len(outputs)} repeats</summary><ol start=0>{items}</ol></details>"
            )
    return "".join(parts)


def compare_page(table: pd.DataFrame, changes: pd.DataFrame, *, title: str = "Comparison") -> str:
    """The page (see the module docstring); every value from results is escaped.

    Example:
        >>> t = pd.DataFrame({"system": ["<b>"], "baseline": ["a"], "metric": ["pass_rate"], "n_paired": [3],
        ...                   "value": [0.5], "value_baseline": [0.4], "delta": [0.1], "ci_low": [-0.1],
        ...                   "ci_high": [0.3], "p_value": [0.5], "p_holm": [0.5], "p_bh": [0.5]})
        >>> page = compare_page(t, pd.DataFrame())
        >>> "<b>" in page, "&lt;b&gt;" in page
        (False, True)
    """
    rows = []
    for r in table.to_dict("records"):
        rows.append(
            f"<tr><td>{_e(r.get('system'))}</td><td>{_e(r.get('baseline'))}</td><td>{_e(r.get('metric'))}</td>"
            f"<td>{r.get('n_paired')}</td><td>{_num(r.get('value_baseline'))} → {_num(r.get('value'))}</td>"
            f"<td>{_num(r.get('delta'))} [{_num(r.get('ci_low'))}, {_num(r.get('ci_high'))}]</td>"
            f"<td>{interval_svg(r.get('delta', float('nan')), r.get('ci_low', float('nan')), r.get('ci_high', float('nan')))}</td>"
            f"<td>{_num(r.get('p_value'))}</td><td>{_num(r.get('p_holm'))}</td><td>{_num(r.get('p_bh'))}</td></tr>"
        )
    parts = [
        f"<h1>{_e(title)}</h1>",
        "<h2>Paired differences (95% intervals)</h2>",
        "<table><tr><th>system</th><th>baseline</th><th>metric</th><th>n paired</th><th>baseline → system</th>"
        "<th>delta [CI]</th><th></th><th>p</th><th>p (Holm)</th><th>p (BH)</th></tr>",
        *rows,
        "</table>",
        f"<h2>Changed cases ({len(changes)})</h2>",
    ]
    if changes.empty:
        parts.append("<p>No case changed its verdict.</p>")
    # case_changes documents its table as the case columns, then status, ...
    columns = list(changes.columns)
    case_cols = columns[: columns.index("status")] if "status" in columns else []
    for r in changes.to_dict("records"):
        case = ", ".join(f"{c} {_e(r[c])}" for c in case_cols if not _missing(r[c]))
        a, b = highlight_differences(str(r.get("output_a") or ""), str(r.get("output_b") or ""))
        dists = ["", ""]
        for i, side in enumerate("ab"):
            probs = r.get(f"probs_{side}")
            if isinstance(probs, list | tuple) and probs:
                dists[i] = distribution_html([str(j) for j in range(len(probs))], list(probs))
        status = _e(r.get("status"))
        parts.append(
            f"<h3 class='{status}'>{status}: {case}</h3><table><tr>"
            f"<th>baseline: verdict {_e(r.get('verdict_a'))}, agreement {_num(r.get('agreement_a'), 2)}, "
            f"score {_num(r.get('score_a'))}</th><th>system: verdict {_e(r.get('verdict_b'))}, agreement "
            f"{_num(r.get('agreement_b'), 2)}, score {_num(r.get('score_b'))}</th></tr>"
            f"<tr><td><pre>{a}</pre>{dists[0]}</td><td><pre>{b}</pre>{dists[1]}</td></tr></table>"
            + _case_details(r)
        )
    head = f"<meta charset=utf-8><title>{_e(title)}</title><style>{_CSS}</style>"
    return f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>\n"


def write_compare_page(
    table: pd.DataFrame, changes: pd.DataFrame, out: str | Path, *, title: str = "Comparison"
) -> Path:
    """Write :func:`compare_page` to ``out``; return the path."""
    return write_page(compare_page(table, changes, title=title), out)
