"""One interval for a share of 0/1 outcomes with repeats: the case-clustered Wilson interval.

:func:`pass_rate` (every row weighted equally) and :func:`mean_score` on 0/1 scores (every
case weighted equally) both call :func:`clustered_wilson`, so the same verdicts get the same
interval from either (issue 36 item 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

# how each group's interval was made
EMPTY, CLUSTERED, NO_SPREAD, ONE_CASE, INDEPENDENT = range(5)


@dataclass(frozen=True)
class Share:
    """Per group: the share, its interval and how it was made (arrays of length n_groups)."""

    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    design_effect: np.ndarray
    n_effective: np.ndarray
    n_rows: np.ndarray
    n_cases: np.ndarray
    kind: np.ndarray  # EMPTY, CLUSTERED, NO_SPREAD, ONE_CASE or INDEPENDENT


def clustered_wilson(
    x: np.ndarray,
    group: np.ndarray,
    case: np.ndarray,
    n_groups: int,
    *,
    confidence: float = 0.95,
    per_case: bool = False,
) -> Share:
    """The Wilson interval at the effective n of case-clustered 0/1 outcomes, per group.

    ``x`` (0/1 per row), ``group`` (0..n_groups-1 per row), ``case`` (a code per row, unique
    across groups). ``per_case=False`` estimates the share of rows (``pass_rate``);
    ``per_case=True`` the mean of case means (``mean_score``: every case weighted equally,
    whatever its repeats; with equal repeats the two are the same number).

    The design effect is the cluster-robust (CR1) variance of the estimate over the variance a
    binomial share of the same rows would have, truncated at 1 (repeats never count for more
    than independent rows); the effective n (rows / design effect) is carried to G - 1 degrees
    of freedom as Korn and Graubard (1998) do. Without spread (every row passed, or none, or
    every case mean equals the share) the correlation of the repeats cannot be estimated: the
    effective n is then the number of cases. A group of one case treats its repeats as
    independent draws of that case.
    """
    x = np.asarray(x, dtype=float)
    n_codes = int(case.max()) + 1 if case.size else 0
    size = np.bincount(case, minlength=n_codes)
    present = size > 0
    case_group = np.zeros(n_codes, dtype=np.int64)
    case_group[case] = group
    n_cases = np.bincount(case_group[present], minlength=n_groups)
    n = np.bincount(group, minlength=n_groups)
    # row weights: 1 (the share of rows) or 1 / repeats of the row's case (mean of case means)
    w = 1.0 / size[case] if per_case else np.ones_like(x)
    w_sum = np.bincount(group, w, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.bincount(group, w * x, minlength=n_groups) / w_sum
        dev = x - value[group]
        # the variance of a share of n independent rows (the design effect's baseline), as
        # the sample variance of the 0/1 rows over n: p (1 - p) / (n - 1)
        iid = value * (1 - value) / (n - 1)
        totals = np.bincount(case, w * dev, minlength=n_codes)
        g_cases = np.maximum(n_cases, 1)
        cr1 = n_cases / np.maximum(n_cases - 1, 1)
        clustered = cr1 * np.bincount(case_group, totals**2, minlength=n_groups) / w_sum**2
        deff = np.maximum(clustered / iid, 1.0)
    repeated = (n_cases >= 2) & (n_cases < n)
    spread = (value > 0) & (value < 1) & (clustered > 1e-24) & (iid > 0)
    kind = np.full(n_groups, INDEPENDENT)
    kind[repeated & spread] = CLUSTERED
    kind[repeated & ~spread] = NO_SPREAD
    kind[(n_cases == 1) & (n > 1)] = ONE_CASE
    kind[n == 0] = EMPTY
    deff = np.where(kind == CLUSTERED, deff, 1.0)
    deff = np.where(kind == NO_SPREAD, n / g_cases, deff)
    n_eff = n / np.where(n > 0, deff, 1.0)
    # Korn and Graubard (1998): the effective n carried to G - 1 degrees of freedom, so the
    # Wilson interval has the t tails of an interval over G cases
    z = sps.norm.ppf(0.5 + confidence / 2)
    df_scale = (z / sps.t.ppf(0.5 + confidence / 2, np.maximum(n_cases - 1, 1))) ** 2
    n_eff = np.where(kind == CLUSTERED, n_eff * df_scale, n_eff)
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    has = n > 0
    if has.any():
        low[has], high[has] = proportion_confint(
            value[has] * n_eff[has], n_eff[has], alpha=1 - confidence, method="wilson"
        )
        # rounding must not exclude the estimate
        low[has] = np.minimum(low[has], value[has])
        high[has] = np.maximum(high[has], value[has])
    se = np.where(kind == CLUSTERED, np.sqrt(clustered), np.sqrt(iid))
    se = np.where(kind == NO_SPREAD, 0.0, se)
    se = np.where(has & (n > 1), se, np.nan)
    return Share(
        value=np.where(has, value, np.nan),
        low=low,
        high=high,
        se=se,
        design_effect=deff,
        n_effective=n_eff,
        n_rows=n,
        n_cases=n_cases,
        kind=kind,
    )


def share_method(kind: int, n_cases: int, case_label: str, *, unit_case: bool = True) -> str:
    """The ``method`` text of one group's :func:`clustered_wilson` interval."""
    if kind == EMPTY:
        return "n = 0: no interval"
    if kind == CLUSTERED:
        return f"Wilson, case-clustered (design effect, Korn-Graubard df; case = {case_label})"
    if kind == NO_SPREAD:
        return (
            f"Wilson over {n_cases} cases ({case_label}): without spread the repeats' "
            "correlation cannot be estimated, so the effective n is the number of cases"
        )
    if kind == ONE_CASE and unit_case:
        return f"Wilson over repeats of one case ({case_label})"
    return "Wilson"
