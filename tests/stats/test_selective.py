"""selective_threshold (Trust or Escalate's calibration) and level_sets (ordinal conformal sets),
pinned to direct implementations built from scipy and statsmodels."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from jevalkit.errors import StatsError
from jevalkit.stats import level_sets, selective_threshold


def reference_threshold(c, agree, target, level, start=0.2, min_items=None):
    """The rule written out directly: from max(ceil(start * n), the fewest items a perfect run
    passes with, min_items) most confident items, a test at each count where the exact test
    allows one more disagreement than at the count before, and all n last; each certified while the exact
    binomial test (scipy's binomtest) of agreement above the target has p <= 1 - level;
    stop at the first that is not."""
    c, agree = np.asarray(c, float), np.asarray(agree, bool)
    n, delta = len(c), 1 - level
    perfect = 1
    while target**perfect > delta:
        perfect += 1

    def allowed(m):  # the most disagreements a test on m items may find
        d = -1
        while d + 1 <= m and stats.binom.cdf(d + 1, m, 1 - target) <= delta:
            d += 1
        return d

    first = max(math.ceil(start * n), perfect, min_items or 1)
    if first > n:
        return None, []
    counts = [m for m in range(first, n + 1) if allowed(m) > allowed(m - 1)] + [n]
    ordered = np.sort(c)[::-1]
    best, tested = None, []
    for m in counts:
        t = ordered[m - 1]
        if t in tested:
            continue
        tested.append(t)
        mask = c >= t
        k = int(agree[mask].sum())
        if stats.binomtest(k, int(mask.sum()), target, alternative="greater").pvalue > delta:
            break
        best = t
    return best, tested


@pytest.mark.parametrize("seed", range(6))
def test_the_threshold_is_the_fixed_sequence_one(seed):
    rng = np.random.default_rng(seed)
    n = 300
    c = np.round(rng.uniform(0.5, 1.0, n), 3)  # ties on purpose
    agree = rng.random(n) < c
    expected, tested = reference_threshold(c, agree, 0.85, 0.9)
    if expected is None:
        with pytest.raises(StatsError, match="cannot certify"):
            selective_threshold(c, agree, target_agreement=0.85, confidence_level=0.9)
        return
    t = selective_threshold(c, agree, target_agreement=0.85, confidence_level=0.9)
    assert t.threshold == expected
    assert t.tests["threshold"].tolist() == tested[: len(t.tests)]
    mask = c >= expected
    assert t.n == mask.sum() and t.n_agree == agree[mask].sum()
    assert t.coverage == pytest.approx(mask.mean())
    test = stats.binomtest(int((~agree[mask]).sum()), int(mask.sum()), 0.15, alternative="less")
    assert t.p_value == pytest.approx(test.pvalue) and t.p_value <= 0.1


@pytest.mark.parametrize(
    ("target", "level", "start", "min_items"),
    [
        (0.9, 0.9, 0.2, None),
        (0.9, 1 - 0.1 / 3, 0.2, None),
        (0.8, 0.95, 0.0, 40),
        (0.95, 0.99, 0.5, None),
    ],
)
def test_the_sequence_is_fixed_before_the_labels(target, level, start, min_items):
    rng = np.random.default_rng(7)
    c = rng.uniform(0.5, 1.0, 400)
    counts = None
    for agree in (np.ones(400, bool), rng.random(400) < c, rng.random(400) < 0.97):
        expected, tested = reference_threshold(c, agree, target, level, start, min_items)
        # the thresholds tested are the same whatever the labels, up to where the run stops
        ordered = np.sort(c)[::-1]
        fixed = [int(np.flatnonzero(ordered == t)[0]) + 1 for t in tested]
        assert counts is None or fixed[: len(counts)] == counts[: len(fixed)]
        counts = fixed if counts is None or len(fixed) > len(counts) else counts
        try:
            t = selective_threshold(
                c, agree, target_agreement=target, confidence_level=level, start=start,
                min_items=min_items,
            )  # fmt: skip
        except StatsError:
            assert expected is None
            continue
        assert t.threshold == expected and t.tests["n"].tolist() == fixed[: len(t.tests)]
    # a perfect run passes the first test: it starts where it can
    assert target ** counts[0] <= 1 - level


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
    with pytest.raises(StatsError, match="start must be a share"):
        selective_threshold(c, np.ones(100, bool), start=1.5)


def even_run(n, agreement):
    """n items, most confident first, whose disagreements are spread evenly at 1 - agreement."""
    disagreed = np.floor((1 - agreement) * np.arange(n + 1) + 1e-9)
    return np.linspace(1.0, 0.5, n), np.diff(disagreed) == 0


ADVICE = r"the (\d+) most confident \(the first test\) agree [\d.]+% \((\d+)/\d+.*spread evenly, (\d+) labelled"


@pytest.mark.parametrize(
    ("agreement", "target", "level", "n"),
    [(0.94, 0.9, 0.9, 60), (0.95, 0.9, 0.95, 60), (0.9, 0.8, 0.9, 30), (0.98, 0.95, 0.99, 200),
     (0.93, 0.9, 1 - 0.1 / 4, 200), (0.92, 0.9, 0.9, 300)],
)  # fmt: skip
def test_the_labels_a_refusal_says_would_certify_it_do(agreement, target, level, n):
    """The advice is checked by running with that many: a sample of that size whose agreement
    is the refused first test's, spread evenly, is certified."""
    c, agree = even_run(n, agreement)
    with pytest.raises(StatsError, match="cannot certify") as refused:
        selective_threshold(c, agree, target_agreement=target, confidence_level=level)
    first, agreed, need = (int(g) for g in re.search(ADVICE, str(refused.value)).groups())
    assert need > n
    c, agree = even_run(need, agreed / first)
    t = selective_threshold(c, agree, target_agreement=target, confidence_level=level)
    assert t.agreement >= target and t.tests["certified"].iloc[0]


def test_a_refusal_says_how_many_labels_would_certify():
    rng = np.random.default_rng(3)
    c = rng.uniform(0.5, 1, 60)
    agree = np.ones(60, bool)
    agree[np.argsort(-c)[:2]] = False  # the two most confident disagree: 20 of 22 cannot certify
    with pytest.raises(StatsError, match=ADVICE) as e:
        selective_threshold(c, agree, target_agreement=0.9, confidence_level=0.9)
    assert "the 22 most confident (the first test) agree 90.9% (20/22" in str(e.value)
    need = int(re.search(ADVICE, str(e.value)).group(3))
    selective_threshold(*even_run(need, 20 / 22), target_agreement=0.9, confidence_level=0.9)
    with pytest.raises(StatsError, match="cannot certify"):  # and a tenth fewer do not
        selective_threshold(*even_run(int(need * 0.9), 20 / 22), target_agreement=0.9)


def test_three_judges_at_ninety_percent_start_where_a_perfect_run_passes():
    """Issue 51: with the first test on 30 items, 30 of 30 gave p = 0.9^30 = 0.042 > 0.1/3, so
    three judges at 90% confidence could never certify a 90% target. The first test now covers
    33 items (0.9^33 = 0.031) when a fifth of the labels is fewer."""
    level = 1 - 0.1 / 3
    assert 0.9**32 > 0.1 / 3 >= 0.9**33
    c = np.linspace(1.0, 0.5, 100)
    t = selective_threshold(c, np.ones(100, bool), target_agreement=0.9, confidence_level=level)
    assert t.tests["n"].iloc[0] == 33 and t.coverage == 1.0
    with pytest.raises(
        StatsError, match=r"with 96.67% confidence .*even if all 30 agreed, p = 0.9\^30 = 0.0424"
    ) as e:
        selective_threshold(c[:30], np.ones(30, bool), target_agreement=0.9, confidence_level=level)
    message = str(e.value)
    assert "label at least 33" in message and "at most 89.2%" in message  # (0.1 / 3) ** (1/30)
    # both pieces of advice are true: 33 labels all agreeing certify, and 30 certify 89.2%
    selective_threshold(c[:33], np.ones(33, bool), target_agreement=0.9, confidence_level=level)
    selective_threshold(c[:30], np.ones(30, bool), target_agreement=0.892, confidence_level=level)


def test_fewer_labels_than_min_items_say_so_and_how_many():
    """min_items above what a perfect run needs: 25 labels cannot be tested at 30."""
    c = np.linspace(0.6, 1.0, 25)
    with pytest.raises(
        StatsError, match=r"fewer than the 30 .*label at least 30 items .*too few to tell"
    ):
        selective_threshold(c, np.ones(25, bool), target_agreement=0.9, min_items=30)


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
