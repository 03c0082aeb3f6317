"""The one finishing step of every statistic's table: :func:`finish`.

A statistic builds its columns and hands them here, as pingouin's ``_postprocess_dataframe``
finishes every pingouin table. The step puts the group keys first and the documented columns
in their documented order, gives a clean integer index, and holds the interval promises where
they are made: an interval contains its estimate (rounding may not exclude it), is never of
zero width (a zero-width interval is a bug in the statistic, raised, never shown), and every
table with an interval says in ``method`` what it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

INTERVALS = (("ci_low", "ci_high", "value"),)


def finish(
    columns: Mapping[str, Any] | pd.DataFrame,
    *,
    groups: pd.DataFrame | None = None,
    order: Sequence[str] | None = None,
    estimate: str = "value",
) -> pd.DataFrame:
    """A statistic's tidy table: the ``groups`` keys, then ``columns`` (in ``order`` when
    given: every documented column, none missing), an integer index, and the interval rules.

    Every pair ``<x>ci_low<y>`` / ``<x>ci_high<y>`` is an interval: widened to contain its
    estimate (``value``, or ``<x>value<y>`` when present), and refused with a ``RuntimeError``
    (a bug, not a user mistake) when it has zero width.

    Example:
        >>> finish({"n": [3], "value": [0.5], "ci_low": [0.2], "ci_high": [0.8], "method": ["t"]},
        ...        groups=pd.DataFrame({"system": ["a"]}))
          system  n  value  ci_low  ci_high method
        0      a  3    0.5     0.2      0.8      t
        >>> finish({"value": [0.5], "ci_low": [0.5], "ci_high": [0.5], "method": ["t"]})
        Traceback (most recent call last):
        ...
        RuntimeError: a zero-width interval (ci_low = ci_high = 0.5 in row 0): a statistic must widen it or give none
    """
    table = columns.copy() if isinstance(columns, pd.DataFrame) else pd.DataFrame(dict(columns))
    table = table.reset_index(drop=True)
    if groups is not None and len(groups.columns):
        keys = groups.reset_index(drop=True)
        table = pd.concat([keys, table.drop(columns=[c for c in keys if c in table])], axis=1)
    if order is not None:
        absent = [c for c in order if c not in table.columns]
        if absent:
            raise RuntimeError(f"documented columns not computed: {absent}")
        keys = [c for c in (groups.columns if groups is not None else ()) if c not in order]
        extra = [c for c in table.columns if c not in order and c not in keys]
        table = table[[*keys, *order, *extra]]
    for low, high in interval_pairs(table):
        centre = low.replace("ci_low", estimate)
        _hold(table, low, high, centre if centre in table.columns else None)
    return table


def interval_pairs(table: pd.DataFrame) -> list[tuple[str, str]]:
    """The interval columns of a table: each ``...ci_low...`` with its ``...ci_high...``.

    Example:
        >>> interval_pairs(pd.DataFrame(columns=["ci_low", "ci_high", "ci_low_facets"]))
        [('ci_low', 'ci_high')]
    """
    return [
        (c, c.replace("ci_low", "ci_high"))
        for c in table.columns
        if isinstance(c, str) and "ci_low" in c and c.replace("ci_low", "ci_high") in table.columns
    ]


def _hold(table: pd.DataFrame, low: str, high: str, centre: str | None) -> None:
    lo = pd.to_numeric(table[low], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(table[high], errors="coerce").to_numpy(dtype=float)
    if centre is not None:
        value = pd.to_numeric(table[centre], errors="coerce").to_numpy(dtype=float)
        both = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(value)
        lo = np.where(both, np.fmin(lo, value), lo)
        hi = np.where(both, np.fmax(hi, value), hi)
        table[low], table[high] = lo, hi
    flat = np.isfinite(lo) & np.isfinite(hi) & (hi <= lo)
    if flat.any():
        i = int(np.flatnonzero(flat)[0])
        raise RuntimeError(
            f"a zero-width interval ({low} = {high} = {lo[i]:g} in row {i}): a statistic "
            "must widen it or give none"
        )
