"""Selective evaluation: the lowest confidence threshold at which a judge's verdicts agree with a
person often enough, with a stated confidence (Jung, Brahman & Choi, "Trust or Escalate", ICLR
2025; the fixed-sequence testing of Angelopoulos et al., "Learn then Test", 2021).

Given calibration items with the judge's confidence in its verdict and whether a person agreed,
the threshold is chosen so that, with probability at least ``confidence_level`` over the
calibration draw, the agreement among future items at or above it is at least
``target_agreement``: thresholds are tested from the highest down, each with the exact binomial
test of "agreement above it below the target", stopping at the first that is not rejected.

Which thresholds are tested, and in which order, is fixed before any label is seen, from the
number of calibration items, the target and the level alone, so the fixed-sequence argument
holds. The tests are at the counts where the exact test allows one more disagreement than at
the count before (about one test per 1 / (1 - target) items), so none is run where it is
needlessly strict, from the ``start`` share of the items (a fifth by default) on, and never on
fewer items than a run of perfect agreement needs to pass at the level (a test that cannot pass
would stop the sequence at its start: three judges at 90% confidence could never certify a 90%
target when the first test had 30 items). ``benchmarks/calibration.py`` measures the share
decided and the guarantee kept by simulation, on judges whose confidence is miscalibrated.

What is guaranteed, and what not: the agreement is marginal over items drawn like the
calibration items (the same judge, prompt and kind of output), not per item; the guarantee
assumes the calibration items are a random sample of such items.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from ..contract import Result, estimator
from ..errors import StatsError

START = 0.2  # the first test covers this share of the calibration items (the most confident)
MOST_LABELS = 100_000  # labels_to_certify looks no further


@dataclass(frozen=True)
class SelectiveThreshold(Result):
    """The certified threshold of :func:`selective_threshold`.

    Attributes:
        threshold: the lowest certified confidence (verdicts at or above it are trusted).
        coverage: the share of calibration items at or above it.
        n: calibration items at or above it; ``n_agree`` of them agreed with the person.
        agreement: ``n_agree / n``.
        p_value: the exact binomial p-value at the threshold (agreement below the target).
        target_agreement, confidence_level, n_calibration: what was asked, and of how many.
        method: how the threshold was chosen.
        tests: the fixed sequence as run, one row per test in order: ``threshold``, ``n``
            (items at or above it), ``n_agree``, ``p_value``, ``certified`` (the sequence stops
            at the first test not certified; later rows are not run and not listed).
        curve: agreement against coverage, one row per distinct confidence, most confident
            first: ``threshold``, ``n`` (items at or above it), ``agreement``, ``coverage``.
    """

    threshold: float
    coverage: float
    n: int
    n_agree: int
    agreement: float
    p_value: float
    target_agreement: float
    confidence_level: float
    n_calibration: int
    method: str
    tests: pd.DataFrame = field(repr=False, compare=False, default_factory=pd.DataFrame)
    curve: pd.DataFrame = field(repr=False, compare=False, default_factory=pd.DataFrame)
    _unpack = ("threshold", "coverage", "n")

    @property
    def guarantee(self) -> str:
        """The guarantee in words."""
        return (
            f"with probability at least {self.confidence_level:.0%} over the calibration draw, "
            f"verdicts with confidence >= {self.threshold:.4g} agree with a person at least "
            f"{self.target_agreement:.0%} of the time, on average over items like the "
            f"{self.n_calibration} calibration items (about {self.coverage:.0%} of them)"
        )


def _p_value(n_agree: int, n: int, target: float) -> float:
    """Exact one-sided binomial p-value of 'agreement < target' given n_agree of n."""
    return float(stats.binom.cdf(n - n_agree, n, 1 - target))


def _check_asked(target: float, confidence_level: float) -> float:
    for name, value in (("target_agreement", target), ("confidence_level", confidence_level)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise StatsError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return 1 - confidence_level


def _perfect_run_items(target_agreement: float, confidence_level: float) -> int:
    """The fewest items whose test can pass at all: n items that all agree give p = target ** n,
    certified once it is at most 1 - confidence_level. No test on fewer items can certify the
    target, whatever the labels.

    Example:
        >>> _perfect_run_items(0.9, 0.9), _perfect_run_items(0.9, 1 - 0.1 / 3)  # one judge, three
        (22, 33)
    """
    delta = _check_asked(target_agreement, confidence_level)
    n = max(1, math.ceil(math.log(delta) / math.log(target_agreement)))
    while _p_value(n, n, target_agreement) > delta:  # float rounding of the logarithms
        n += 1
    while n > 1 and _p_value(n - 1, n - 1, target_agreement) <= delta:
        n -= 1
    return n


def _allowed(counts: np.ndarray, target: float, delta: float) -> np.ndarray:
    """The most disagreements a test on each count of items may find and still certify
    (-1: none is certified, even with every item agreeing): the largest d with
    P(Bin(n, 1 - target) <= d) <= delta. Found by binom.cdf at four d around a Cornish-Fisher
    guess, and binom.ppf (slow) where the answer is not among them."""
    n = np.asarray(counts, dtype=float)
    q = 1 - target
    z = stats.norm.ppf(delta)
    guess = n * q + z * np.sqrt(n * q * (1 - q)) + (z * z - 1) * (1 - 2 * q) / 6 - 0.5
    d = np.floor(guess).astype(int)[:, None] + np.arange(-1, 3)[None, :]
    ok = (d >= 0) & (stats.binom.cdf(d, n[:, None], q) <= delta)
    found = np.where(ok.any(axis=1), np.where(ok, d, -1).max(axis=1), -1)
    # the answer is known when the window holds a pass followed by a fail, or fails from 0
    known = (ok[:, :-1] & ~ok[:, 1:]).any(axis=1) | (~ok.any(axis=1) & (d[:, 0] <= 0))
    if not known.all():
        exact = stats.binom.ppf(delta, n[~known], q).astype(int)
        exact = np.where(stats.binom.cdf(exact, n[~known], q) <= delta, exact, exact - 1)
        found[~known] = exact
    return found


def _first_count(n: int, target: float, level: float, start: float, min_items: int | None) -> int:
    return max(math.ceil(start * n - 1e-9), _perfect_run_items(target, level), min_items or 1)


def _check_start(start: float, min_items: int | None) -> None:
    if isinstance(start, bool) or not isinstance(start, int | float) or not 0 <= start <= 1:
        raise StatsError(f"start must be a share between 0 and 1, got {start!r}")
    if min_items is not None and (
        isinstance(min_items, bool) or not isinstance(min_items, int) or min_items < 1
    ):
        raise StatsError(f"min_items must be a whole number of at least 1, got {min_items!r}")


def _selective_sequence(
    n: int,
    *,
    target_agreement: float = 0.9,
    confidence_level: float = 0.9,
    start: float = START,
    min_items: int | None = None,
) -> np.ndarray:
    """The counts of calibration items (the most confident first) at which
    :func:`selective_threshold` tests, in order, for ``n`` calibration items: it depends on
    ``n``, the target and the level only, never on the labels, so the fixed-sequence guarantee
    holds. Empty when no test can pass (fewer items than :func:`_perfect_run_items`).

    The tests are at the counts where the exact test allows one more disagreement than at the
    count before (where its size is nearest the level: between two such counts a test is
    stricter for no gain), from the largest of ``start * n``, :func:`_perfect_run_items` and
    ``min_items`` on, and at ``n`` last.

    Example:
        >>> _selective_sequence(100, target_agreement=0.9, confidence_level=0.9)[:4].tolist()
        [22, 38, 52, 65]
        >>> _selective_sequence(30, target_agreement=0.9, confidence_level=1 - 0.1 / 3).size
        0
    """
    _check_start(start, min_items)
    first = _first_count(int(n), target_agreement, confidence_level, start, min_items)
    if first > n:
        return np.array([], dtype=int)
    counts = np.arange(first - 1, int(n) + 1)
    allowed = _allowed(np.maximum(counts, 1), target_agreement, 1 - confidence_level)
    allowed[counts == 0] = -1
    rises = counts[1:][np.diff(allowed) > 0]  # the first count of each number allowed
    return np.unique(np.r_[rises, int(n)]).astype(int)


def _labels_to_certify(
    agreement: float,
    target: float,
    confidence_level: float,
    *,
    start: float = START,
    min_items: int | None = None,
) -> int | None:
    """The fewest labelled items that certify ``target`` when their agreement, most confident
    first, is ``agreement`` spread evenly (the j-th disagreement at item ceil(j / (1 -
    agreement))); None when ``agreement`` does not exceed the target: no number would. Checked
    by running :func:`selective_threshold` on such a sample: its first test certifies.

    Example:
        >>> _labels_to_certify(1.0, 0.9, 0.9)  # all agree: 0.9 ** n <= 0.1 from n = 22
        22
        >>> _labels_to_certify(1.0, 0.9, 1 - 0.1 / 3)  # three judges at 90%: each at 96.7%
        33
        >>> _labels_to_certify(0.85, 0.9, 0.9) is None
        True
    """
    delta = _check_asked(target, confidence_level)
    _check_start(start, min_items)
    if agreement <= target:
        return None
    low = _perfect_run_items(target, confidence_level)
    rises: list[int] = []  # the counts where one more disagreement is allowed, found lazily
    top = 0
    passes: dict[int, bool] = {}
    for n in range(low, MOST_LABELS + 1):
        lowest = max(math.ceil(start * n - 1e-9), low, min_items or 1)
        if lowest > n:
            continue
        while (not rises or rises[-1] < lowest) and top < n:  # find the next rise (by chunks)
            chunk = np.arange(top, top + 4096) + 1
            allowed = _allowed(np.r_[max(top, 1), chunk], target, delta)
            if top == 0:
                allowed[0] = -1
            rises += chunk[np.diff(allowed) > 0].tolist()
            top = int(chunk[-1])
        at = bisect.bisect_left(rises, lowest)  # rises are sorted
        first = rises[at] if at < len(rises) and rises[at] <= n else n  # as selective_sequence
        if first not in passes:
            agreed = first - math.floor((1 - agreement) * first + 1e-9)
            passes[first] = _p_value(agreed, first, target) <= delta
        if passes[first]:
            return n
    return None


def _selective_threshold_adapter(frame: pd.DataFrame) -> SelectiveThreshold:
    return selective_threshold(
        frame["score"].astype(float),
        frame["score"].astype(float) >= 0.25,
        target_agreement=0.6,
        confidence_level=0.8,
        min_items=10,
    )


@estimator(
    unit="calibration item",
    estimand="the lowest confidence threshold whose agreement with people is at least the target",
    interval="none (a certified threshold: fixed-sequence exact binomial tests at 1 - "
    "confidence_level, in an order fixed before labels are seen)",
    checks=("order", "rename", "one_case", "method"),
    adapter=_selective_threshold_adapter,
    calibration="selective_threshold",
)
def selective_threshold(
    confidence: ArrayLike,
    agree: ArrayLike,
    *,
    target_agreement: float = 0.9,
    confidence_level: float = 0.9,
    start: float = START,
    min_items: int | None = None,
) -> SelectiveThreshold:
    """The lowest threshold on the judge's confidence whose agreement with people, among items
    at or above it, is at least ``target_agreement`` with probability ``confidence_level``.

    Args:
        confidence: the judge's confidence in its verdict, one per calibration item (e.g. the
            probability it gave its verdict, or its mean over several calls); higher means more
            sure.
        agree: whether the person agreed with the judge's verdict, one per item (True/False).
        target_agreement: the agreement to certify (1 - the tolerated disagreement).
        confidence_level: the probability, over the calibration draw, that the guarantee holds.
        start: the share of the calibration items the first test covers (the most confident).
        min_items: the fewest items the first test covers (None: no floor beyond the fewest at
            which a run of perfect agreement passes; a smaller
            value is raised to that).

    Returns:
        :class:`SelectiveThreshold` (``threshold``, ``coverage``, ``n``, ``tests``, ...;
        ``guarantee`` in words).

    Raises:
        StatsError: one line when the labels cannot certify any threshold: fewer items than a
            perfect run needs (the message says how many would do, and the highest target a
            perfect run of these would certify), or the first test fails (the message says how
            many labels at the observed agreement would certify the target, or that none would).

    Notes:
        The tests run at counts fixed by the number of items, the target and the level (from
        ``start`` of the items on, where one more disagreement is allowed than at the count
        before, and all of them last), each at the threshold of that many most confident items
        (with ties, every item at that confidence is counted). At threshold t with n items at
        or above it, k of which agreed, the p-value of "agreement below the target" is the
        binomial probability P(Bin(n, 1 - target) <= n - k); t is certified when it is at most
        1 - confidence_level. The sequence stops at the first threshold not certified; the last
        certified one is returned (fixed-sequence testing controls the chance of certifying a
        threshold whose agreement is below the target at 1 - confidence_level, without a
        multiplicity correction, because the order does not depend on the labels).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> conf = rng.uniform(0.5, 1.0, 400)
        >>> agree = rng.random(400) < conf  # a calibrated judge
        >>> t = selective_threshold(conf, agree, target_agreement=0.85, confidence_level=0.9)
        >>> bool(0.5 < t.threshold < 1.0), t.agreement >= 0.85, int(t.tests["n"].iloc[0])
        (True, True, 85)
    """
    c, a = _flags(confidence, agree)
    delta = _check_asked(target_agreement, confidence_level)
    _check_start(start, min_items)
    n_total = c.size
    if n_total < 2:
        raise StatsError(
            f"{n_total} calibration item(s): a threshold needs a labelled sample "
            f"(at least {_first_count(2, target_agreement, confidence_level, start, min_items)}"
            " items)"
        )
    order = np.lexsort((a, -c))  # most confident first (ties: a fixed order; counts are per value)
    c, a = c[order], a[order]
    cum_agree = np.cumsum(a)
    counts = _selective_sequence(
        n_total,
        target_agreement=target_agreement,
        confidence_level=confidence_level,
        start=start,
        min_items=min_items,
    )
    asked = (
        f"cannot certify {100 * target_agreement:.4g}% agreement with "
        f"{100 * confidence_level:.4g}% confidence "
    )
    if counts.size == 0:
        raise StatsError(
            asked
            + f"from {n_total} calibration items: "
            + _too_few(
                n_total, round(float(cum_agree[-1])), target_agreement, confidence_level, min_items
            )
        )
    # each count's threshold, with every item tied at it: the count tested is the last index
    # of that value (thresholds repeated by ties are tested once)
    last_of = np.searchsorted(-c, -c[counts - 1], side="right") - 1
    tests, best = [], None
    for last in dict.fromkeys(last_of.tolist()):
        n = last + 1
        k = round(float(cum_agree[last]))
        p = _p_value(k, n, target_agreement)
        tests.append(
            {
                "threshold": float(c[last]),
                "n": n,
                "n_agree": k,
                "p_value": p,
                "certified": p <= delta,
            }
        )
        if p > delta:
            break
        best = (last, n, k, p)
    table = pd.DataFrame(tests, columns=["threshold", "n", "n_agree", "p_value", "certified"])
    if best is None:
        first = tests[0]
        rate = first["n_agree"] / first["n"]
        need = _labels_to_certify(
            rate, target_agreement, confidence_level, start=start, min_items=min_items
        )
        if need is not None:
            advice = f"at that agreement, spread evenly, {need} labelled items would certify it"
        elif rate > target_agreement:
            advice = f"at that agreement more than {MOST_LABELS:,} labelled items would be needed"
        else:
            advice = (
                "at that agreement no number of labels would certify it: escalate every item "
                "(or use a better judge)"
            )
        raise StatsError(
            asked + f"from {n_total} calibration items: the {first['n']} most "
            f"confident (the first test) agree {rate:.1%} ({first['n_agree']}/{first['n']}, "
            f"p = {first['p_value']:.3g} > {delta:.3g}); {advice}"
        )
    last, n, k, p = best
    stopped = tests[-1] if not tests[-1]["certified"] else None
    method = (
        f"fixed-sequence exact binomial tests at level {delta:.4g}, from the {tests[0]['n']} "
        f"most confident items down at the counts where one more disagreement is allowed (an "
        f"order fixed before labels); stopped "
        + (
            f"at the first threshold not certified ({stopped['n']} items, {stopped['n_agree']} "
            "agreed)"
            if stopped
            else "after the lowest threshold"
        )
    )
    return SelectiveThreshold(
        threshold=float(c[last]),
        coverage=n / n_total,
        n=n,
        n_agree=k,
        agreement=k / n,
        p_value=p,
        target_agreement=float(target_agreement),
        confidence_level=float(confidence_level),
        n_calibration=n_total,
        method=method,
        tests=table,
        curve=_curve(c, a),
    )


def _too_few(n: int, k: int, target: float, level: float, min_items: int | None) -> str:
    """Why no test can be run on ``n`` items (``k`` agreeing), and what would help, said only
    when it is true: no fewer labels than a perfect run needs; a lower target only as the most
    a perfect run of these ``n`` certifies (never a target fitted to the labels)."""
    delta = 1 - level
    need = _perfect_run_items(target, level)
    seen = f"these {n} agree {k / n:.1%}, {k}/{n}"
    if n < need:
        highest = math.floor(delta ** (1 / n) * 1000) / 1000  # the largest T with T ** n <= delta
        lower = (
            f"; a perfect run of {n} certifies a target of at most {highest:.1%}"
            if highest >= 0.5
            else ""
        )
        return (
            f"even if all {n} agreed, p = {target:g}^{n} = {target**n:.3g} > {delta:.3g}: no test "
            f"at this level passes on fewer than {need} items, so label at least "
            f"{max(need, min_items or 0)} (more if some disagree){lower} ({seen})"
        )
    return (
        f"fewer than the {min_items} items the first test needs (min_items): label at least "
        f"{min_items} items ({seen}: too few to tell)"
    )


def _agreement_curve_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return agreement_curve(frame["score"].astype(float), frame["score"].astype(float) >= 0.25)


@estimator(
    unit="calibration item",
    estimand="agreement with people among the items at or above each confidence",
    interval="none (a descriptive curve; selective_threshold certifies a point on it)",
    checks=("order", "rename"),
    adapter=_agreement_curve_adapter,
    unchecked="a descriptive curve of two arrays: no interval to test (one_case, no_spread, "
    "gate), no frame of its own (keys, duplicates, settings: the caller's input step), a "
    "confidence on any scale (a logit, a probability); agree must be True/False, refused "
    "otherwise in tests/stats/test_selective.py",
)
def agreement_curve(confidence: ArrayLike, agree: ArrayLike) -> pd.DataFrame:
    """Agreement against coverage: one row per distinct confidence, most confident first, with
    ``threshold`` (that confidence), ``n`` (items at or above it), ``agreement`` (the share of
    them a person agreed with) and ``coverage`` (``n`` over all items). Descriptive: the
    agreement at a threshold chosen from this curve is optimistic; :func:`selective_threshold`
    certifies one.

    Example:
        >>> agreement_curve([0.9, 0.6, 0.9, 0.7], [True, False, True, True]).values.tolist()
        [[0.9, 2.0, 1.0, 0.5], [0.7, 3.0, 1.0, 0.75], [0.6, 4.0, 0.75, 1.0]]
    """
    c, a = _flags(confidence, agree)
    order = np.lexsort((a, -c))
    return _curve(c[order], a[order])


def _flags(confidence: ArrayLike, agree: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Confidences and agreement flags (0/1) checked: as many of each, finite, True/False."""
    c = np.asarray(confidence, dtype=float).ravel()
    raw = np.asarray(agree).ravel()
    if c.size != raw.size:
        raise StatsError(f"{c.size} confidences for {raw.size} agreement flags: give one each")
    if not np.isfinite(c).all():
        raise StatsError("confidence holds NaN or infinite values: drop those items first")
    try:
        a = raw.astype(float)
    except (TypeError, ValueError):
        raise StatsError(
            "agree must hold True/False (did the person agree with the judge)"
        ) from None
    if not np.isin(a, (0.0, 1.0)).all():
        raise StatsError("agree must hold True/False (did the person agree with the judge)")
    return c, a


def _curve(c: np.ndarray, a: np.ndarray) -> pd.DataFrame:
    """Agreement against coverage over sorted items (most confident first)."""
    last = np.flatnonzero(np.r_[c[1:] != c[:-1], True])
    n = last + 1
    agreed = np.cumsum(a)[last]
    return pd.DataFrame(
        {"threshold": c[last], "n": n, "agreement": agreed / n, "coverage": n / max(c.size, 1)}
    )
