"""compare's unpaired branch: one shared case run several times by each system, its repeats
compared as two samples (Fisher's exact test and Newcombe's interval on verdicts, Welch's t on
scores)."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import confint_proportions_2indep

from ..stats import minimum_detectable_effect, no_spread_ci
from ._paired_intervals import no_estimate


def unpaired_estimate(
    metric: str, x: np.ndarray, y: np.ndarray, confidence: float, alpha: float, power: float
) -> dict:
    """One shared case run several times by each system: its repeats compared as two samples
    (the interval and the test are about that case alone)."""
    how = f"one case: its repeats compared unpaired ({x.size} and {y.size} runs)"
    base = {
        "value": float(x.mean()),
        "value_baseline": float(y.mean()),
        "delta": float(x.mean() - y.mean()),
        "p_wilcoxon": np.nan,
        "sd_diff": np.nan,
    }
    se2 = np.var(x, ddof=1) / x.size + np.var(y, ddof=1) / y.size  # squared standard error
    mde = minimum_detectable_effect(1, se2, alpha=alpha, power=power)
    mde = mde if mde > 0 else np.nan  # no spread on either side: nothing to power against
    if metric == "win_rate":
        return {**no_estimate("one case: a win rate needs several cases"), "value_baseline": 0.5}
    if metric == "pass_rate" and np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all():
        kx, ky = int(x.sum()), int(y.sum())
        low, high = confint_proportions_2indep(
            kx, x.size, ky, y.size, method="newcomb", alpha=1 - confidence
        )
        table = [[kx, x.size - kx], [ky, y.size - ky]]
        odds = ((kx + 0.5) * (y.size - ky + 0.5)) / ((x.size - kx + 0.5) * (ky + 0.5))
        return {
            **base,
            "ci_low": float(low),
            "ci_high": float(high),
            "test": "Fisher exact",
            "statistic": odds,
            "p_value": float(sps.fisher_exact(table)[1]),
            "effect_size": odds,
            "effect_size_name": "odds ratio (+0.5)",
            "mde": mde,
            "method": how + "; Newcombe interval",
        }
    spread = np.sqrt((np.var(x, ddof=1) + np.var(y, ddof=1)) / 2)
    statistic = np.nan
    if spread > 0:
        welch = sps.ttest_ind(x, y, equal_var=False)
        ci = welch.confidence_interval(confidence)
        low, high, p = float(ci.low), float(ci.high), float(welch.pvalue)
        statistic = float(welch.statistic)
        rank_p = float(sps.mannwhitneyu(x, y).pvalue)
    else:  # every run of each side scored the same: no spread to test against
        low, high = no_spread_ci(
            base["delta"], min(x.size, y.size), bounds=(-1.0, 1.0), confidence=confidence
        )
        p, rank_p = (1.0 if base["delta"] == 0 else np.nan), np.nan
        how += "; no spread within either side: Wilson floor for a difference bounded by +-1"
    return {
        **base,
        "ci_low": low,
        "ci_high": high,
        "test": "Welch t",
        "statistic": statistic,
        "p_value": p,
        "p_wilcoxon": rank_p,
        "effect_size": base["delta"] / spread if spread > 0 else np.nan,
        "effect_size_name": "Cohen's d",
        "mde": mde,
        "method": how + "; Welch interval",
    }
