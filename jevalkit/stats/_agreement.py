"""Agreement between raters (or between repeats of one judge): Krippendorff's alpha, Fleiss' kappa."""

from __future__ import annotations

from typing import Literal

import krippendorff
import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats import inter_rater

from ..errors import StatsError

Level = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(data: ArrayLike, level: Level = "nominal") -> float:
    """Krippendorff's alpha for a raters x units matrix; NaN marks a missing rating.

    Wraps the ``krippendorff`` package. Units rated by fewer than two raters carry no
    information and are ignored. Fewer than two pairable values, or no variation at all, is an
    error (alpha is undefined).

    Example (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", 4 coders x 12 units):
        >>> nan = float("nan")
        >>> table = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        ...          [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        ...          [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        ...          [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
        >>> round(krippendorff_alpha(table, "nominal"), 3), round(krippendorff_alpha(table, "interval"), 3)
        (0.743, 0.849)
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise StatsError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    matrix = np.asarray(data, dtype=float)
    if matrix.ndim != 2:
        raise StatsError("data must be a raters x units matrix")
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2).sum()
    if pairable == 0:
        raise StatsError("no unit has two ratings: Krippendorff's alpha is undefined")
    values = matrix[~np.isnan(matrix)]
    if np.unique(values).size < 2:
        raise StatsError("every rating is the same value: Krippendorff's alpha is undefined (0/0)")
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def fleiss_kappa(table: ArrayLike) -> float:
    """Fleiss' kappa from a subjects x categories table of rating counts (statsmodels).

    Every row must sum to the same number of raters.

    Example (Wikipedia's worked example, 10 subjects, 14 raters, 5 categories):
        >>> table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
        ...          [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
        ...          [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
        >>> round(fleiss_kappa(table), 3)
        0.21
    """
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] < 1:
        raise StatsError("table must be subjects x categories counts")
    totals = counts.sum(axis=1)
    if not np.all(totals == totals[0]) or totals[0] < 2:
        raise StatsError("every subject needs the same number (>= 2) of ratings")
    return float(inter_rater.fleiss_kappa(counts, method="fleiss"))
