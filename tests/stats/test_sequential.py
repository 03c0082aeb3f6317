"""The anytime-valid interval of adaptive repeats: coverage under data-dependent stopping (a
small version of benchmarks/bench_adaptive.py), unbiased skipping, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from jevalkit.errors import StatsError, UsageError
from jevalkit.stats import (
    AdaptiveRepeats,
    SweepSequence,
    confidence_sequence,
    normal_mixture_radius,
)


def simulate(p, plan, rng):
    seq = plan.sequence(p.size)
    sweep = rounds = 0
    covered_always = True
    while sweep < plan.max_repeats:
        n, prob = plan.next_round(seq, rounds, sweep, 1)
        for k in range(n):
            chosen = plan.sweep_draw(sweep + k, prob) if rounds else np.ones(p.size, bool)
            seq.add_sweep(np.where(chosen, (rng.random(p.size) < p).astype(float), np.nan), prob)
        sweep, rounds = sweep + n, rounds + 1
        low, high = seq.interval()
        covered_always &= low <= p.mean() <= high
        if plan.stop_reason(seq):
            break
    return covered_always


@pytest.mark.parametrize("p", [[0.5], [0.05, 0.95, 0.5, 0.7, 0.9, 0.1, 0.3, 0.99]])
def test_coverage_holds_at_every_round_of_adaptive_runs(p):
    p = np.asarray(p)
    rng = np.random.default_rng(1)
    plan = AdaptiveRepeats(target_half_width=0.12, max_repeats=300)
    covered = [simulate(p, plan, rng) for _ in range(300)]
    misses = 300 - sum(covered)
    # at most 5% in truth; 27 or more misses out of 300 has probability < 0.001 if it holds
    assert stats.binom.sf(misses - 1, 300, 0.05) > 0.001, misses


def test_skipping_settled_cases_keeps_the_estimate_unbiased():
    rng = np.random.default_rng(2)
    p = np.array([0.98, 0.02, 0.5])
    prob = np.array([0.25, 0.25, 1.0])
    centres = []
    for _ in range(400):
        seq = SweepSequence(3)
        for _ in range(40):
            chosen = rng.random(3) < prob
            seq.add_sweep(np.where(chosen, (rng.random(3) < p).astype(float), np.nan), prob)
        w = seq._side_weight["low"]
        centres.append(seq._sum["low"] / w)  # the bet-weighted mean of the pseudo-scores
    assert np.mean(centres) == pytest.approx(p.mean(), abs=0.01)


def test_more_data_narrows_the_interval_and_fixed_rows_agree_with_the_class():
    x = (np.random.default_rng(3).random((400, 4)) < [0.2, 0.4, 0.6, 0.8]).astype(float)
    short = confidence_sequence(x[:50]).iloc[0]
    long = confidence_sequence(x).iloc[0]
    assert long["half_width"] < short["half_width"]
    assert long["ci_low"] < 0.5 < long["ci_high"] and long["n_scores"] == 1600
    seq = SweepSequence(4)
    for sweep in x:
        seq.add_sweep(sweep)
    assert seq.interval() == (long["ci_low"], long["ci_high"])


def test_bad_input_is_refused():
    seq = SweepSequence(2)
    with pytest.raises(StatsError, match="one score per case"):
        seq.add_sweep([1.0])
    with pytest.raises(StatsError, match="sent with probability 1 has no score"):
        seq.add_sweep([1.0, np.nan])
    with pytest.raises(StatsError, match=r"scores must lie in \[0, 1\]"):
        seq.add_sweep([1.0, 3.0])
    with pytest.raises(StatsError, match="drop the sweeps with errors"):
        confidence_sequence([[1.0, np.nan]])


def test_the_normal_mixture_radius_is_confseqs():
    """The reference values of confseq's tests (Howard's implementation, from a reference in
    R): the two-sided normal mixture tuned at V = 100, alpha = 0.05, bound 30.35209 at V = 100
    (its mixture variance 12.60056)."""
    assert float(normal_mixture_radius(100.0, tuned_at=100.0)) == pytest.approx(30.35209, abs=1e-5)
    rho = 100 / (2 * np.log(20) + np.log1p(2 * np.log(20)))
    assert rho == pytest.approx(12.60056, abs=1e-5)
    at_zero = float(normal_mixture_radius(0.0, tuned_at=100.0))
    assert at_zero == pytest.approx(np.sqrt(rho * 2 * np.log(20)))  # never zero-width
    with pytest.raises(StatsError, match="confidence must be between 0 and 1"):
        normal_mixture_radius(1.0, tuned_at=1.0, confidence=1.0)
    with pytest.raises(StatsError, match="tuned_at must be a positive variance"):
        normal_mixture_radius(1.0, tuned_at=0.0)
    with pytest.raises(StatsError, match="variance must be a number of at least 0"):
        normal_mixture_radius(-1.0, tuned_at=1.0)


def test_a_gaussian_random_walk_crosses_the_radius_rarely_and_the_fixed_bound_often():
    """Exact for Gaussian increments: over 1,000 steps, a random walk leaves +/- radius(t) at
    any step in at most about 5% of 2,000 walks; the fixed-time 1.96 sqrt(t) bound, read at
    every step, is left in far more of them."""
    rng = np.random.default_rng(11)
    walks = np.cumsum(rng.standard_normal((2000, 1000)), axis=1)
    t = np.arange(1, 1001)
    radius = normal_mixture_radius(t.astype(float), tuned_at=500.0)
    crossed = (np.abs(walks) > radius).any(axis=1).mean()
    peeked = (np.abs(walks) > 1.96 * np.sqrt(t)).any(axis=1).mean()
    assert crossed <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 2000), crossed
    assert peeked > 0.3, peeked


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"confidence": "0.9"}, "confidence must be between 0 and 1"),
        ({"decide_at": "0.5"}, "decide_at must be in"),
        ({"settled_share": None}, "settled_share must be in"),
        ({"settled_probability": True}, "settled_probability in"),
    ],
)
def test_adaptive_repeats_refuse_settings_that_are_not_numbers_in_one_line(given, says):
    """A string or None where a number belongs was a TypeError traceback from a comparison."""
    with pytest.raises(UsageError, match=says):
        AdaptiveRepeats(target_half_width=0.1, **given)
