"""Confidence sequences for a finite population sampled without replacement
(:class:`jevalkit.stats.FiniteSequences`): the bound is confseq's, it covers at every draw at
once, it closes on the exact mean, and unknown values widen it without breaking it."""

from __future__ import annotations

import numpy as np
import pytest

from jevalkit.errors import StatsError
from jevalkit.stats import FiniteSequences, finite_confidence_sequence

# 45 draws of a population of 60 (a pattern of quarter scores, mostly 0.5: a paired difference)
DRAWS = np.array([0.5 if i % 3 else (i * 7 % 5) / 4 for i in range(45)])

# confseq 0.0.11 (Howard & Waudby-Smith's implementation, predmix.py, run from its source):
# predmix_empbern_twosided_cs(DRAWS, alpha, N=60, running_intersection=True) and
# predmix_hoeffding_cs(...), (lower, upper) at draws 5, 15, 30 and 45
CONFSEQ = {
    ("empirical_bernstein", 0.05): [(0.0, 1.0), (0.041629, 0.964509), (0.298366, 0.69464),
                                    (0.391562, 0.596959)],
    ("hoeffding", 0.05): [(0.0, 1.0), (0.15992, 0.818906), (0.28931, 0.682153),
                          (0.35451, 0.61906)],
    ("empirical_bernstein", 0.05 / 45): [(0.0, 1.0), (0.0, 1.0), (0.113096, 0.879911),
                                         (0.298374, 0.690147)],
    ("hoeffding", 0.05 / 45): [(0.0, 1.0), (0.0, 1.0), (0.204793, 0.771512),
                               (0.307738, 0.668931)],
}  # fmt: skip


@pytest.mark.parametrize(("method", "alpha"), sorted(CONFSEQ))
def test_the_sequence_is_confseqs_within_the_logical_bounds(method, alpha):
    seq = FiniteSequences(1, population=60, confidence=1 - alpha, method=method)
    got = []
    for t, x in enumerate(DRAWS, 1):
        seq.add(np.array([x]))
        if t in (5, 15, 30, 45):
            low, high = seq.interval()
            got.append((t, float(low[0]), float(high[0])))
    for (t, low, high), (ref_low, ref_high) in zip(got, CONFSEQ[method, alpha], strict=True):
        drawn = DRAWS[:t].sum()
        # the drawn values are known and the 60 - t others lie in [0, 1]
        assert low == pytest.approx(max(ref_low, drawn / 60), abs=1e-6)
        assert high == pytest.approx(min(ref_high, (drawn + 60 - t) / 60), abs=1e-6)


def test_the_empirical_bernstein_bound_is_narrower_for_values_that_barely_vary():
    widths = {}
    for method in ("empirical_bernstein", "hoeffding"):
        seq = FiniteSequences(1, population=60, method=method)
        for x in DRAWS:
            seq.add(np.array([x]))
        low, high = seq.interval()
        widths[method] = float(high[0] - low[0])
    assert widths["empirical_bernstein"] < 0.9 * widths["hoeffding"]


def test_every_value_drawn_gives_the_exact_mean_and_no_interval():
    rows = finite_confidence_sequence(DRAWS[:20], population=20)
    last = rows.iloc[-1]
    assert last["estimate"] == pytest.approx(DRAWS[:20].mean())
    assert np.isnan(last["ci_low"]) and "known exactly" in last["method"]
    before = rows.iloc[-2]
    assert before["ci_low"] < DRAWS[:20].mean() < before["ci_high"]


def test_it_covers_at_every_draw_at_once():
    """2,000 populations of 100 values (a mixture: some all-or-nothing, some spread), each
    drawn in its own random order: the share whose interval missed the population mean at any
    draw at all stays below alpha = 0.1 (the bound is conservative: it is far below)."""
    rng = np.random.default_rng(4)
    n_pop, size = 2000, 100
    p = rng.uniform(0.05, 0.95, n_pop)
    values = (rng.random((n_pop, size)) < p[:, None]).astype(float)
    values[::3] = np.round(rng.random((len(values[::3]), size)) * 4) / 4
    truth = values.mean(axis=1)
    order = np.argsort(rng.random((n_pop, size)), axis=1)
    drawn = np.take_along_axis(values, order, axis=1)
    seq = FiniteSequences(n_pop, population=size, confidence=0.9)
    missed = np.zeros(n_pop, bool)
    for t in range(size):
        seq.add(drawn[:, t])
        low, high = seq.interval()
        missed |= (truth < low - 1e-12) | (truth > high + 1e-12)
    assert missed.mean() < 0.1
    assert (seq.interval()[1] - seq.interval()[0] < 1e-12).all()  # every value drawn: exact


def test_unknown_values_widen_the_interval_and_it_still_covers():
    """Hide a quarter of the values of 500 populations, the higher ones more often (a system
    that errors on the hard cases): read as [0, 1], the interval still holds the true mean at
    every draw, and is wider than with every value known."""
    rng = np.random.default_rng(5)
    n_pop, size = 500, 80
    values = (rng.random((n_pop, size)) < rng.uniform(0.2, 0.8, (n_pop, 1))).astype(float)
    truth = values.mean(axis=1)
    hidden = rng.random((n_pop, size)) < np.where(values > 0, 0.4, 0.1)
    known, partial = (FiniteSequences(n_pop, population=size, confidence=0.9) for _ in range(2))
    missed = np.zeros(n_pop, bool)
    for t in range(size):
        known.add(values[:, t])
        partial.add(
            np.where(hidden[:, t], 0.0, values[:, t]), np.where(hidden[:, t], 1.0, values[:, t])
        )
        low, high = partial.interval()
        missed |= (truth < low - 1e-12) | (truth > high + 1e-12)
    assert missed.mean() < 0.1
    width = lambda s: (s.interval()[1] - s.interval()[0]).mean()  # noqa: E731
    assert width(partial) > width(known) + 0.05


def test_streams_draw_only_when_asked():
    seq = FiniteSequences(2, population=5)
    seq.add([1.0, 0.0], mask=[True, False])
    seq.add([1.0, 0.7], mask=[True, False])  # the second stream's values are ignored
    assert seq.t.tolist() == [2, 0]
    low, high = seq.interval()
    assert (low[1], high[1]) == (0.0, 1.0) and low[0] >= 2 / 5


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda s: s.add([1.5]), r"values must lie in \[0, 1\]"),
        (lambda s: s.add([0.2], [0.1]), "low <= high"),
        (lambda s: s.add([np.nan]), "missing"),
        (lambda s: s.add([0.2, 0.3]), "one value per stream"),
    ],
)
def test_bad_draws_are_refused_in_one_line(call, says):
    with pytest.raises(StatsError, match=says):
        call(FiniteSequences(1, population=3))


def test_a_stream_never_draws_more_than_its_population():
    seq = FiniteSequences(1, population=2)
    seq.add([1.0])
    seq.add([0.0])
    with pytest.raises(StatsError, match="more than its population of 2"):
        seq.add([1.0])
    with pytest.raises(StatsError, match="population is every case"):
        finite_confidence_sequence([1.0, 0.0, 1.0], population=2)
    with pytest.raises(StatsError, match="method must be one of"):
        FiniteSequences(1, population=2, method="betting")
