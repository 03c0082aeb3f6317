"""compare's interval choice for paired cases: Newcombe's paired interval on 0/1 verdicts, the
paired t interval below 30 cases, a BCa bootstrap over cases from 30, the bounded-data floor when
every case differs alike."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from ..errors import StatsError
from ..stats import bootstrap_ci, minimum_detectable_effect, no_spread_ci, paired_proportion_ci
from ._paired_tests import paired_test

# Paired cases from which a case-difference interval is a BCa bootstrap; below it, the t interval
# of the paired t test beside it. With 4-5 cases the BCa interval was [0, 0.167] beside p = 0.391:
# a bootstrap over so few cases sees a handful of distinct resamples and comes out too narrow, and
# an interval from another method family than the test contradicted it.
BOOTSTRAP_FROM = 30
# The range of each metric's difference: a t interval is clipped to it, and says so.
DELTA_RANGE = {"pass_rate": (-1.0, 1.0), "win_rate": (-0.5, 0.5)}


def _t_interval(metric: str, diffs: np.ndarray, confidence: float) -> tuple[float, float, str]:
    """The interval of the one-sample t test on the case differences (the paired t test the
    row reports: it excludes 0 exactly when that test's p < 1 - confidence)."""
    ci = sps.ttest_1samp(diffs, 0.0).confidence_interval(confidence)
    low, high = float(ci.low), float(ci.high)
    how = f"paired t interval over {diffs.size} cases (fewer than {BOOTSTRAP_FROM}: no bootstrap)"
    if metric in DELTA_RANGE:
        floor, ceiling = DELTA_RANGE[metric]
        if low < floor or high > ceiling:
            low, high = max(low, floor), min(high, ceiling)
            how += f", clipped to [{floor:g}, {ceiling:g}]"
    return low, high, how


def no_estimate(reason: str) -> dict:
    """The estimate columns of a comparison the data cannot make, with the reason."""
    return {
        **dict.fromkeys(["value", "value_baseline", "delta", "ci_low", "ci_high"], np.nan),
        **dict.fromkeys(["statistic", "p_value", "p_wilcoxon", "effect_size"], np.nan),
        **dict.fromkeys(["sd_diff", "mde"], np.nan),
        "test": None,
        "effect_size_name": None,
        "method": reason,
    }


def paired_estimate(
    metric: str,
    x: np.ndarray,
    y: np.ndarray,
    confidence: float,
    alpha: float,
    power: float,
    n_resamples: int,
    seed: int | None,
    empty_reason: str = "not estimable: no case ran by both",
) -> dict:
    if x.shape != y.shape:  # never broadcast one side's runs against the other's
        raise StatsError(f"paired values differ in length ({x.size} and {y.size})")
    n = x.size
    if n == 0:
        return no_estimate(empty_reason)
    if metric == "win_rate":
        outcome = np.sign(x - y) * 0.5 + 0.5
        value, value_base, diffs = float(outcome.mean()), 0.5, outcome - 0.5
    else:
        value, value_base, diffs = float(x.mean()), float(y.mean()), x - y
    binary = metric == "pass_rate" and np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all()
    if binary:
        counts = (
            int(np.sum((x == 1) & (y == 1))),
            int(np.sum((x == 1) & (y == 0))),
            int(np.sum((x == 0) & (y == 1))),
            int(np.sum((x == 0) & (y == 0))),
        )
        _, low, high = paired_proportion_ci(*counts, confidence=confidence)
        how = f"Newcombe paired interval over {n} cases"
    elif n >= 2 and np.ptp(diffs) > 0 and n < BOOTSTRAP_FROM:
        low, high, how = _t_interval(metric, diffs, confidence)
    elif n >= 2 and np.ptp(diffs) > 0:
        ci = bootstrap_ci(diffs, confidence=confidence, n_resamples=n_resamples, seed=seed)
        low, high, how = ci.low, ci.high, f"BCa bootstrap over {n} paired cases"
    elif n >= 2:
        # no spread in the sample is not a certainty: the bounded-data floor (Wilson)
        bound = 0.5 if metric == "win_rate" else 1.0
        low, high = no_spread_ci(
            float(diffs.mean()), n, bounds=(-bound, bound), confidence=confidence
        )
        how = (
            f"every paired case differs by the same amount ({n} cases): Wilson interval for a "
            f"difference bounded by +-{bound:g} (no sample spread)"
        )
    else:
        low, high, how = np.nan, np.nan, "n < 2: no interval"
    sd = float(np.std(diffs, ddof=1)) if n > 1 else np.nan
    mde = (
        minimum_detectable_effect(n, sd**2, alpha=alpha, power=power)
        if n > 1 and sd > 0
        else np.nan
    )
    return {
        "value": value,
        "value_baseline": value_base,
        "delta": float(diffs.mean()),
        "ci_low": low,
        "ci_high": high,
        **paired_test(metric, x, y),
        "sd_diff": sd,
        "mde": mde,
        "method": how,
    }
