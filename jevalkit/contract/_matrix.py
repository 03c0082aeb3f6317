"""The system x item matrix every item statistic starts from, and the checks that guard it.

A results frame has one row per system x case x repeat. Repeats of a cell are averaged (the
cell's score is the share of its repeats that passed, for binary scores); ``weight`` counts
them. Scores must lie in [0, 1] (pass ``scale=`` for other grades), so difficulty and the IRT
likelihood mean what they say. Rows with an ``error`` or a missing score are not scores: they
are counted per system in ``n_missing`` (the leaderboard bounds them), never read as 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import StatsError
from ._columns import CASE_COLUMNS, CaseSpec, columns_of, group_codes, require
from ._prepare import check_key_types
from ._result import RowsResult, rows_of


class ScoreColumns(TypedDict, total=False):
    """The columns an item statistic reads, defined once (every function that builds a
    :class:`ScoreMatrix` takes them as keywords): ``system`` (default ``system``), ``case``
    (default probe, version, case_id), ``score`` (default ``score``), ``scale`` ((low, high)
    of raw grades; default None: scores already in [0, 1])."""

    system: str
    case: CaseSpec
    score: str
    scale: tuple[float, float] | None


@dataclass(frozen=True)
class ScoreMatrix:
    """Scores arranged as systems x items.

    Attributes:
        systems: system names (sorted).
        items: one row per item (sorted), the case columns.
        scores: mean score of each cell (NaN where the system has no score for the item).
        weight: the number of scored repeats of each cell (0 where missing).
        flips: per cell, whether its repeats disagree (some scored differently from others).
        n_missing: per system, rows skipped for an error or a missing score.
        case_label: what an item is, for ``method`` strings.
        columns: the :class:`ScoreColumns` it was read with (defaults filled in), so new
            results can be read the same way.
    """

    systems: list[str]
    items: pd.DataFrame
    scores: np.ndarray
    weight: np.ndarray
    flips: np.ndarray
    n_missing: np.ndarray
    case_label: str
    columns: dict = field(default_factory=dict)

    @property
    def observed(self) -> np.ndarray:
        return self.weight > 0

    def item_ids(self) -> list:
        """Each item's id: its one case column's value, or a tuple of the case columns.

        Example:
            >>> df = pd.DataFrame({"system": ["a"], "probe": ["p"], "case_id": ["c1"], "score": [1.0]})
            >>> score_matrix(df, case=["probe", "case_id"]).item_ids()
            [('p', 'c1')]
        """
        if self.items.shape[1] == 1:
            return self.items.iloc[:, 0].tolist()
        return list(self.items.itertuples(index=False, name=None))


def score_matrix(
    df: pd.DataFrame | RowsResult,
    *,
    system: str = "system",
    case: CaseSpec = CASE_COLUMNS,
    score: str = "score",
    scale: tuple[float, float] | None = None,
) -> ScoreMatrix:
    """Arrange a results frame as a system x item matrix (repeats averaged).

    Example:
        >>> df = pd.DataFrame({"system": ["a", "a", "b", "b"], "case_id": [1, 1, 1, 2],
        ...                    "repeat": [0, 1, 0, 0], "score": [1.0, 0.0, 1.0, None]})
        >>> m = score_matrix(df, case="case_id")
        >>> m.scores.tolist(), m.weight.tolist(), m.flips.tolist(), m.n_missing.tolist()
        ([[0.5], [1.0]], [[2], [1]], [[True], [False]], [0, 1])

    An item with no score at all (case 2 here) is not in the matrix; its row counts in
    ``n_missing``.
    """
    df = rows_of(df)
    if not isinstance(df, pd.DataFrame):
        raise StatsError(
            "item statistics need a results DataFrame (system, case and score columns)"
        )
    require(df, system, "system", "the system each row belongs to")
    require(df, score, "score", "the score of each row")
    case_cols = columns_of(case)
    if not case_cols:
        raise StatsError("item statistics need a case column: pass case='<column>'")
    for column in case_cols:
        require(df, column, "case", "the item each row scores")
    check_key_types(df, case_cols, system)
    missing = df[score].isna().to_numpy().copy()
    if "error" in df.columns:
        missing |= df["error"].notna().to_numpy()
    if df[system].isna().any():
        raise StatsError(f"column {system!r} has rows without a system; fill or drop them")
    for column in case_cols:
        if df[column].isna().any():
            raise StatsError(
                f"case column {column!r} has {int(df[column].isna().sum())} rows without a "
                "case id: they are no one item; fill or drop them"
            )
    sys_codes, sys_table = group_codes(df, [system])
    systems = [str(s) for s in sys_table[system]]
    if len(set(systems)) < len(systems):
        clash = sorted({n for n in systems if systems.count(n) > 1})
        raise StatsError(
            f"column {system!r} names system(s) {clash} with values of different types (e.g. 1 "
            "and '1'), which would print as one: give every system one name of one type"
        )
    n_missing = np.bincount(sys_codes[missing], minlength=len(systems))
    usable = df.loc[~missing]
    try:
        values = usable[score].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise StatsError(f"column {score!r} holds values that are not numbers") from None
    if not np.isfinite(values).all():
        raise StatsError(f"column {score!r} holds infinite values; fix or drop them")
    if scale is not None:
        low, high = (float(x) for x in scale)
        if not high > low:
            raise StatsError(f"scale must be (low, high) with high > low, got {scale!r}")
    else:
        low, high = 0.0, 1.0
    if values.size and (values.min() < low or values.max() > high):
        fix = (
            f"outside scale={scale!r}: give the range the scores are on (or no scale for 0-1 scores)"
            if scale is not None
            else "outside [0, 1]: pass scale=(low, high) (e.g. scale=(1, 10) for 1-10 grades)"
        )
        raise StatsError(
            f"column {score!r} ranges from {values.min():g} to {values.max():g}, {fix}"
        )
    values = (values - low) / (high - low)
    _refuse_duplicates(usable, system, case_cols)
    item_codes, items = group_codes(usable, case_cols)
    if items.empty or not len(usable):
        raise StatsError("no scored rows: every row has an error or a missing score")
    rows = sys_codes[~missing]
    shape = (len(systems), len(items))
    flat = rows * shape[1] + item_codes
    size = np.bincount(flat, minlength=shape[0] * shape[1]).reshape(shape)
    total = np.bincount(flat, weights=values, minlength=size.size).reshape(shape)
    low_v = np.full(size.size, np.inf)
    high_v = np.full(size.size, -np.inf)
    np.minimum.at(low_v, flat, values)
    np.maximum.at(high_v, flat, values)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(size > 0, total / np.maximum(size, 1), np.nan)
    flips = (high_v > low_v).reshape(shape)
    label = "+".join(case_cols)
    columns = {"system": system, "case": case, "score": score, "scale": scale}
    return ScoreMatrix(systems, items, scores, size, flips, n_missing, label, columns)


def _refuse_duplicates(usable: pd.DataFrame, system: str, case_cols: list[str]) -> None:
    """Several rows of one system and case are repeats only when a ``repeat`` column tells
    them apart; otherwise they are copies, or the case columns are too coarse."""
    keys = [system, *case_cols]
    if "repeat" in usable.columns:
        keys.append("repeat")
    dup = usable.duplicated(keys, keep=False)
    if dup.any():
        first = usable.loc[dup, keys].iloc[0].to_dict()
        why = (
            "the same repeat twice: drop the copies"
            if "repeat" in usable.columns
            else "no 'repeat' column tells them apart: pass case columns that make each row "
            "one case, or add a repeat column"
        )
        raise StatsError(f"{int(dup.sum())} duplicated rows share {first}; {why}")


def require_systems(matrix: ScoreMatrix, minimum: int, purpose: str) -> None:
    """Refuse when fewer than ``minimum`` systems have scores (items cannot be calibrated).

    Example:
        >>> df = pd.DataFrame({"system": ["a", "b"], "case_id": [1, 1], "score": [1.0, 0.0]})
        >>> require_systems(score_matrix(df, case="case_id"), 3, "item analysis")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: item analysis needs scores from at least 3 systems, got 2: add more systems' results
    """
    n = int(matrix.observed.any(axis=1).sum())
    if n < minimum:
        raise StatsError(
            f"{purpose} needs scores from at least {minimum} systems, got {n}: "
            "add more systems' results"
        )


def require_connected(matrix: ScoreMatrix) -> None:
    """Refuse when some systems share no items with the others (directly or through others):
    their scores are on separate scales and cannot be compared.

    Example:
        >>> df = pd.DataFrame({"system": ["a", "b"], "case_id": [1, 2], "score": [1.0, 0.0]})
        >>> require_connected(score_matrix(df, case="case_id"))
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: the systems share no items across 2 groups (['a'] and ['b']): ...
    """
    n_sys, n_items = matrix.scores.shape
    r, c = np.nonzero(matrix.observed)
    graph = coo_matrix((np.ones(r.size), (r, n_sys + c)), shape=(n_sys + n_items, n_sys + n_items))
    _, labels = connected_components(graph, directed=False)
    sys_labels = labels[:n_sys][matrix.observed.any(axis=1)]
    groups = np.unique(sys_labels)
    if groups.size > 1:
        names = np.asarray(matrix.systems)[matrix.observed.any(axis=1)]
        parts = [sorted(names[sys_labels == g].tolist()) for g in groups]
        shown = " and ".join(str(p[:5] + (["..."] if len(p) > 5 else [])) for p in parts[:3])
        raise StatsError(
            f"the systems share no items across {groups.size} groups ({shown}): their scores "
            "cannot be compared; score every system on a common set of cases"
        )
