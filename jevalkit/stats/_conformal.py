"""Conformal prediction sets over ordinal levels: for each judged item, the contiguous run of
levels that holds the person's level with a guaranteed probability.

Split conformal with the ordinal adaptive score of Lu, Angelopoulos, Bates, ... (2022, "Improving
trustworthiness of AI disease severity rating in medical imaging with ordinal conformal
prediction sets"): an item's set grows from its most probable level, adding at each step the
neighbouring level (below or above) with the larger probability, so every set is contiguous; a
calibration item's score is the probability mass gathered before its true level joins (0 when
it is the most probable level). The threshold is the ceil((n + 1) coverage)-th smallest
calibration score; a new item's set keeps every level that joins while the mass gathered before
it is at most the threshold. (The score counted after the level joins, as in the paper, gives
the same guarantee but, for a sharp judge, sets a third larger: 99% coverage asked 90%, in
``benchmarks/calibration.py``'s simulation.) Marginal coverage is at least ``coverage`` for items
exchangeable with the calibration items (not per item, and not for another judge or data).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..contract import Result, estimator
from ..errors import StatsError


def _paths(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the order in which levels join (greedy contiguous growth from the mode)
    and the mass gathered after each step."""
    n_items, k = probs.shape
    order = np.empty((n_items, k), dtype=np.int64)
    mass = np.empty((n_items, k))
    for i in range(n_items):
        p = probs[i]
        low = high = int(np.argmax(p))  # ties: the lowest level
        order[i, 0], total = low, p[low]
        mass[i, 0] = total
        for step in range(1, k):
            below = p[low - 1] if low > 0 else -1.0
            above = p[high + 1] if high < k - 1 else -1.0
            if above > below:  # ties grow downwards
                high += 1
                order[i, step] = high
            else:
                low -= 1
                order[i, step] = low
            total += p[order[i, step]]
            mass[i, step] = total
    return order, mass


def _check_probs(probs: ArrayLike, name: str) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2 or p.shape[1] < 2:
        raise StatsError(f"{name} must be an items x levels array (two or more levels)")
    if not np.isfinite(p).all():
        raise StatsError(f"{name} must hold finite probabilities")
    if (p < 0).any() or (p > 1).any():
        raise StatsError(
            f"{name} range from {p.min():g} to {p.max():g}, outside [0, 1]: give each level's "
            "probability"
        )
    sums = p.sum(axis=1)
    if (np.abs(sums - 1) > 1e-6).any():
        bad = int(np.flatnonzero(np.abs(sums - 1) > 1e-6)[0])
        raise StatsError(f"{name} row {bad} sums to {sums[bad]:.4g}, not 1: give probabilities")
    return p


@dataclass(frozen=True)
class LevelSets(Result):
    """Conformal level sets (see :func:`level_sets`).

    Attributes:
        sets: one list of level indexes (contiguous, ascending) per item.
        size: the number of levels in each set.
        threshold: the calibrated mass a level may follow and still join (inf: every set holds
            every level).
        coverage: the coverage asked for; ``n_calibration`` items set the threshold.
        method: how the sets were made.
    """

    sets: list[list[int]]
    size: np.ndarray = field(repr=False)
    threshold: float
    coverage: float
    n_calibration: int
    method: str
    _unpack = ("sets", "size")

    def table(self) -> pd.DataFrame:
        """One row per item: ``low``, ``high`` (the set's first and last level index), ``size``,
        ``levels`` (the set), ``method``."""
        return pd.DataFrame(
            {
                "low": [s[0] for s in self.sets],
                "high": [s[-1] for s in self.sets],
                "size": self.size,
                "levels": self.sets,
                "method": self.method,
            }
        )


def _level_sets_adapter(frame: pd.DataFrame) -> LevelSets:
    return level_sets(  # fixed items; the frame's rows calibrate
        [[0.9, 0.1], [0.6, 0.4], [0.5, 0.5], [0.2, 0.8]],
        np.c_[1 - frame["score"].astype(float), frame["score"].astype(float)],
        frame["passed"].astype(int),
        coverage=0.8,
    )


@estimator(
    unit="judged item",
    estimand="the levels a person could give an item (a set per item)",
    interval="split-conformal sets of contiguous levels, marginal coverage >= coverage",
    checks=("order", "rename", "method", "scale"),
    adapter=_level_sets_adapter,
    calibration="level_sets",
)
def level_sets(
    probs: ArrayLike,
    calibration_probs: ArrayLike,
    calibration_levels: ArrayLike,
    *,
    coverage: float = 0.9,
) -> LevelSets:
    """Split-conformal prediction sets of contiguous ordinal levels, one per row of ``probs``.

    Args:
        probs: items x levels probabilities of the items to give sets to (a judge's ``probs``).
        calibration_probs: the same for calibration items with a known level.
        calibration_levels: each calibration item's level, as an index 0..k-1.
        coverage: the marginal probability that a set holds the true level.

    Returns:
        :class:`LevelSets`: ``sets`` (lists of level indexes), ``size``, ``threshold``.

    Notes:
        With n calibration items the threshold is the ceil((n + 1) coverage)-th smallest score;
        when that rank exceeds n (too few items for the coverage asked), every set is every level
        and ``method`` says so. Coverage holds on average over items like the calibration items
        (exchangeable with them), at least ``coverage`` and, without ties, below
        coverage + 1 / (n + 1).

    Example:
        >>> cal = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.3, 0.5]] * 10)  # always right
        >>> levels = np.array([0, 1, 2] * 10)
        >>> result = level_sets([[0.6, 0.3, 0.1], [0.05, 0.15, 0.8]], cal, levels, coverage=0.8)
        >>> result.sets
        [[0], [2]]
    """
    if not 0 < coverage < 1:
        raise StatsError(f"coverage must lie strictly between 0 and 1, got {coverage}")
    p = _check_probs(probs, "probs")
    cal = _check_probs(calibration_probs, "calibration_probs")
    if cal.shape[1] != p.shape[1]:
        raise StatsError(
            f"probs has {p.shape[1]} levels but calibration_probs {cal.shape[1]}: one judge's levels"
        )
    y = np.asarray(calibration_levels).ravel()
    if y.size != cal.shape[0]:
        raise StatsError(f"{y.size} calibration levels for {cal.shape[0]} calibration rows")
    try:
        y_int = y.astype(np.int64)
    except (TypeError, ValueError):
        raise StatsError("calibration_levels must be level indexes 0..k-1") from None
    if (y_int != y.astype(float)).any() or (y_int < 0).any() or (y_int >= cal.shape[1]).any():
        raise StatsError(f"calibration_levels must be level indexes 0..{cal.shape[1] - 1}")
    n, k = cal.shape
    order, mass = _paths(cal)
    step = np.argmax(order == y_int[:, None], axis=1)
    before = mass - np.take_along_axis(cal, order, axis=1)  # mass gathered before each step
    scores = np.sort(before[np.arange(n), step])
    rank = math.ceil((n + 1) * coverage)
    how = f"split conformal over {n} calibration items, ordinal adaptive sets (contiguous)"
    if rank > n:
        threshold = math.inf
        how += (
            f": too few items for {coverage:.0%} coverage (needs {rank}), every set is every level"
        )
    else:
        threshold = float(scores[rank - 1])
    order_new, mass_new = _paths(p)
    before_new = mass_new - np.take_along_axis(p, order_new, axis=1)
    if math.isinf(threshold):
        joined = np.full(p.shape[0], k)
    else:  # the steps whose preceding mass is within the threshold (rounding tolerated)
        joined = (before_new <= threshold + 1e-12).sum(axis=1)
    sets = [sorted(order_new[i, : joined[i]].tolist()) for i in range(p.shape[0])]
    return LevelSets(
        sets=sets,
        size=np.asarray(joined, dtype=np.int64),
        threshold=threshold,
        coverage=float(coverage),
        n_calibration=n,
        method=how + f"; marginal coverage >= {coverage:.0%} (an interval of levels per item)",
    )
