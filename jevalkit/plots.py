"""Shared matplotlib style and plots: every axis labelled, n in every title, CIs drawn as intervals."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

__all__ = [
    "STYLE",
    "agreement_curves",
    "histogram",
    "interval_plot",
    "item_map",
    "line_plot",
    "race_plot",
    "rank_interval_plot",
]

STYLE: dict[RcKeyType, Any] = {
    "figure.figsize": (7, 3.6),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
}


@contextmanager
def _styled() -> Iterator[None]:
    """Apply :data:`STYLE` and restore only its keys afterwards. ``plt.rc_context`` restores every
    rcParam, ``interactive`` too: when the first figure of a Jupyter kernel resolves the inline
    backend (which switches interactive mode on) inside it, leaving the context switched
    interactive mode off again, and no later figure of the kernel was ever shown."""
    saved = {key: plt.rcParams[key] for key in STYLE}
    plt.rcParams.update(STYLE)
    try:
        yield
    finally:
        plt.rcParams.update(saved)


def interval_plot(
    table: pd.DataFrame,
    *,
    label: str,
    value: str = "value",
    title: str,
    xlabel: str,
    reference: float | None = None,
) -> Figure:
    """Points with CI whiskers, one row per ``label`` (pass rates, differences: a forest plot).

    Example:
        >>> t = pd.DataFrame({"system": ["a", "b"], "value": [0.2, 0.6], "ci_low": [0.1, 0.4],
        ...                   "ci_high": [0.4, 0.8], "n": [10, 10]})
        >>> interval_plot(t, label="system", title="Pass rate", xlabel="pass rate").axes[0].get_xlabel()
        'pass rate'
    """
    with _styled():
        fig, ax = plt.subplots(figsize=(7, 0.6 + 0.5 * len(table)))
        y = np.arange(len(table))
        v = table[value].to_numpy(float)
        low = np.maximum(np.nan_to_num(v - table["ci_low"].to_numpy(float)), 0.0)
        high = np.maximum(np.nan_to_num(table["ci_high"].to_numpy(float) - v), 0.0)
        ax.errorbar(v, y, xerr=[low, high], fmt="o", capsize=4)
        ax.set_yticks(y, [f"{a} (n={n})" for a, n in zip(table[label], table["n"], strict=True)])
        if reference is not None:
            ax.axvline(reference, color="grey", lw=1, ls="--")
        ax.set_xlabel(xlabel)
        ax.set_title(f"{title} (95% CI; n = {int(table['n'].sum())})")
        fig.tight_layout()
    return fig


def histogram(
    values: Sequence[float], *, bins: Sequence[float] | int, title: str, xlabel: str
) -> Figure:
    """A labelled histogram with n in the title.

    Example:
        >>> histogram([0, 1, 1], bins=3, title="t", xlabel="x").axes[0].get_ylabel()
        'count'
    """
    with _styled():
        fig, ax = plt.subplots()
        ax.hist(np.asarray(values, float), bins=bins, edgecolor="white")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("count")
        ax.set_title(f"{title} (n = {len(values)})")
        fig.tight_layout()
    return fig


def line_plot(
    x: Sequence[float], y: Sequence[float], *, title: str, xlabel: str, ylabel: str, n: int
) -> Figure:
    """A labelled line plot (for SE against repeats, thresholds, ...).

    Example:
        >>> line_plot([1, 2], [0.2, 0.1], title="t", xlabel="K", ylabel="SE", n=5).axes[0].get_title()
        't (n = 5)'
    """
    with _styled():
        fig, ax = plt.subplots()
        ax.plot(x, y, marker="o")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} (n = {n})")
        fig.tight_layout()
    return fig


def item_map(abilities: Sequence[float], difficulties: Sequence[float], *, title: str) -> Figure:
    """A Wright map: systems' abilities above, items' difficulties below, on one logit axis
    (an item separates the systems whose abilities sit near its difficulty). The axis spans the
    systems' abilities and 2 logits either side: an item far outside (a difficulty of 60 logits,
    an item every system passes) is drawn at the edge and counted in a note, so one such item
    does not squeeze the rest into a line.

    Example:
        >>> item_map([0.1, -0.5], [0.0, 1.2, -2.0], title="t").axes[0].get_title()
        't (2 systems, 3 items)'
        >>> fig = item_map([0.1, -0.5], [0.0, 60.0], title="t")
        >>> bool(fig.axes[1].get_xlim()[1] < 3), fig.axes[1].texts[0].get_text()
        (True, '1 item beyond the axis, drawn at its edge')
    """
    a = np.asarray(abilities, float)
    d = np.asarray(difficulties, float)
    d = d[np.isfinite(d)]
    lo = min(a.min(), d.min(initial=0)) - 0.5
    hi = max(a.max(), d.max(initial=0)) + 0.5
    lo, hi = max(lo, a.min() - 2.0), min(hi, a.max() + 2.0)
    outside = int(np.sum((d < lo) | (d > hi)))
    with _styled():
        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 4.2))
        edges = np.linspace(lo, hi, 30)
        top.hist(a, bins=edges, color="#2c6fbb", edgecolor="white")
        top.set_ylabel("systems")
        top.set_title(f"{title} ({a.size} systems, {d.size} items)")
        bottom.hist(np.clip(d, lo, hi), bins=edges, color="#d98c2b", edgecolor="white")
        bottom.invert_yaxis()
        bottom.set_ylabel("items")
        bottom.set_xlabel("ability / difficulty (logits; systems ~ N(0, 1))")
        bottom.set_xlim(lo, hi)
        if outside:
            bottom.text(
                0.99,
                0.05,
                f"{outside} item{'s' if outside > 1 else ''} beyond the axis, drawn at its edge",
                transform=bottom.transAxes,
                ha="right",
                fontsize=8,
            )
        fig.tight_layout()
    return fig


def rank_interval_plot(table: pd.DataFrame, *, title: str, confidence: float = 0.95) -> Figure:
    """Each system's simultaneous rank interval as a bar, its point rank as a dot, best on top.

    Example:
        >>> t = pd.DataFrame({"system": ["a", "b"], "rank": [1, 2], "rank_low": [1, 1],
        ...                   "rank_high": [2, 2]})
        >>> rank_interval_plot(t, title="t").axes[0].get_xlabel()
        'rank (simultaneous 95% interval)'
    """
    with _styled():
        fig, ax = plt.subplots(figsize=(7, 0.6 + 0.32 * len(table)))
        y = np.arange(len(table))[::-1]
        low, high = table["rank_low"].to_numpy(float), table["rank_high"].to_numpy(float)
        ax.hlines(y, low - 0.3, high + 0.3, lw=6, color="#9bb8d9")
        ax.plot(table["rank"].to_numpy(float), y, "o", color="#2c6fbb")
        ax.set_yticks(y, table["system"].astype(str).tolist())
        ax.set_xlabel(f"rank (simultaneous {confidence:.0%} interval)")
        ax.set_title(f"{title} (n = {len(table)} systems)")
        fig.tight_layout()
    return fig


def race_plot(table: pd.DataFrame, *, cases_drawn: int, title: str) -> Figure:
    """A race as bars: the cases each system answered before it was settled (``table``: a
    race's outcome table, ``system``, ``status``, ``n_cases``), best on top; an open system's bar
    is hatched.

    Example:
        >>> t = pd.DataFrame({"system": ["a", "b"], "status": ["best", "open"],
        ...                   "n_cases": [40, 90]})
        >>> race_plot(t, cases_drawn=90, title="t").axes[0].get_xlabel()
        'cases answered (of 90 drawn)'
    """
    with _styled():
        fig, ax = plt.subplots(figsize=(7, 0.6 + 0.32 * len(table)))
        y = np.arange(len(table))[::-1]
        open_ = (table["status"] == "open").to_numpy()
        bars = ax.barh(y, table["n_cases"].to_numpy(float), color="#9bb8d9")
        for bar, hatched in zip(bars, open_, strict=True):
            if hatched:
                bar.set_hatch("//")
        for yy, (n, status) in zip(
            y, zip(table["n_cases"], table["status"], strict=True), strict=True
        ):
            ax.text(float(n), yy, f" {status}", va="center", fontsize=8)
        ax.set_yticks(y, table["system"].astype(str).tolist())
        ax.set_xlim(0, max(cases_drawn, 1) * 1.25)
        ax.set_xlabel(f"cases answered (of {cases_drawn} drawn)")
        ax.set_title(f"{title} (n = {len(table)} systems)")
        fig.tight_layout()
    return fig


def agreement_curves(
    curves: pd.DataFrame,
    chosen: pd.DataFrame,
    *,
    target: float,
    title: str,
    oracle: pd.DataFrame | None = None,
) -> Figure:
    """Agreement with people against coverage, one line per judge (``curves``: ``judge``,
    ``coverage``, ``agreement``, ``n``, as a cascade's ``curves``), the target as a dashed
    line, and each judge's chosen threshold (``chosen``: ``judge``, ``coverage``,
    ``agreement``) as a ring; with ``oracle`` (``judge``, ``oracle``, ``oracle_low``,
    ``oracle_high``, as :meth:`jevalkit.labels.Cascade.oracle_band`), each judge's oracle band
    as a shaded stretch of the target line and its in-sample oracle as a tick.

    Example:
        >>> c = pd.DataFrame({"judge": "j", "coverage": [0.5, 1.0], "agreement": [1.0, 0.8], "n": [2, 4]})
        >>> agreement_curves(c, c.iloc[:1], target=0.9, title="t").axes[0].get_xlabel()
        'coverage (share of labelled items at or above the threshold)'
    """
    with _styled():
        fig, ax = plt.subplots()
        for judge, group in curves.groupby("judge", sort=False):
            line = ax.plot(group["coverage"], group["agreement"], label=str(judge))[0]
            mine = chosen[chosen["judge"] == judge]
            ax.plot(
                mine["coverage"], mine["agreement"], "o", mfc="none", ms=10, color=line.get_color()
            )
            band = oracle[oracle["judge"] == judge] if oracle is not None else pd.DataFrame()
            for r in band.itertuples():
                ax.plot([r.oracle_low, r.oracle_high], [target, target], lw=8, alpha=0.25,
                        color=line.get_color(), solid_capstyle="butt")  # fmt: skip
                ax.plot([r.oracle], [target], "|", ms=14, color=line.get_color())
        ax.axhline(target, ls="--", color="grey", lw=1, label=f"target {target:.0%}")
        ax.set_xlabel("coverage (share of labelled items at or above the threshold)")
        ax.set_ylabel("agreement with people")
        ax.set_xlim(0, 1.02)
        n = int(curves.groupby("judge")["n"].max().max()) if len(curves) else 0
        ax.set_title(f"{title} (n = {n})")
        ax.legend(loc="lower left", fontsize=8)
        fig.tight_layout()
    return fig
