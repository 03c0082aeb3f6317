"""Small HTML pieces shared by reports and widgets; every value from results is escaped."""

from __future__ import annotations

import difflib
import html
import math
from collections.abc import Sequence
from pathlib import Path

from ..errors import ReportError
from ..files import write_file
from ..judges import expected_level

__all__ = [
    "distribution_html",
    "highlight_differences",
    "interval_svg",
    "write_page",
]


def write_page(page: str, out: str | Path, *, option: str = "--html", what: str = "page") -> Path:
    """Write a page to ``out`` (its folder made as needed); return the path. A folder or an
    unwritable place is a :class:`ReportError` naming it (and the ``option`` that set it).

    Example:
        >>> import tempfile
        >>> write_page("<p>hi</p>", Path(tempfile.mkdtemp()) / "p.html").read_text()
        '<p>hi</p>'
    """
    path = Path(out)
    if path.is_dir():
        raise ReportError(f"{path} is a folder; give {option} a file name such as page.html")
    return write_file(path, page, ReportError, what=what)


def _numbering(levels: Sequence[str]) -> str:
    """How :func:`jevalkit.judges.expected_level` numbers ``levels``, for a display: empty when
    the labels are those numbers already.

    Example:
        >>> _numbering(["1", "2", "3", "4", "5"]), _numbering(["0", "1", "2"])
        (" (levels numbered 0 = '1' ... 4 = '5')", '')
    """
    if not levels or [str(x) for x in levels] == [str(i) for i in range(len(levels))]:
        return ""
    return f" (levels numbered 0 = {levels[0]!r} ... {len(levels) - 1} = {levels[-1]!r})"


def distribution_html(
    levels: Sequence[str],
    probs: Sequence[float],
    *,
    level_set: Sequence[int] | None = None,
    coverage: float | None = None,
) -> str:
    """Static HTML bars over a judgment's levels, marking the integer verdict and the expected
    level (:func:`jevalkit.judges.expected_level`, the judge's own definition; how the levels
    are numbered is said when their labels are not 0, 1, ...), with the score it gives (also
    the fallback when no widget frontend is present). With ``level_set`` (level indexes, e.g. a
    :func:`jevalkit.stats.level_sets` set) its levels are outlined and named, with the
    ``coverage`` the set was made for.

    Example:
        >>> "expected level 3.21 · score 0.80" in distribution_html(list("01234"), [0.02, 0.05, 0.13, 0.30, 0.50])
        True
        >>> "numbered 0 = &#x27;1&#x27; ... 4" in distribution_html(list("12345"), [0.02, 0.05, 0.13, 0.30, 0.50])
        True
        >>> "90% level set: <b>3</b> to <b>4</b>" in distribution_html(list("01234"), [0.02, 0.05, 0.13, 0.30, 0.50], level_set=[3, 4], coverage=0.9)
        True
    """
    expected = expected_level(probs)
    verdict = max(range(len(probs)), key=lambda i: (probs[i], -i)) if probs else -1
    in_set = set(level_set or ())
    rows = []
    for i, (label, p) in enumerate(zip(levels, probs, strict=True)):
        colour = "#2c6fbb" if i == verdict else "#9bb8d9"
        ring = ";outline:2px solid #e07b00;outline-offset:1px" if i in in_set else ""
        rows.append(
            f"<div class='jevalkit-bar-row' style='display:flex;align-items:center;gap:.5em;margin:2px 0'>"
            f"<span style='width:4em;text-align:right'>{html.escape(str(label))}</span>"
            f"<span class='jevalkit-bar' data-level='{i}' style='display:inline-block;height:1.1em;"
            f"width:{max(p, 0) * 20:.2f}em;background:{colour}{ring}'></span><span>{p:.0%}</span></div>"
        )
    score = f" · score {expected / (len(probs) - 1):.2f}" if len(probs) > 1 else ""
    marker = (
        f"<div style='margin-top:.4em'>integer verdict <b>{html.escape(str(levels[verdict]))}</b> · "
        f"expected level {expected:.2f}{score}{html.escape(_numbering(levels))}</div>"
        if probs
        else ""
    )
    if level_set:
        low, high = min(in_set), max(in_set)
        span = (
            f"<b>{html.escape(str(levels[low]))}</b>"
            if low == high
            else f"<b>{html.escape(str(levels[low]))}</b> to <b>{html.escape(str(levels[high]))}</b>"
        )
        asked = f"{coverage:.0%} " if coverage is not None else ""
        marker += (
            f"<div class='jevalkit-level-set' style='margin-top:.2em'>{asked}level set: {span} "
            f"({len(in_set)} of {len(levels)} levels; outlined)</div>"
        )
    return f"<div class='jevalkit-level-distribution'>{''.join(rows)}{marker}</div>"


def highlight_differences(a: str, b: str) -> tuple[str, str]:
    """Both texts as escaped HTML, with the spans that differ marked (``<del>`` in ``a``,
    ``<ins>`` in ``b``), word by word.

    Example:
        >>> highlight_differences("the cat sat", "the dog sat")
        ('the <del>cat</del> sat', 'the <ins>dog</ins> sat')
        >>> highlight_differences("<b>", "<i>")[1]
        '<ins>&lt;i&gt;</ins>'
    """
    left, right = a.split(" "), b.split(" ")
    out_a, out_b = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, left, right, autojunk=False
    ).get_opcodes():
        chunk_a = html.escape(" ".join(left[i1:i2]))
        chunk_b = html.escape(" ".join(right[j1:j2]))
        if op == "equal":
            out_a.append(chunk_a)
            out_b.append(chunk_b)
            continue
        if chunk_a:
            out_a.append(f"<del>{chunk_a}</del>")
        if chunk_b:
            out_b.append(f"<ins>{chunk_b}</ins>")
    return " ".join(out_a), " ".join(out_b)


def interval_svg(
    value: float, low: float, high: float, *, lo: float = -1.0, hi: float = 1.0
) -> str:
    """A small inline SVG of a point with its interval on [lo, hi], a line at zero.

    Example:
        >>> interval_svg(0.1, -0.05, 0.2).startswith("<svg")
        True
    """
    width, height = 220, 18

    def x(v: float) -> float:
        v = lo if not math.isfinite(v) else min(max(v, lo), hi)
        return 5 + (v - lo) / (hi - lo) * (width - 10)

    parts = [f"<line x1='{x(0):.1f}' y1='0' x2='{x(0):.1f}' y2='{height}' stroke='#aaa'/>"]
    if math.isfinite(low) and math.isfinite(high):
        parts.append(
            f"<line x1='{x(low):.1f}' y1='9' x2='{x(high):.1f}' y2='9' stroke='#2c6fbb' stroke-width='2'/>"
        )
    if math.isfinite(value):
        parts.append(f"<circle cx='{x(value):.1f}' cy='9' r='4' fill='#2c6fbb'/>")
    return f"<svg width='{width}' height='{height}' role='img'>{''.join(parts)}</svg>"
