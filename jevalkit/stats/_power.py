"""How many cases and how many repeats: the repeats curve of a pilot and Miller's power formula."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps

from ..contract import Result, estimator, prepare
from ..errors import StatsError
from ._dstudy import RESIDUAL
from ._gstudy import variance_components
from ._validate import as_clean_array, as_labels


def _between_within(x: np.ndarray, codes: np.ndarray) -> dict:
    """Between- and within-case variance of pilot scores (k repeats per case): the one-facet
    G-study (:func:`variance_components` with the facet ``case``; ANOVA when every case has
    the same number of repeats, REML otherwise). One case: between is 0 (nothing to spread)."""
    counts = np.bincount(codes)
    counts = counts[counts > 0]
    if counts.min() < 2:
        raise StatsError("every case needs at least 2 repeats to measure within-case variance")
    k_bar = float(counts.mean())
    if counts.size == 1:
        return {"between": 0.0, "within": float(np.var(x, ddof=1)), "n_cases": 1, "k": k_bar}
    frame = pd.DataFrame({"case": codes, "score": x})
    study = variance_components(frame, case="case", system=None, repeat=None)
    return {
        "between": study.variance("case"),
        "within": study.variance(RESIDUAL),
        "n_cases": int(counts.size),
        "k": k_bar,
    }


@dataclass(frozen=True, eq=False)
class RepeatsCurve(Result):
    """The standard error of a mean score against the repeats per case (:func:`repeats_needed`).

    Attributes:
        curve: one row per K: ``repeats``, ``se``, ``se_infinite`` (the floor no K goes below),
            ``between``, ``within``, ``n_cases``, ``enough`` (K >= the recommendation).
        recommended_repeats: the smallest K past which repeats stop paying (None when the
            between-case variance is 0: then only more cases help, or nothing varies).
        between, within: the variance components of the pilot.
        n_cases: the cases the curve is for.
    """

    curve: pd.DataFrame
    recommended_repeats: int | None
    between: float
    within: float
    n_cases: int

    def table(self) -> pd.DataFrame:
        """The curve, one row per K."""
        return self.curve.copy()


def _curve_of_results(frame: pd.DataFrame) -> RepeatsCurve:
    """The contract test's adapter input: one system's scores by case."""
    first = frame[frame["system"] == sorted(frame["system"].unique())[0]]
    return repeats_needed(first["score"], first["case_id"], max_repeats=5)


@estimator(
    unit="case",
    estimand="standard error of the mean against repeats per case",
    interval="none (a planning curve)",
    data="results",
    checks=("order", "rename", "one_case", "scale"),
    adapter=_curve_of_results,
    note="a planning curve from the one-facet G-study; pinned in tests/stats",
)
def repeats_needed(
    scores: ArrayLike,
    case: ArrayLike,
    *,
    max_repeats: int = 20,
    tolerance: float = 0.1,
    n_cases: int | None = None,
    orders: ArrayLike | None = None,
    scale: tuple[float, float] | None = None,
) -> RepeatsCurve:
    """Standard error of the mean score against the number of repeats K, from pilot data.

    Var(mean) = (Var(x) + E[sigma_i^2] / K) / n (Miller 2024, section 3), with Var(x) the
    between-case and E[sigma_i^2] the within-case variance: the case component and the residual
    of the one-facet G-study (:func:`variance_components`).

    Args:
        scores, case: pilot scores and their case labels (at least 2 repeats per case).
        max_repeats: the curve runs K = 1..max_repeats.
        tolerance: repeats "stop paying" at the smallest K whose within-case term adds at most
            this share to the variance of K = infinity: E[sigma^2] / K <= tolerance * Var(x).
        n_cases: cases in the planned eval (default: as in the pilot).
        orders: for pairwise games played in both orders, which order each score comes from.
            The difference between a case's two orders is then part of the case (every case is
            played in both orders, so more repeats do not shrink it): the within-case variance
            is measured between repeats of one case and order, and K counts repeats of each
            order. Without it, the order effect would pass for repeat noise and inflate K.
        scale: ``(low, high)`` of raw grades, normalised to [0, 1] first (the curve's standard
            errors are then on [0, 1], as ``mean_score(scale=...)`` reports); without it,
            scores outside [0, 1] are refused.

    Returns:
        A :class:`RepeatsCurve` (``.table()``: one row per K).

    Example:
        >>> r = repeats_needed([1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1], list("aaabbbcccddd"), max_repeats=5)
        >>> r.curve["se"].is_monotonic_decreasing, r.recommended_repeats
        (True, 14)
    """
    if max_repeats < 1:
        raise StatsError(f"max_repeats must be at least 1, got {max_repeats}")
    x = as_clean_array(scores, "scores", min_n=2)
    x = prepare(x, "scores", kind="score", scale=scale).values  # the scale rule, once
    codes = as_labels(case, x.size, "case")
    vc = _between_within(x, codes) if orders is None else _by_order_components(x, codes, orders)
    n = n_cases or vc["n_cases"]
    ks = np.arange(1, max_repeats + 1)
    se = np.sqrt((vc["between"] + vc["within"] / ks) / n)
    recommended = (
        math.ceil(vc["within"] / (tolerance * vc["between"])) if vc["between"] > 0 else None
    )
    curve = pd.DataFrame(
        {
            "repeats": ks,
            "se": se,
            "se_infinite": math.sqrt(vc["between"] / n),
            "between": vc["between"],
            "within": vc["within"],
            "n_cases": n,
            "enough": ks >= recommended if recommended is not None else False,
        }
    )
    return RepeatsCurve(curve, recommended, vc["between"], vc["within"], int(n))


def _by_order_components(x: np.ndarray, codes: np.ndarray, orders: ArrayLike) -> dict:
    """Variance components when every case is played in each of several orders: within from
    the repeats of one case and order, divided by the number of orders (each K repeats every
    order); between from the cases' means over their orders."""
    order = as_labels(orders, x.size, "orders")
    n_orders = int(order.max()) + 1
    per_case = pd.Series(order).groupby(codes).nunique()
    if (per_case != n_orders).any():
        raise StatsError(
            f"{int((per_case != n_orders).sum())} case(s) were not played in all {n_orders} "
            "orders: give orders only for games played in every order"
        )
    cell = _between_within(x, codes * n_orders + order)
    case_means = pd.Series(x).groupby([codes, order]).mean().groupby(level=0).mean()
    within = cell["within"] / n_orders
    total = float(case_means.var(ddof=1)) if len(case_means) > 1 else 0.0
    between = max(0.0, total - within / cell["k"])
    return {"between": between, "within": within, "n_cases": len(case_means), "k": cell["k"]}


def _pilot_difference_variance(frame: pd.DataFrame) -> float:
    """The contract test's adapter input: the variance of the first two systems' per-case
    mean differences (a pilot's omega^2)."""
    wide = frame.pivot_table(index="case_id", columns="system", values="score", aggfunc="mean")
    first, second = sorted(wide.columns)[:2]
    return float((wide[second] - wide[first]).var(ddof=1))


def _no_variance(what: str) -> StatsError:
    return StatsError(
        f"{what} is 0 (a pilot without spread): it cannot plan a sample, since a sample that "
        "happened not to vary says little about the variance; give the variance you expect "
        "(at most 0.25 for scores in [0, 1])"
    )


def _margin_of_error_n_adapter(frame: pd.DataFrame) -> int:
    return margin_of_error_n(proportion=float(frame["passed"].astype(float).mean()), margin=0.05)


@estimator(
    unit="case",
    estimand="cases for an interval of a given half-width",
    interval="none (a planning number)",
    checks=("order", "rename", "scale"),
    adapter=_margin_of_error_n_adapter,
    note="Cochran's formula; pinned in tests/stats",
)
def margin_of_error_n(
    sigma: float | None = None,
    margin: float = 0.05,
    *,
    proportion: float | None = None,
    confidence: float = 0.95,
) -> int:
    """Cases needed for a confidence interval of half-width ``margin``: n = (z sigma / E)^2, or
    for a proportion n = z^2 p (1 - p) / E^2 (use p = 0.5 when unknown: the worst case).

    A proportion of 0 or 1, or ``sigma`` 0, is refused: the formula would answer 0 cases, yet
    a pilot that did not vary says little about the spread.

    Example:
        >>> margin_of_error_n(proportion=0.5, margin=0.05)
        385
        >>> margin_of_error_n(sigma=0.3, margin=0.02)
        865
    """
    if margin <= 0:
        raise StatsError(f"margin must be positive, got {margin}")
    z = sps.norm.ppf(0.5 + confidence / 2)
    if proportion is not None:
        if not 0 <= proportion <= 1:
            raise StatsError(f"proportion {proportion} is outside [0, 1]: give a share of cases")
        if proportion in (0, 1):
            raise _no_variance(f"proportion {proportion:g} gives a variance p (1 - p) that")
        return math.ceil(z**2 * proportion * (1 - proportion) / margin**2)
    if sigma is None or sigma < 0:
        raise StatsError("give sigma (the score's standard deviation) or proportion")
    if sigma == 0:
        raise _no_variance("sigma")
    return math.ceil((z * sigma / margin) ** 2)


def _sample_size_adapter(frame: pd.DataFrame) -> int:
    return sample_size(0.1, _pilot_difference_variance(frame))


@estimator(
    unit="case",
    estimand="paired cases to detect a difference with a given power",
    interval="none (a planning number)",
    checks=("order", "rename", "one_case", "no_spread"),
    adapter=_sample_size_adapter,
    note="Miller (2024) eq. 10; pinned to his worked example in tests/stats",
)
def sample_size(
    delta: float,
    omega2: float | None = None,
    *,
    between_var: float | None = None,
    within_var: float | None = None,
    repeats: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """Cases needed to detect a difference ``delta`` between two systems (Miller 2024, eq. 10):
    n = (z_{1-alpha/2} + z_{power})^2 omega^2 / delta^2.

    ``omega2`` is the variance of the per-question score difference; or give its parts, and it is
    ``between_var + within_var / repeats`` (repeats shrink only the within-question part). A
    variance of 0 is refused (it would answer 0 cases).

    Example:
        >>> sample_size(0.03, omega2=1/9)  # Miller's worked example: about 969
        969
    """
    if delta == 0:
        raise StatsError("delta must be non-zero")
    if omega2 is None:
        if between_var is None or within_var is None:
            raise StatsError("give omega2, or both between_var and within_var")
        omega2 = between_var + within_var / repeats
    if not omega2 >= 0:  # negative, or NaN: the variance of one case's difference
        raise StatsError(
            f"omega2 must be a non-negative variance, got {omega2} (a pilot of one case has "
            "none: pilot two or more cases)"
        )
    if omega2 == 0:
        raise _no_variance("the variance of the differences (omega2)")
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    return math.ceil(z**2 * omega2 / delta**2)


def _minimum_detectable_effect_adapter(frame: pd.DataFrame) -> float:
    return minimum_detectable_effect(frame["case_id"].nunique(), _pilot_difference_variance(frame))


@estimator(
    unit="case",
    estimand="the smallest difference n paired cases detect with a given power",
    interval="none (a planning number)",
    checks=("order", "rename"),
    adapter=_minimum_detectable_effect_adapter,
    note="Miller (2024) eq. 10 inverted; pinned in tests/stats",
    unchecked="a number from two numbers (n, a variance): no frame of its own (scale, keys, "
    "duplicates, settings: the caller's input step) and no interval; a variance of 0 or NaN "
    "(no spread, one case) gives NaN, never an effect of 0, in tests/stats",
)
def minimum_detectable_effect(
    n: int | float, omega2: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest difference ``n`` paired cases detect with ``power`` at level ``alpha``:
    :func:`sample_size` inverted, delta = (z_{1-alpha/2} + z_{power}) omega / sqrt(n).

    A variance of 0 (or NaN) gives NaN: nothing to power against, never an effect of 0.

    Example:
        >>> round(minimum_detectable_effect(969, omega2=1/9), 4)  # Miller's example, inverted
        0.03
        >>> minimum_detectable_effect(50, 0.0)
        nan
    """
    if n <= 0:
        raise StatsError(f"n must be positive, got {n}")
    if omega2 < 0:
        raise StatsError(f"omega2 must be non-negative, got {omega2}")
    if not omega2 > 0:
        return math.nan
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    return float(z * math.sqrt(omega2 / n))
