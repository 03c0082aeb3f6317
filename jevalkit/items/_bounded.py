"""Intervals for a full-benchmark score from pass/fail cases that respect the score's bounds:
the Wilson interval at a design's effective sample size, and the end an interval must reach
when every scored case agreed."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

# the least design effect a stratified or model-assisted design is credited with
DEFF_FLOOR = 0.5


def effective_wilson(value, var, n, n_total, dof, confidence, *, unit):
    """The Wilson interval at the effective n of a sample of n of n_total pass/fail cases whose
    estimate ``value`` has variance ``var`` (Korn and Graubard 1998; Dean and Pagano 2015): the
    design effect is ``var`` over the Bernoulli variance of as many uniform random cases
    (finite-population corrected), at least ``DEFF_FLOOR``; the Wilson interval at
    n / ((1 - n / N) deff) trials, its z the t quantile on ``dof`` degrees of freedom, ties the
    variance to the candidate proportion, so it never collapses to a point and reaches further
    towards the middle than towards the nearer bound. Returns (low, high, how); ``unit`` names
    the cases (``anchors``, ``draws``) in how.
    """
    fpc = 1 - n / n_total
    if fpc <= 0:  # every item is scored: the mean is the full score
        return value, value, "every item scored: the full score"
    t = sps.t.ppf((1 + confidence) / 2, dof)
    srs = value * (1 - value) * fpc / n
    # cases that show no spread show no gain from the design either, nor an estimate at 0 or 1
    # (no Bernoulli variance to compare with): design effect 1
    spread = var > 0 and srs > 0
    deff = max(var / srs, DEFF_FLOOR) if spread else 1.0
    n_eff = n / (fpc * deff)
    # the Wilson interval at z = t, given by its tail (2 Phi(t) - 1 rounds to 1 on 1 df, t 12.7)
    low, high = proportion_confint(value * n_eff, n_eff, alpha=2 * sps.norm.sf(t), method="wilson")
    low, high = min(low, value), max(high, value)  # rounding can put an end past it
    floor = (
        f"at least {DEFF_FLOOR:g}"
        if spread
        else "no spread within the strata"
        if not var > 0
        else "estimate at a bound"
    )
    interval = (
        f"pass/fail {unit}: Wilson interval at the effective n {n_eff:.1f} (Korn-Graubard; "
        f"design effect {deff:.2f}, {floor}; t quantile on {dof} df)"
    )
    return float(low), float(high), interval


def reach_agreed(low: float, high: float, scores: np.ndarray) -> tuple[float, float, str]:
    """An interval from draws that all scored 0 (or all 1) reaches 0 (or 1), and what was done.

    Why: a benchmark whose every case scores 0 gives draws that all score 0, whatever the
    design; an interval that holds 95% of the time for it must then hold 0 on (nearly) every
    such set of draws. The model-assisted estimate of such draws is its predictions' sum, above
    0, and its interval stopped short of it: the AlpacaEval reference system (it wins none of
    its 805 instructions against itself) was reported at 2.9% [1.5%, 4.9%] after 25 losses in
    25 draws. NaN ends (one case: no interval) stay NaN."""
    scores = np.asarray(scores, dtype=float)
    if scores.size and (scores == 0).all() and low > 0:
        return (
            0.0,
            high,
            f"; every scored case was 0, as on a benchmark scoring 0: low end 0 (was {low:.4f})",
        )
    if scores.size and (scores == 1).all() and high < 1:
        return (
            low,
            1.0,
            f"; every scored case was 1, as on a benchmark scoring 1: high end 1 (was {high:.4f})",
        )
    return low, high, ""
