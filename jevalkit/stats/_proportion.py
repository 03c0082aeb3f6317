"""Confidence intervals for proportions."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from ..contract import Result, estimator
from ..errors import StatsError


@dataclass(frozen=True)
class Bounds(Result):
    """An interval: unpacks as ``(low, high)``; also its estimate, n and method.

    Example:
        >>> low, high = wilson_ci(8, 10)
        >>> wilson_ci(8, 10).table()[["n", "value"]].to_dict("records")
        [{'n': 10.0, 'value': 0.8}]
    """

    low: float
    high: float
    estimate: float
    n: float
    method: str
    _unpack = ("low", "high")

    def table(self) -> pd.DataFrame:
        """One row: ``n``, ``value``, ``ci_low``, ``ci_high``, ``method``."""
        return pd.DataFrame(
            [
                {
                    "n": self.n,
                    "value": self.estimate,
                    "ci_low": self.low,
                    "ci_high": self.high,
                    "method": self.method,
                }
            ]
        )


@dataclass(frozen=True)
class Difference(Result):
    """A difference with its interval: unpacks as ``(estimate, low, high)``; also n and method.

    Example:
        >>> d, low, high = paired_proportion_ci(5, 3, 1, 11)
        >>> paired_proportion_ci(5, 3, 1, 11).table()["method"][0]
        'Newcombe square-and-add interval (method 10) over 20 pairs'
    """

    estimate: float
    low: float
    high: float
    n: float
    method: str
    _unpack = ("estimate", "low", "high")

    def table(self) -> pd.DataFrame:
        """One row: ``n``, ``value``, ``ci_low``, ``ci_high``, ``method``."""
        return Bounds(self.low, self.high, self.estimate, self.n, self.method).table()


def _counts(frame: pd.DataFrame) -> tuple[int, int]:
    """The contract test's adapter input: passes and trials of a results frame."""
    return int(frame["passed"].astype(float).sum()), len(frame)


def _paired_counts(frame: pd.DataFrame) -> tuple[int, int, int, int]:
    wide = frame.pivot_table(index="case_id", columns="system", values="passed", aggfunc="max")
    first, second = sorted(wide.columns)[:2]
    a, b = wide[first].astype(float).to_numpy(), wide[second].astype(float).to_numpy()
    if not np.isin(np.r_[a, b], (0.0, 1.0)).all():
        raise StatsError("paired counts need 0/1 verdicts")
    return (
        int(np.sum((a == 1) & (b == 1))),
        int(np.sum((a == 1) & (b == 0))),
        int(np.sum((a == 0) & (b == 1))),
        int(np.sum((a == 0) & (b == 0))),
    )


def _wilson_ci_adapter(frame: pd.DataFrame) -> Bounds:
    return wilson_ci(*_counts(frame))


@estimator(
    unit="trial",
    estimand="a proportion",
    interval="Wilson score",
    checks=("order", "rename", "scale", "no_spread", "method"),
    adapter=_wilson_ci_adapter,
    calibration="pass_rate",
)
def wilson_ci(k: float, n: float, confidence: float = 0.95) -> Bounds:
    """The Wilson score interval for k successes in n trials (statsmodels' implementation).

    ``n`` may be an effective sample size (a float), as for a design-effect-adjusted clustered
    pass rate. n = 0 gives (nan, nan). Returns :class:`Bounds` (unpacks as ``(low, high)``).

    Example:
        >>> [round(v, 4) for v in wilson_ci(8, 10)]
        [0.4902, 0.9433]
    """
    if n < 0 or k < 0 or k > n:
        raise StatsError(f"need 0 <= k <= n, got k={k}, n={n}: k counts verdicts (True/False)")
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence}")
    if n == 0:
        return Bounds(math.nan, math.nan, math.nan, 0.0, "n = 0: no interval")
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    p = k / n  # rounding can put an end a hair past the estimate (5.6e-17 above 0 of n)
    return Bounds(
        float(min(low, p)), float(max(high, p)), float(p), float(n), "Wilson score interval"
    )


def _paired_proportion_ci_adapter(frame: pd.DataFrame) -> Difference:
    return paired_proportion_ci(*_paired_counts(frame))


@estimator(
    unit="pair",
    estimand="a difference of paired proportions",
    interval="Newcombe square-and-add",
    checks=("order", "rename", "no_spread", "method"),
    adapter=_paired_proportion_ci_adapter,
    calibration="compare",
)
def paired_proportion_ci(
    both: int, only_first: int, only_second: int, neither: int, confidence: float = 0.95
) -> Difference:
    """Newcombe's square-and-add interval for the difference of two paired proportions (his
    method 10), from the paired 2x2 counts; returns (difference, low, high).

    The difference is p1 - p2 = (only_first - only_second) / n. Each proportion gets its Wilson
    interval, and the two are combined with the estimated correlation of the pair (phi, with
    Newcombe's continuity adjustment). It keeps its coverage with few discordant pairs, where a
    bootstrap of the differences does not.

    References:
        Newcombe, R. G. (1998). Improved confidence intervals for the difference between binomial
        proportions based on paired data. Statistics in Medicine 17, 2635-2650.
        Fagerland, M. W., Lydersen, S. & Laake, P. (2017). Statistical Analysis of Contingency
        Tables, ch. 8.

    Example:
        >>> d, low, high = paired_proportion_ci(59, 6, 16, 80)  # Cavo et al. (2012), n = 161
        >>> round(d, 4), low < d < high
        (-0.0621, True)
    """
    counts = (both, only_first, only_second, neither)
    if any(c < 0 for c in counts) or sum(counts) == 0:
        raise StatsError(f"need non-negative counts with a positive total, got {counts}")
    n = float(sum(counts))
    first, second = both + only_first, both + only_second
    p1, p2 = first / n, second / n
    l1, u1 = wilson_ci(first, n, confidence)
    l2, u2 = wilson_ci(second, n, confidence)
    margins = (first, n - first, second, n - second)
    if min(margins) == 0:
        phi = 0.0
    else:
        a = both * neither - only_first * only_second
        spread = (margins[0] * margins[1] * margins[2] * margins[3]) ** 0.5
        phi = (a - n / 2) / spread if a > n / 2 else (0.0 if a >= 0 else a / spread)
    d = p1 - p2
    low = d - ((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)) ** 0.5
    high = d + ((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)) ** 0.5
    method = f"Newcombe square-and-add interval (method 10) over {int(n)} pairs"
    low, high = max(-1.0, low), min(1.0, high)
    if high <= low:  # no discordant pair and every pair alike: no width to report
        return Difference(float(d), math.nan, math.nan, n, method + ": no spread, no interval")
    return Difference(float(d), float(low), float(high), n, method)


def _no_spread_ci_adapter(frame: pd.DataFrame) -> Bounds:
    return no_spread_ci(float(frame["score"].mean()), len(frame))


@estimator(
    unit="value",
    estimand="a bounded mean whose sample shows no spread",
    interval="Wilson at the same mean",
    checks=("order", "scale", "no_spread", "method"),
    adapter=_no_spread_ci_adapter,
    calibration="no_spread_ci",
)
def no_spread_ci(
    mean: float, n: int, *, bounds: tuple[float, float] = (0.0, 1.0), confidence: float = 0.95
) -> Bounds:
    """The interval for a mean of ``n`` values bounded by ``bounds`` when the sample shows no
    spread (every value the same): the Wilson interval for the mean's position within the bounds
    as a proportion of ``n`` trials, mapped back.

    A t or bootstrap interval collapses to a point there (five passes of five give [1, 1]); yet a
    bounded variable whose sample happens not to vary may still vary in the population, and the
    widest variance a bounded variable with this mean can have is the Bernoulli one. So the
    Wilson interval at the same mean is the honest floor, and every metric uses this one rule.
    It is conservative by design: ``benchmarks/calibration.py`` finds 99.7-100% coverage for
    mean_score on five values with true means 0.9 and 0.97 (samples without spread are
    common there), above the 95% asked for.

    Example:
        >>> [round(v, 3) for v in no_spread_ci(1.0, 5)]
        [0.566, 1.0]
        >>> [round(v, 3) for v in no_spread_ci(0.0, 5, bounds=(-1.0, 1.0))]
        [-0.659, 0.659]
    """
    low, high = (float(b) for b in bounds)
    if not high > low or not low <= mean <= high:
        raise StatsError(f"mean {mean} outside bounds={bounds}: need low <= mean <= high")
    if n < 1:
        return Bounds(math.nan, math.nan, float(mean), float(n), "n = 0: no interval")
    share = (mean - low) / (high - low)
    lo, hi = wilson_ci(share * n, n, confidence)
    return Bounds(
        low + lo * (high - low),
        low + hi * (high - low),
        float(mean),
        float(n),
        "Wilson interval at the same mean (no spread)",
    )
