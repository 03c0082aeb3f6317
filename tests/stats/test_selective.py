"""selective_threshold (Trust or Escalate's calibration) and level_sets (ordinal conformal sets),
pinned to direct implementations built from scipy and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from jevalkit.errors import StatsError
from jevalkit.stats import level_sets, selective_threshold


def reference_threshold(c, agree, target, level, min_items=30):
    """The authors' rule: from the highest threshold down, certify while the one-sided
    Clopper-Pearson upper bound of the disagreement rate is at most 1 - target."""
    c, agree = np.asarray(c, float), np.asarray(agree, bool)
    best = None
    for t in sorted(set(c), reverse=True):
        mask = c >= t
        n = int(mask.sum())
        if n < min_items:
            continue
        disagree = int((~agree[mask]).sum())
        upper = proportion_confint(disagree, n, alpha=2 * (1 - level), method="beta")[1]
        if disagree == n:
            upper = 1.0
        if upper > 1 - target:
            break
        best = t
    return best


@pytest.mark.parametrize("seed", range(6))
def test_the_threshold_is_the_fixed_sequence_one(seed):
    rng = np.random.default_rng(seed)
    n = 300
    c = np.round(rng.uniform(0.5, 1.0, n), 3)  # ties on purpose
    agree = rng.random(n) < c
    expected = reference_threshold(c, agree, 0.85, 0.9)
    if expected is None:
        with pytest.raises(StatsError, match="cannot certify"):
            selective_threshold(c, agree, target_agreement=0.85, confidence_level=0.9)
        return
    t = selective_threshold(c, agree, target_agreement=0.85, confidence_level=0.9)
    assert t.threshold == expected
    mask = c >= expected
    assert t.n == mask.sum() and t.n_agree == agree[mask].sum()
    assert t.coverage == pytest.approx(mask.mean())
    test = stats.binomtest(int((~agree[mask]).sum()), int(mask.sum()), 0.15, alternative="less")
    assert t.p_value == pytest.approx(test.pvalue) and t.p_value <= 0.1


def test_every_item_agreeing_certifies_the_lowest_threshold():
    c = np.linspace(0.5, 1.0, 100)
    t = selective_threshold(c, np.ones(100, bool), target_agreement=0.9, confidence_level=0.9)
    assert t.threshold == 0.5 and t.coverage == 1.0 and t.agreement == 1.0
    assert "0.5" in t.guarantee and "90%" in t.guarantee


def test_no_agreement_or_one_item_is_refused_in_one_line():
    c = np.linspace(0.5, 1.0, 100)
    with pytest.raises(StatsError, match="no number of labels would certify it") as refused:
        selective_threshold(c, np.zeros(100, bool))
    assert "\n" not in str(refused.value)
    with pytest.raises(StatsError, match="1 calibration item"):
        selective_threshold([0.9], [True])
    with pytest.raises(StatsError, match="True/False"):
        selective_threshold([0.9, 0.8], [2, 1])
    with pytest.raises(StatsError, match="one each"):
        selective_threshold([0.9, 0.8], [True])


def test_a_refusal_says_how_many_labels_would_certify():
    rng = np.random.default_rng(3)
    c = rng.uniform(0.5, 1, 40)
    agree = np.ones(40, bool)
    agree[np.argsort(-c)[:2]] = False  # the two most confident disagree: 28 of 30 cannot certify
    with pytest.raises(StatsError, match=r"about \d+ labelled items would certify it"):
        selective_threshold(c, agree, target_agreement=0.9, confidence_level=0.9)


def test_fewer_labels_than_a_threshold_needs_say_so_and_how_many():
    """10 labels, min_items 30: nothing could be tested; the refusal says so and asks for at
    least min_items labels (never 'no number certifies' from a sample too small to test)."""
    c = np.linspace(0.6, 1.0, 10)
    with pytest.raises(
        StatsError, match=r"fewer than the 30 .*label at least 30 items .*too few to tell"
    ):
        selective_threshold(c, np.ones(10, bool), target_agreement=0.9, confidence_level=0.9)
    with pytest.raises(StatsError, match="fewer than the 30"):
        selective_threshold(c, np.arange(10) < 8, target_agreement=0.9)


def test_order_does_not_matter():
    rng = np.random.default_rng(4)
    c = rng.uniform(0.5, 1, 400)
    agree = rng.random(400) < c
    perm = rng.permutation(400)
    a = selective_threshold(c, agree, target_agreement=0.8)
    b = selective_threshold(c[perm], agree[perm], target_agreement=0.8)
    assert (a.threshold, a.n, a.n_agree) == (b.threshold, b.n, b.n_agree)


def test_an_uninformative_confidence_is_rarely_certified():
    """Agreement 85% everywhere: certifying 90% is wrong, and happens in at most ~10% of
    calibrations (a seeded small version of benchmarks/calibration.py's simulation)."""
    rng = np.random.default_rng(5)
    certified = 0
    for _ in range(60):
        c = rng.uniform(0.5, 1, 300)
        try:
            selective_threshold(c, rng.random(300) < 0.85, target_agreement=0.9)
            certified += 1
        except StatsError:
            pass
    assert certified <= 12


# ---- level sets ----------------------------------------------------------------------------


def reference_sets(probs, cal, levels, coverage):
    """Direct: grow each set level by level from the mode; a calibration item's score is the
    mass before its level joins; keep levels whose preceding mass is within the quantile."""

    def path(p):
        low = high = int(np.argmax(p))
        out, before, total = [low], [0.0], p[low]
        while len(out) < p.size:
            below = p[low - 1] if low > 0 else -1
            above = p[high + 1] if high < p.size - 1 else -1
            if above > below:
                high += 1
                nxt = high
            else:
                low -= 1
                nxt = low
            out.append(nxt)
            before.append(total)
            total += p[nxt]
        return out, before

    scores = []
    for p, y in zip(cal, levels, strict=True):
        out, before = path(p)
        scores.append(before[out.index(y)])
    rank = math.ceil((len(scores) + 1) * coverage)
    q = sorted(scores)[rank - 1] if rank <= len(scores) else math.inf
    sets = []
    for p in probs:
        out, before = path(p)
        sets.append(sorted(v for v, b in zip(out, before, strict=True) if b <= q + 1e-12))
    return sets


def random_probs(rng, n, k):
    x = rng.gamma(0.5, size=(n, k))
    return x / x.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(5))
def test_level_sets_match_the_direct_construction(seed):
    rng = np.random.default_rng(seed)
    cal, fresh = random_probs(rng, 80, 5), random_probs(rng, 30, 5)
    levels = rng.integers(0, 5, 80)
    result = level_sets(fresh, cal, levels, coverage=0.8)
    assert result.sets == reference_sets(fresh, cal, levels, 0.8)
    assert result.size.tolist() == [len(s) for s in result.sets]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 7))
def test_every_level_set_is_contiguous_and_holds_the_mode(seed, k):
    rng = np.random.default_rng(seed)
    cal, fresh = random_probs(rng, 20, k), random_probs(rng, 10, k)
    result = level_sets(fresh, cal, rng.integers(0, k, 20), coverage=0.7)
    for p, s in zip(fresh, result.sets, strict=True):
        assert s == list(range(s[0], s[-1] + 1))
        assert int(np.argmax(p)) in s


def test_level_sets_cover_fresh_items_at_the_stated_rate():
    rng = np.random.default_rng(9)
    levels = np.arange(5)

    def judge(n):
        truth = rng.integers(0, 5, n)
        guess = truth + rng.normal(0, 0.9, n)
        logits = -2.0 * (levels[None, :] - guess[:, None]) ** 2
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True), truth

    hits = []
    for _ in range(40):
        cal, y = judge(100)
        fresh, truth = judge(200)
        sets = level_sets(fresh, cal, y, coverage=0.9).sets
        hits.append(np.mean([t in s for t, s in zip(truth, sets, strict=True)]))
    assert 0.87 <= np.mean(hits) <= 0.95


def test_too_few_calibration_items_give_every_level_and_bad_input_is_refused():
    cal = np.array([[0.8, 0.2], [0.3, 0.7]])
    result = level_sets([[0.9, 0.1]], cal, [0, 1], coverage=0.9)
    assert result.sets == [[0, 1]] and math.isinf(result.threshold)
    assert "too few items" in result.method
    with pytest.raises(StatsError, match="sums to"):
        level_sets([[0.9, 0.3]], cal, [0, 1])
    with pytest.raises(StatsError, match=r"level indexes 0\.\.1"):
        level_sets([[0.9, 0.1]], cal, [0, 2])
    with pytest.raises(StatsError, match="levels but"):
        level_sets([[0.5, 0.3, 0.2]], cal, [0, 1])
