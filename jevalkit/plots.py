"""Shared matplotlib style and plots: every axis labelled, n in every title, CIs drawn as intervals."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["STYLE", "histogram", "interval_plot", "line_plot"]

STYLE = {
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
) -> plt.Figure:
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
) -> plt.Figure:
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
) -> plt.Figure:
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
