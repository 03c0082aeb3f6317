"""Selective evaluation: the lowest confidence threshold at which a judge's verdicts agree with a
person often enough, with a stated confidence (Jung, Brahman & Choi, "Trust or Escalate", ICLR
2025; the fixed-sequence testing of Angelopoulos et al., "Learn then Test", 2021).

Given calibration items with the judge's confidence in its verdict and whether a person agreed,
the threshold is chosen so that, with probability at least ``confidence_level`` over the
calibration draw, the agreement among future items at or above it is at least
``target_agreement``: thresholds are tested from the highest down, each with the exact binomial
test of "agreement above it below the target", stopping at the first that is not rejected.

What is guaranteed, and what not: the agreement is marginal over items drawn like the
calibration items (the same judge, prompt and kind of output), not per item; the guarantee
assumes the calibration items are a random sample of such items. As in the authors' code, only
thresholds with at least ``min_items`` calibration items at or above them are tested (a test on
a handful of items cannot reject, and would stop the sequence at its start); this keeps the
guarantee when agreement does not fall as confidence rises, the premise of trusting confident
verdicts; ``benchmarks/calibration.py`` checks it by simulation with miscalibrated judges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from ..contract import Result, estimator
from ..errors import StatsError

MIN_ITEMS = 30  # thresholds with fewer calibration items above them are not tested


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


def labels_to_certify(agreement: float, target: float, confidence_level: float) -> int | None:
    """The fewest labelled items that would certify ``target`` if they agreed at rate
    ``agreement`` (None when ``agreement`` does not exceed the target: no number would).

    Example:
        >>> labels_to_certify(1.0, 0.9, 0.9)  # all agree: 0.9 ** n <= 0.1
        22
        >>> labels_to_certify(0.85, 0.9, 0.9) is None
        True
    """
    if agreement <= target:
        return None
    delta = 1 - confidence_level
    n = 1
    while n < 10_000_000:
        if _p_value(math.floor(agreement * n + 1e-9), n, target) <= delta:
            return n
        n = n + 1 if n < 1000 else int(n * 1.01)
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
    interval="none (a certified threshold: fixed-sequence exact binomial tests at 1 - confidence_level)",
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
    min_items: int = MIN_ITEMS,
) -> SelectiveThreshold:
    """The lowest threshold on the judge's confidence whose agreement with people, among items
    at or above it, is at least ``target_agreement`` with probability ``confidence_level``.

    Args:
        confidence: the judge's confidence in its verdict, one per calibration item (e.g. the
            probability it gave its verdict); higher means more sure.
        agree: whether the person agreed with the judge's verdict, one per item (True/False).
        target_agreement: the agreement to certify (1 - the tolerated disagreement).
        confidence_level: the probability, over the calibration draw, that the guarantee holds.
        min_items: thresholds with fewer calibration items at or above them are not tested.

    Returns:
        :class:`SelectiveThreshold` (``threshold``, ``coverage``, ``n``, ...; ``guarantee`` in
        words).

    Raises:
        StatsError: one line when the labels cannot certify any threshold: too few items, or
            even the most confident verdicts agree too rarely; the message says how many labels
            at the observed agreement would certify the target, or that none would.

    Notes:
        Thresholds are the distinct confidences with at least ``min_items`` items at or above
        them, tested from the highest down. At threshold t with n items at or above it, k of
        which agreed, the p-value of "agreement below the target" is the binomial probability
        P(Bin(n, 1 - target) <= n - k); t is certified when it is at most 1 - confidence_level.
        The sequence stops at the first threshold not certified; the last certified one is
        returned (fixed-sequence testing controls the chance of certifying a threshold whose
        agreement is below the target at 1 - confidence_level, without a multiplicity
        correction).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> conf = rng.uniform(0.5, 1.0, 400)
        >>> agree = rng.random(400) < conf  # a calibrated judge
        >>> t = selective_threshold(conf, agree, target_agreement=0.85, confidence_level=0.9)
        >>> bool(0.5 < t.threshold < 1.0), t.agreement >= 0.85
        (True, True)
    """
    c, a = _flags(confidence, agree)
    if not 0 < target_agreement < 1 or not 0 < confidence_level < 1:
        raise StatsError(
            "target_agreement and confidence_level must lie strictly between 0 and 1, got "
            f"{target_agreement} and {confidence_level}"
        )
    if min_items < 1:
        raise StatsError(f"min_items must be at least 1, got {min_items}")
    n_total = c.size
    if n_total < 2:
        raise StatsError(
            f"{n_total} calibration item(s): a threshold needs a labelled sample "
            f"(at least {min_items} items at or above it)"
        )
    order = np.lexsort((a, -c))  # most confident first (ties: a fixed order; counts are per value)
    c, a = c[order], a[order]
    cum_agree = np.cumsum(a)
    distinct = np.flatnonzero(np.r_[c[1:] != c[:-1], True])  # last index of each value
    delta = 1 - confidence_level
    best, stop = None, None
    for last in distinct:
        n = int(last + 1)
        if n < min_items:
            continue
        k = round(float(cum_agree[last]))
        p = _p_value(k, n, target_agreement)
        if p > delta:
            stop = (n, k)
            break
        best = (last, n, k, p)
    if best is None:
        n, k = stop if stop is not None else (n_total, round(float(cum_agree[-1])))
        rate = k / n
        need = labels_to_certify(rate, target_agreement, confidence_level)
        if stop is None:  # no threshold had min_items items at or above it: none was tested
            more = max(need or min_items, min_items)
            raise StatsError(
                f"cannot certify {target_agreement:.0%} agreement with {confidence_level:.0%} "
                f"confidence from {n_total} calibration items, fewer than the {min_items} a "
                f"threshold needs at or above it (min_items): label at least {more} items "
                f"(these {n_total} agree {rate:.1%}, {k}/{n}: too few to tell)"
            )
        advice = (
            f"at that agreement about {max(need, min_items)} labelled items would certify it"
            if need is not None
            else "at that agreement no number of labels would certify it: escalate every item "
            "(or use a better judge)"
        )
        raise StatsError(
            f"cannot certify {target_agreement:.0%} agreement with {confidence_level:.0%} "
            f"confidence from {n_total} calibration items: the {n} most confident agree "
            f"{rate:.1%} ({k}/{n}); {advice}"
        )
    last, n, k, p = best
    method = (
        f"fixed-sequence exact binomial tests from the highest confidence down (thresholds with "
        f">= {min_items} items), level {delta:g}; stopped "
        + (
            f"at the first threshold not certified ({stop[0]} items, {stop[1]} agreed)"
            if stop
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
        curve=_curve(c, a),
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
