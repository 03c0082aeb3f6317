"""Confidence intervals for proportions."""

from __future__ import annotations

from statsmodels.stats.proportion import proportion_confint

from ..errors import StatsError


def wilson_ci(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials (statsmodels' implementation).

    ``n`` may be an effective sample size (a float), as for a design-effect-adjusted clustered
    pass rate. n = 0 gives (nan, nan).

    Example:
        >>> [round(v, 4) for v in wilson_ci(8, 10)]
        [0.4902, 0.9433]
    """
    if n < 0 or k < 0 or k > n:
        raise StatsError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence}")
    if n == 0:
        return (float("nan"), float("nan"))
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return (float(low), float(high))
