"""Shared plumbing for metrics: accepting arrays or results, choosing the unit, grouping."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import StatsError
from ..stats._validate import as_clean_array

CASE_COLUMNS = ("probe", "version", "case_id")


def as_frame(data: pd.DataFrame | Sequence | np.ndarray, column: str) -> pd.DataFrame:
    """A DataFrame with ``column``: results pass through, plain arrays become one row per case.

    Arrays must not hold NaN. In a DataFrame, rows with no usable value (``error`` set, or the
    column missing) are marked ``_unscored`` here, in one place; metrics skip them and report how
    many in ``n_unscored``.

    Example:
        >>> as_frame([0.5, 1.0], "score")["score"].tolist()
        [0.5, 1.0]
    """
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
    else:
        frame = pd.DataFrame({column: as_clean_array(data, column, min_n=0)})
        frame["case_id"] = np.arange(len(frame)).astype(str)
    if column not in frame.columns:
        raise StatsError(f"no {column!r} column; columns are {sorted(frame.columns)}")
    errors = frame["error"].notna() if "error" in frame.columns else False
    frame["_unscored"] = errors | frame[column].isna()
    if "system" not in frame.columns and "model" in frame.columns:
        label = frame["label"] if "label" in frame.columns else pd.Series(None, index=frame.index)
        frame["system"] = label.fillna(frame["model"])
    return frame


def case_key(frame: pd.DataFrame) -> pd.Series:
    """One label per row naming its case (probe, version, case id); repeats share it.

    Example:
        >>> case_key(pd.DataFrame({"probe": ["p", "p"], "version": [1, 1], "repeat": [0, 1]})).nunique()
        1
    """
    cols = [c for c in CASE_COLUMNS if c in frame.columns]
    if not cols:
        return pd.Series(np.arange(len(frame)).astype(str), index=frame.index)
    labels = ["|".join(map(str, row)) for row in frame[cols].itertuples(index=False)]
    return pd.Series(labels, index=frame.index, dtype=object)


def unit_values(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, str]:
    """The values a CI is computed over, and what a unit is.

    With several cases, repeats are averaged within each case first and the case is the unit
    (repeats of one case are not independent). With a single case, its repeats are the units:
    the interval is then about that case alone.

    Example:
        >>> f = pd.DataFrame({"case_id": ["a", "a", "b", "b"], "score": [1.0, 0.0, 1.0, 1.0]})
        >>> unit_values(f, "score")
        (array([0.5, 1. ]), 'case')
    """
    keys = case_key(frame)
    values = frame[column].astype(float)
    if keys.nunique() > 1:
        return values.groupby(keys.to_numpy(), sort=True).mean().to_numpy(), "case"
    return values.to_numpy(), "repeat (one case)"


def by_groups(
    frame: pd.DataFrame,
    by: str | Iterable[str] | None,
    compute: Callable[[pd.DataFrame], dict],
) -> pd.DataFrame:
    """Apply ``compute`` to each group (or to everything) and stack one row per group.

    Example:
        >>> f = pd.DataFrame({"m": ["a", "a", "b"], "x": [1, 2, 3]})
        >>> by_groups(f, "m", lambda g: {"n": len(g)})[["m", "n"]].values.tolist()
        [['a', 2], ['b', 1]]
    """
    cols = [by] if isinstance(by, str) else list(by or [])
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise StatsError(f"cannot group by {missing}: no such column(s)")
    if not cols:
        return pd.DataFrame([compute(frame)])
    rows = []
    for key, group in frame.groupby(cols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(cols, key, strict=True)), **compute(group)})
    return pd.DataFrame(rows)
