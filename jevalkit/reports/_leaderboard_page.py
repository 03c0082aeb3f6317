"""A self-contained HTML leaderboard: scores with intervals, and each system's simultaneous rank
interval drawn as a bar over the ranks, tie classes shaded alike; for a race
(:class:`jevalkit.metrics.RaceOutcome`), what it certified and when each system was settled.
Every name is escaped."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

from ..errors import ReportError
from ..metrics import Leaderboard, RaceOutcome
from ._html import interval_svg, write_page

_CSS = """body{font:14px/1.45 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left}
tr.c0{background:#fff}tr.c1{background:#f3f6fb}.first{font-weight:600}"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def rank_svg(low: int, high: int, rank: int, n: int) -> str:
    """A bar over ranks 1..n from ``low`` to ``high`` with a dot at ``rank``.

    Example:
        >>> rank_svg(1, 3, 2, 5).count("<rect")
        1
    """
    width, height, pad = 240, 18, 6
    step = (width - 2 * pad) / max(n - 1, 1)

    def x(r: float) -> float:
        return pad + (r - 1) * step

    return (
        f"<svg width='{width}' height='{height}' role='img' aria-label='ranks {low} to {high}'>"
        f"<line x1='{pad}' y1='9' x2='{width - pad}' y2='9' stroke='#ddd'/>"
        f"<rect x='{x(low) - 4:.1f}' y='4' width='{x(high) - x(low) + 8:.1f}' height='10' "
        f"rx='5' fill='#9bb8d9'/><circle cx='{x(rank):.1f}' cy='9' r='4' fill='#2c6fbb'/></svg>"
    )


def race_svg(answered: int, drawn: int, settled: bool) -> str:
    """A bar of the cases a system answered out of those the race drew, ending in a dot when
    it was settled there (a ring: still open).

    Example:
        >>> race_svg(20, 80, True).count("<circle")
        1
    """
    width, height, pad = 240, 18, 6
    end = pad + (width - 2 * pad) * (answered / drawn if drawn else 0.0)
    mark = (
        f"<circle cx='{end:.1f}' cy='9' r='4' fill='#2c6fbb'/>"
        if settled
        else f"<circle cx='{end:.1f}' cy='9' r='4' fill='#fff' stroke='#2c6fbb'/>"
    )
    return (
        f"<svg width='{width}' height='{height}' role='img' aria-label='{answered} of {drawn} "
        f"cases'><line x1='{pad}' y1='9' x2='{width - pad}' y2='9' stroke='#ddd'/>"
        f"<line x1='{pad}' y1='9' x2='{end:.1f}' y2='9' stroke='#9bb8d9' stroke-width='6'/>"
        f"{mark}</svg>"
    )


def _race_page(race: RaceOutcome, title: str) -> str:
    table = race.table()
    n = len(table)
    rows = []
    for r in table.to_dict("records"):
        settled = r["settled_wave"] is not None and not pd.isna(r["settled_wave"])
        when = (
            f"wave {int(r['settled_wave'])} ({int(r['settled_cases'])} cases)"
            if settled
            else "open"
        )
        rows.append(
            f"<tr class='c{int(not settled)}'><td>{_e(r['system'])}</td><td>{_e(r['status'])}</td>"
            f"<td>{int(r['rank_low'])}-{int(r['rank_high'])}</td>"
            f"<td>{rank_svg(int(r['rank_low']), int(r['rank_high']), int(r['rank_low']), n)}</td>"
            f"<td>{when}</td><td>{race_svg(int(r['n_cases']), race.cases_drawn, settled)}</td>"
            f"<td>{int(r['n_cases'])}</td><td>{int(r['n_errors'])}</td>"
            f"<td>{_num(r['value'])}</td></tr>"
        )
    answer = ", ".join(_e(s) for s in race.answer)
    said = (
        f"Certified ({race.confidence:.0%}, every statement together): <b>{_e(race.target)} = "
        f"{answer}</b>."
        if race.certified
        else f"Not certified ({_e(race.stop_reason)}): the open systems are still apart by less "
        "than the intervals."
    )
    share = race.n_requests / race.n_uniform if race.n_uniform else float("nan")
    parts = [
        f"<h1>{_e(title)}</h1>",
        f"<p>A race of {n} systems ({_e(race.target)}). {said} It sent {race.n_requests} "
        f"requests, {share:.0%} of the {race.n_uniform} that evaluating every case on every "
        f"system takes; {race.cases_drawn} of {race.n_cases} cases drawn in {race.waves} "
        "wave(s). Each bar shows the cases a system answered before it was settled (a ring: "
        "still open when the race stopped).</p>",
        "<table><tr><th>system</th><th>status</th><th>rank interval</th><th></th>"
        "<th>settled at</th><th>cases answered</th><th></th><th>errors</th>"
        "<th>mean score (its cases)</th></tr>",
        *rows,
        "</table>",
        f"<p><small>{_e(race.method)}</small></p>",
    ]
    head = f"<meta charset=utf-8><title>{_e(title)}</title><style>{_CSS}</style>"
    return f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>\n"


def leaderboard_page(board: Leaderboard | RaceOutcome, *, title: str = "Leaderboard") -> str:
    """The page for :func:`jevalkit.metrics.leaderboard`'s result, or for a race's outcome
    (:class:`jevalkit.metrics.RaceOutcome`: what it certified, and when each system was
    settled).

    Example:
        >>> from jevalkit.items import simulate_2pl
        >>> from jevalkit.metrics import leaderboard
        >>> df = simulate_2pl(n_systems=3, n_items=60, seed=0).rows
        >>> df["system"] = "<script>" + df["system"]
        >>> page = leaderboard_page(leaderboard(df, case="case_id", n_resamples=200))
        >>> "<script>sys" in page, "&lt;script&gt;sys" in page
        (False, True)
    """
    if isinstance(board, RaceOutcome):
        return _race_page(board, title)
    if not isinstance(board, Leaderboard):
        raise ReportError(
            f"not a leaderboard: give jevalkit.metrics.leaderboard's result or a race's "
            f"outcome, not a {type(board).__name__}"
        )
    table = board.board
    n = len(table)
    pairwise = board.kind == "pairwise"
    lo, hi = (
        (0.0, 1.0)
        if not pairwise
        else (float(table["ci_low"].min()) - 10, float(table["ci_high"].max()) + 10)
    )
    rows = []
    for r in table.to_dict("records"):
        bounds = (
            ""
            if pairwise
            else f"<td>{_num(r['value_worst'])} to {_num(r['value_best'])} "
            f"({int(r['n_missing'])} missing)</td>"
        )
        digits = 0 if pairwise else 3
        rows.append(
            f"<tr class='c{int(r['tie_class']) % 2}'><td>{int(r['rank'])}</td>"
            f"<td class='{'first' if r['could_be_first'] else ''}'>{_e(r['system'])}</td>"
            f"<td>{_num(r['value'], digits)} [{_num(r['ci_low'], digits)}, {_num(r['ci_high'], digits)}]</td>"
            f"<td>{interval_svg(r['value'], r['ci_low'], r['ci_high'], lo=lo, hi=hi)}</td>"
            f"<td>{int(r['rank_low'])}-{int(r['rank_high'])}</td>"
            f"<td>{rank_svg(int(r['rank_low']), int(r['rank_high']), int(r['rank']), n)}</td>"
            f"<td>{int(r['tie_class'])}</td><td>{int(r['n'])}</td>{bounds}</tr>"
        )
    level = board.confidence
    first = ", ".join(_e(s) for s in board.could_be_first)
    snr = board.signal_to_noise
    method = _e(table["method"].iloc[0]) if n else ""
    parts = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{n} systems; could be first: <b>{first}</b>. Signal-to-noise (spread of the "
        f"scores over their standard errors): {_num(snr, 2)}. Rank intervals hold for all "
        f"systems together with {level:.0%} confidence; rows shaded alike share a tie class.</p>",
        "<table><tr><th>rank</th><th>system</th><th>"
        + ("rating" if pairwise else "score")
        + f" [{level:.0%} CI]</th><th></th><th>rank interval</th><th></th><th>tie class</th>"
        + ("<th>games</th>" if pairwise else "<th>cases</th><th>worst to best if missing</th>")
        + "</tr>",
        *rows,
        "</table>",
        f"<p><small>{method}</small></p>",
    ]
    head = f"<meta charset=utf-8><title>{_e(title)}</title><style>{_CSS}</style>"
    return f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>\n"


def write_leaderboard_page(
    board: Leaderboard | RaceOutcome, out: str | Path, *, title: str = "Leaderboard"
) -> Path:
    """Write :func:`leaderboard_page` to ``out``; return the path.

    Example:
        >>> import tempfile
        >>> from jevalkit.items import simulate_2pl
        >>> from jevalkit.metrics import leaderboard
        >>> df = simulate_2pl(n_systems=2, n_items=40, seed=0).rows
        >>> path = write_leaderboard_page(leaderboard(df, case="case_id", n_resamples=200),
        ...                               Path(tempfile.mkdtemp()) / "board.html")
        >>> path.read_text().count("<svg")
        4
    """
    return write_page(leaderboard_page(board, title=title), out)
