"""Conformal risk control of a judge's decided-and-wrong rate (issue 51, item 4)."""

from __future__ import annotations

import numpy as np
import pytest

from jevalkit.errors import StatsError
from jevalkit.stats import risk_controlled_threshold, selective_threshold


def crc_by_the_formula(conf, agree, alpha, n_total=None):
    """Conformal risk control written out from the paper: lambda-hat is the smallest lambda
    with (n / (n + 1)) Rhat(lambda) + B / (n + 1) <= alpha, B = 1, over the candidate
    thresholds (each calibration confidence, and +inf: decide nothing)."""
    conf, agree = np.asarray(conf, float), np.asarray(agree, bool)
    n = conf.size if n_total is None else n_total
    best = np.inf
    for lam in sorted(set(conf.tolist()), reverse=True):
        loss = (conf >= lam) & ~agree  # decided and wrong
        rhat = loss.sum() / n
        if n / (n + 1) * rhat + 1 / (n + 1) <= alpha + 1e-12:
            best = lam
        else:
            break  # the loss only grows as lambda falls
    return best


def test_a_small_example_worked_by_hand():
    # most confident first: T T F T T F F T T T (10 items); risk 0.3 allows
    # wrong + 1 <= 0.3 * 11 = 3.3, so 2 wrong: the lowest threshold before the third is 0.93
    conf = [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90]
    agree = [True, True, False, True, True, False, False, True, True, True]
    t = risk_controlled_threshold(conf, agree, risk=0.3)
    assert (t.threshold, t.n, t.n_wrong) == (0.94, 6, 2)
    assert t.bound == pytest.approx(3 / 11) and t.empirical_risk == pytest.approx(0.2)
    assert crc_by_the_formula(conf, agree, 0.3) == 0.94
    # with 0.4: wrong + 1 <= 4.4, three wrong allowed: every item
    assert risk_controlled_threshold(conf, agree, risk=0.4).threshold == 0.90


@pytest.mark.parametrize("seed", range(30))
def test_the_threshold_is_the_formulas_on_random_draws_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    conf = np.round(rng.uniform(0.5, 1.0, n), int(rng.integers(1, 4)))  # ties
    agree = rng.random(n) < conf
    alpha = float(rng.uniform(0.05, 0.3))
    extra = int(rng.integers(0, 50))
    want = crc_by_the_formula(conf, agree, alpha, n + extra)
    try:
        got = risk_controlled_threshold(conf, agree, risk=alpha, n_calibration=n + extra)
    except StatsError:
        assert want == np.inf
        return
    assert got.threshold == want
    assert got.bound <= alpha + 1e-12 and got.n == int((conf >= want).sum())


def test_too_few_labels_for_any_threshold_is_one_line_saying_how_many():
    conf, agree = np.linspace(1, 0.5, 8), np.ones(8, bool)
    with pytest.raises(StatsError, match=r"1 / \(8 \+ 1\) = 0.111 > 0.1; label at least 9 items"):
        risk_controlled_threshold(conf, agree, risk=0.1)
    # 9 perfect items pass at 0.1: (0 + 1) / 10 <= 0.1, every item decided
    nine = risk_controlled_threshold(np.linspace(1, 0.5, 9), np.ones(9, bool), risk=0.1)
    assert nine.threshold == 0.5 and nine.bound == pytest.approx(0.1)
    with pytest.raises(StatsError, match="label at least 19 items"):
        risk_controlled_threshold(np.linspace(1, 0.5, 18), np.ones(18, bool), risk=0.05)


def test_a_judge_wrong_at_the_top_decides_nothing_in_one_line():
    conf = np.linspace(1, 0.5, 20)
    agree = np.r_[False, np.ones(19, bool)]
    with pytest.raises(StatsError, match="most confident already hold 1 disagreement"):
        risk_controlled_threshold(conf, agree, risk=0.09)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"risk": 0}, "risk must lie strictly between 0 and 1"),
        ({"risk": True}, "risk must lie strictly between 0 and 1"),
        ({"risk": 0.1, "n_calibration": 5}, "n_calibration must be a whole number of at least"),
        ({"risk": 0.1, "n_calibration": 40.0}, "n_calibration must be a whole number of at least"),
    ],
)
def test_bad_arguments_are_one_line(kwargs, message):
    with pytest.raises(StatsError, match=message):
        risk_controlled_threshold(np.linspace(1, 0.5, 30), np.ones(30, bool), **kwargs)


def test_it_decides_more_than_the_high_probability_kind_and_says_what_it_promises():
    rng = np.random.default_rng(3)
    conf = rng.uniform(0.5, 1.0, 500)
    agree = rng.random(500) < conf
    crc = risk_controlled_threshold(conf, agree, risk=0.05)
    fixed = selective_threshold(conf, agree, target_agreement=0.9, confidence_level=0.9)
    assert crc.coverage > fixed.coverage
    words = crc.guarantee
    assert "in expectation over the calibration draw" in words
    assert "not the agreement among decided items" in words and "any stated probability" in words


def test_no_items_given_is_one_line_even_when_the_rate_is_over_many():
    with pytest.raises(StatsError, match="no calibration item given"):
        risk_controlled_threshold([], [], risk=0.1, n_calibration=500)
