"""The system x item matrix every item statistic starts from, and the checks that guard it.

A results frame has one row per system x case x repeat, read by the one input step
(:func:`jevalkit.contract.prepare`): scores lie in [0, 1] (pass ``scale=`` for other grades), so
difficulty and the IRT likelihood mean what they say; rows with an ``error`` or a missing score
are counted per system in ``n_missing`` (the leaderboard bounds them), never read as 0; a copied
row, or rows of one cell that no repeat column tells apart, are refused; a probe's two versions
or settings are refused unless pooled. Here the rows are only arranged: repeats of a cell are
averaged (the cell's score is the share of its repeats that passed, for binary scores) and
``weight`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import StatsError
from ..results import CASE_COLUMNS, RowsResult, rows_of
from ._columns import CaseSpec, columns_of, group_codes
from ._prepare import prepare


class ScoreColumns(TypedDict, total=False):
    """The columns an item statistic reads, defined once (every function that builds a
    :class:`ScoreMatrix` takes them as keywords): ``system`` (default ``system``), ``case``
    (default probe, version, case_id), ``score`` (default ``score``), ``repeat`` (default
    ``repeat``), ``scale`` ((low, high) of raw grades; default None: scores already in
    [0, 1]), ``pool`` (a probe's versions or generation settings pooled on purpose; default
    False: refused)."""

    system: str
    case: CaseSpec
    score: str
    repeat: str | None
    scale: tuple[float, float] | None
    pool: bool


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
    repeat: str | None = "repeat",
    scale: tuple[float, float] | None = None,
    pool: bool = False,
    weighted: bool = False,
) -> ScoreMatrix:
    """Arrange a results frame as a system x item matrix (repeats averaged). The rows are read
    by :func:`jevalkit.contract.prepare` (scored rows, numbers, scale, duplicates, key types,
    settings); this function only arranges them.

    Example:
        >>> df = pd.DataFrame({"system": ["a", "a", "b", "b"], "case_id": [1, 1, 1, 2],
        ...                    "repeat": [0, 1, 0, 0], "score": [1.0, 0.0, 1.0, None]})
        >>> m = score_matrix(df, case="case_id")
        >>> m.scores.tolist(), m.weight.tolist(), m.flips.tolist(), m.n_missing.tolist()
        ([[0.5], [1.0]], [[2], [1]], [[True], [False]], [0, 1])

    An item with no score at all (case 2 here) is not in the matrix; its row counts in
    ``n_missing``. ``weighted``: the caller is the estimator of the design that drew the rows
    (an active plan's), so rows drawn with unequal probabilities are read.
    """
    df = rows_of(df)
    if not isinstance(df, pd.DataFrame):
        raise StatsError(
            "item statistics need a results DataFrame (system, case and score columns)"
        )
    case_cols = columns_of(case)
    if not case_cols:
        raise StatsError("item statistics need a case column: pass case='<column>'")
    p = prepare(
        df,
        score,
        by=system,
        case=case_cols,
        system=system,
        repeat=repeat,
        kind="score",
        scale=scale,
        keyword="score",
        need_repeat=True,
        complete_keys=True,
        pool=pool,
        apart=False,
        weighted=weighted,
    )
    systems = [str(s) for s in p.groups[system]]
    item_codes, items = group_codes(p.frame, case_cols)
    if items.empty or not p.values.size:
        raise StatsError("no scored rows: every row has an error or a missing score")
    values = p.values
    shape = (len(systems), len(items))
    flat = p.group * shape[1] + item_codes
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
    columns = {
        "system": system,
        "case": case,
        "score": score,
        "repeat": repeat,
        "scale": scale,
        "pool": pool,
    }
    return ScoreMatrix(systems, items, scores, size, flips, p.n_missing, label, columns)


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
