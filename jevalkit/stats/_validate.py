"""Input checks shared by every statistic: one place decides what NaN and empty input mean."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StatsError


def as_clean_array(values: ArrayLike, name: str = "data", *, min_n: int = 1) -> np.ndarray:
    """A 1-D float array; NaN is an error (drop it yourself, deliberately), as is fewer than
    ``min_n`` values.

    Example:
        >>> as_clean_array([1, 2, 3]).tolist()
        [1.0, 2.0, 3.0]
        >>> as_clean_array([1, float("nan")])
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: data contains 1 NaN value(s); drop or impute them before computing statistics
    """
    arr = np.asarray(values, dtype=float).ravel()
    bad = int(np.isnan(arr).sum())
    if bad:
        raise StatsError(
            f"{name} contains {bad} NaN value(s); drop or impute them before computing statistics"
        )
    if arr.size < min_n:
        raise StatsError(f"{name} has {arr.size} value(s); this statistic needs at least {min_n}")
    return arr


def as_labels(values: ArrayLike, n: int, name: str) -> np.ndarray:
    """Integer codes for a label array (cluster ids, case ids) of length ``n``.

    Example:
        >>> as_labels(["a", "b", "a"], 3, "cluster").tolist()
        [0, 1, 0]
    """
    arr = np.asarray(values)
    if arr.shape[0] != n:
        raise StatsError(f"{name} has {arr.shape[0]} labels for {n} values; give one per value")
    _, codes = np.unique(arr, return_inverse=True)
    return codes.ravel()
