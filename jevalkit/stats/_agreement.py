"""Agreement between raters (or between repeats of one judge): Krippendorff's alpha, Fleiss' kappa."""

from __future__ import annotations

from typing import Literal

import krippendorff
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from statsmodels.stats import inter_rater

from ..contract import estimator, prepare, require
from ..errors import StatsError

Measurement = Literal["nominal", "ordinal", "interval", "ratio"]


def _first_repeat(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter input: each system's first repeat (systems rate cases)."""
    return frame[frame["repeat"] == 0]


def _rating_counts(frame: pd.DataFrame) -> np.ndarray:
    """Cases x (fail, pass) counts of the systems' first-repeat verdicts."""
    first = _first_repeat(frame)
    verdicts = first["passed"].astype(float)
    return (
        first.assign(_v=verdicts.astype(int))
        .pivot_table(index="case_id", columns="_v", values="system", aggfunc="count")
        .reindex(columns=[0, 1], fill_value=0)
        .fillna(0)
        .to_numpy()
    )


def _krippendorff_alpha_adapter(frame: pd.DataFrame) -> float:
    return krippendorff_alpha(
        _first_repeat(frame), "interval", unit="case_id", rater="system", value="score"
    )


@estimator(
    unit="unit",
    estimand="chance-corrected agreement, any level of measurement",
    interval="none (a point statistic)",
    checks=("order", "rename", "keys", "duplicates", "one_case", "no_spread"),
    adapter=_krippendorff_alpha_adapter,
    note="pinned to the krippendorff package in tests/stats",
)
def krippendorff_alpha(
    data: ArrayLike | pd.DataFrame,
    measurement: Measurement = "nominal",
    *,
    layout: Literal["raters x units", "units x raters"] | None = None,
    unit: str | None = None,
    rater: str | None = None,
    value: str | None = None,
    pool: bool = False,
) -> float:
    """Krippendorff's alpha; NaN (or a missing pair) marks a missing rating.

    Give either long data, a DataFrame with one row per rating and the ``unit=``, ``rater=`` and
    ``value=`` columns named, or a matrix with its ``layout`` stated (``"raters x units"`` or
    ``"units x raters"``): a matrix cannot say which axis is which, and the transposed reading
    gives a different, wrong alpha. ``measurement`` is the level of measurement (``nominal``,
    ``ordinal``, ``interval``, ``ratio``). In long data a row with an ``error`` or no value is
    not a rating, a (unit, rater) pair rated twice is refused, unit keys of different types
    (``1`` and ``"1"``) are refused rather than read as two units, and a rater's ratings under
    two probe versions or generation settings (``params_hash``) are refused unless
    ``pool=True`` (the input step, :func:`jevalkit.contract.prepare`).

    Wraps the ``krippendorff`` package. Units rated by fewer than two raters carry no
    information and are ignored. Fewer than two pairable values, or no variation at all, is an
    error (alpha is undefined).

    Example (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", 4 coders x 12 units):
        >>> nan = float("nan")
        >>> table = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        ...          [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        ...          [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        ...          [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
        >>> round(krippendorff_alpha(table, "nominal", layout="raters x units"), 3)
        0.743
        >>> long = pd.DataFrame([(u, r, v) for r, row in enumerate(table) for u, v in enumerate(row)],
        ...                     columns=["item", "coder", "grade"])
        >>> round(krippendorff_alpha(long, "interval", unit="item", rater="coder", value="grade"), 3)
        0.849
    """
    if measurement not in ("nominal", "ordinal", "interval", "ratio"):
        raise StatsError(
            f"measurement must be nominal, ordinal, interval or ratio, got {measurement!r}"
        )
    if unit is not None or rater is not None or value is not None:
        if not isinstance(data, pd.DataFrame) or unit is None or rater is None or value is None:
            raise StatsError("long data is a DataFrame with unit=, rater= and value= all named")
        for keyword, column in (("unit", unit), ("rater", rater), ("value", value)):
            require(data, column, keyword, "a column of long ratings")
        p = prepare(
            data,
            value,
            case=unit,
            system=rater,
            keyword="value",
            pool=pool,
            apart=False,
        )
        rated = p.frame[[unit, rater]]
        if rated.duplicated().any():  # one cell of the rater x unit matrix per rating
            raise StatsError(
                "a rater rated a unit more than once (duplicated rows are not repeats): keep one "
                "rating per (unit, rater)"
            )
        matrix = rated.assign(_v=p.values).pivot(index=rater, columns=unit, values="_v")
        matrix = matrix.to_numpy(float)
    else:
        if layout not in ("raters x units", "units x raters"):
            raise StatsError(
                "say which axis is which: layout='raters x units' or 'units x raters' (or give "
                "long data with unit=, rater=, value=)"
            )
        matrix = np.asarray(data, dtype=float)
        if matrix.ndim != 2:
            raise StatsError("data must be a 2-D matrix of ratings")
        if layout == "units x raters":
            matrix = matrix.T
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2).sum()
    if pairable == 0:
        raise StatsError("no unit has two ratings: Krippendorff's alpha is undefined")
    if pairable == 1:
        raise StatsError(
            "one unit has two or more ratings: alpha needs two or more units to tell "
            "agreement from chance"
        )
    values = matrix[~np.isnan(matrix)]
    if np.unique(values).size < 2:
        raise StatsError("every rating is the same value: Krippendorff's alpha is undefined (0/0)")
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=measurement))


def _fleiss_kappa_adapter(frame: pd.DataFrame) -> float:
    return fleiss_kappa(_rating_counts(frame))


@estimator(
    unit="item",
    estimand="chance-corrected agreement of raters",
    interval="none (a point statistic)",
    checks=("order", "rename", "one_case", "no_spread"),
    adapter=_fleiss_kappa_adapter,
    note="pinned to statsmodels in tests/stats",
)
def fleiss_kappa(table: ArrayLike) -> float:
    """Fleiss' kappa from a subjects x categories table of rating counts (statsmodels).

    Every row must sum to the same number of raters. Kappa compares agreement with what the
    categories' shares give by chance, so it needs two or more subjects and ratings in more than
    one category: fewer is refused (kappa is 0/0), never reported as a number.

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
    if not np.isfinite(counts).all() or (counts < 0).any() or (counts % 1).any():
        raise StatsError("table must hold counts of ratings (whole numbers, 0 or more)")
    totals = counts.sum(axis=1)
    if not np.all(totals == totals[0]) or totals[0] < 2:
        raise StatsError("every subject needs the same number (>= 2) of ratings")
    if counts.shape[0] < 2:
        raise StatsError("one subject: kappa needs two or more to tell agreement from chance")
    if (counts.sum(axis=0) > 0).sum() < 2:
        raise StatsError("every rating is in one category: Fleiss' kappa is undefined (0/0)")
    return float(inter_rater.fleiss_kappa(counts, method="fleiss"))
