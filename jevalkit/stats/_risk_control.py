"""Conformal risk control of a judge's decided-and-wrong rate: the lowest confidence threshold
whose expected share of items decided against a person is at most ``risk`` (Angelopoulos,
Bates, Fisch, Lei & Schuster, "Conformal Risk Control", ICLR 2024; as SCOPE, arXiv 2602.13110,
uses it for judges).

An item's loss at threshold t is 1 when the judge decides it (confidence >= t) and the person
disagrees with the judge, else 0: at most 1 (B = 1), and never larger at a higher threshold.
The threshold is the smallest t with (n / (n + 1)) * Rhat(t) + 1 / (n + 1) <= risk, Rhat the
mean loss over the n calibration items; thresholds are scanned from the highest confidence
down over the calibration confidences (the loss only changes there).

What is promised: E[L] <= risk, the expectation taken jointly over the draw of the calibration
items and a new item drawn like them (exchangeable with them): on average over calibrations, at
most ``risk`` of all items (decided or not) are decided by the judge against the person.

What is not: the agreement among the decided items (the rate is over all items, people's
included; a judge that decides few items may be wrong on a large share of them); any
probability for one calibration (a given calibration's rate can exceed ``risk``, about half
of them may); items unlike the calibration items. :func:`selective_threshold` gives the
stronger kind: agreement among decided items, with a stated probability over calibrations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..contract import Result, estimator
from ..errors import StatsError
from ._selective import _curve, _flags

LOSS_BOUND = 1.0  # B: an item's loss is 0 or 1
_SLACK = 1e-12  # float rounding of risk * (n + 1) (0.1 * 10 is 1.0000000000000002 elsewhere)


@dataclass(frozen=True)
class RiskThreshold(Result):
    """The threshold of :func:`risk_controlled_threshold`.

    Attributes:
        threshold: the lowest confidence kept (verdicts at or above it are decided).
        coverage: the share of the ``n_calibration`` items at or above it.
        n: calibration items at or above it; ``n_wrong`` of them the person disagreed with.
        empirical_risk: ``n_wrong / n_calibration`` (Rhat at the threshold).
        bound: ``(n_wrong + 1) / (n_calibration + 1)``, the conformal bound, at most ``risk``.
        risk: the expected decided-and-wrong rate asked for.
        n_calibration: the items the rate is over (those given, and any counted as never
            decided).
        method: how the threshold was chosen.
        curve: agreement against coverage, as :func:`agreement_curve`.
    """

    threshold: float
    coverage: float
    n: int
    n_wrong: int
    empirical_risk: float
    bound: float
    risk: float
    n_calibration: int
    method: str
    curve: pd.DataFrame = field(repr=False, compare=False, default_factory=pd.DataFrame)
    _unpack = ("threshold", "coverage", "n")

    @property
    def guarantee(self) -> str:
        """What is promised, and what not, in words."""
        return (
            f"in expectation over the calibration draw and a new item like the "
            f"{self.n_calibration} calibration items, at most {self.risk:.3g} of all items are "
            f"decided (confidence >= {self.threshold:.4g}) against the person; not the "
            "agreement among decided items, and not for this calibration with any stated "
            "probability"
        )


def _check_risk(risk: float) -> float:
    if isinstance(risk, bool) or not isinstance(risk, int | float) or not 0 < risk < 1:
        raise StatsError(f"risk must lie strictly between 0 and 1, got {risk!r}")
    return float(risk)


def _passes(wrong: np.ndarray | int, n: int, risk: float) -> np.ndarray:
    """(n / (n + 1)) * (wrong / n) + B / (n + 1) <= risk, i.e. wrong + B <= risk * (n + 1)."""
    return np.asarray(wrong) + LOSS_BOUND <= risk * (n + 1) * (1 + _SLACK)


def _labels_for_risk(risk: float) -> int:
    """The fewest calibration items at which any threshold can pass at ``risk``: even with no
    disagreement the bound is B / (n + 1), so n + 1 >= 1 / risk.

    Example:
        >>> _labels_for_risk(0.1), _labels_for_risk(0.05), _labels_for_risk(0.1 / 3)
        (9, 19, 29)
    """
    risk = _check_risk(risk)
    n = max(1, math.ceil(LOSS_BOUND / risk - 1 - 1e-9))
    while not _passes(0, n, risk):
        n += 1
    while n > 1 and _passes(0, n - 1, risk):
        n -= 1
    return n


def _risk_adapter(frame: pd.DataFrame) -> RiskThreshold:
    return risk_controlled_threshold(
        frame["score"].astype(float), frame["score"].astype(float) >= 0.25, risk=0.2
    )


@estimator(
    unit="calibration item",
    estimand="the lowest confidence threshold whose expected decided-and-wrong rate (over "
    "calibrations and a new item) is at most risk",
    interval="none (a threshold chosen by conformal risk control: a bound in expectation over "
    "calibrations, not a confidence statement)",
    checks=("order", "rename", "one_case", "method"),
    adapter=_risk_adapter,
    calibration="cascade_crc",
)
def risk_controlled_threshold(
    confidence: ArrayLike,
    agree: ArrayLike,
    *,
    risk: float = 0.1,
    n_calibration: int | None = None,
) -> RiskThreshold:
    """The lowest threshold on the judge's confidence at which, in expectation over the
    calibration draw and a new item, the share of items the judge decides against the person
    is at most ``risk`` (conformal risk control).

    Args:
        confidence: the judge's confidence in its verdict, one per calibration item.
        agree: whether the person agreed with the judge's verdict, one per item (True/False).
        risk: the expected decided-and-wrong rate allowed, over all items (alpha).
        n_calibration: the number of calibration items the rate is over, when more than those
            given: the others count as never decided (loss 0 at every threshold; in a cascade,
            the items an earlier judge decided). None: those given.

    Returns:
        :class:`RiskThreshold` (``threshold``, ``coverage``, ``n``, ``n_wrong``, ``bound``;
        ``guarantee`` in words).

    Raises:
        StatsError: one line when no threshold can pass: too few items (even with no
            disagreement the bound is 1 / (n + 1); the message says how many labels would
            do), or the most confident items already disagree more than ``risk`` allows.

    Notes:
        The loss of item i at threshold t is L_i(t) = 1 when confidence_i >= t and the person
        disagreed, else 0 (non-increasing in t, at most B = 1, and 0 above every confidence).
        With Rhat(t) the mean of L_i(t) over the n calibration items, the threshold is the
        smallest calibration confidence t with (n / (n + 1)) Rhat(t) + B / (n + 1) <= risk,
        the thresholds scanned from the highest down (Rhat only grows as t falls, so the
        passing ones are those above the first that fails). Conformal risk control then gives
        E[L_{n+1}(t)] <= risk for a new item exchangeable with the calibration items, the
        expectation over both. It is a mean over calibrations, not a statement about this one,
        and about decided-and-wrong items among all items, not agreement among decided ones.

    Example:
        >>> conf = [0.99, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55]
        >>> agree = [True, True, True, False, True, True, True, False, True, True]
        >>> t = risk_controlled_threshold(conf * 2, agree * 2, risk=0.2)  # 20 items
        >>> t.threshold, t.n, t.n_wrong, round(t.bound, 3)
        (0.7, 14, 2, 0.143)
    """
    c, a = _flags(confidence, agree)
    risk = _check_risk(risk)
    n_total = c.size if n_calibration is None else n_calibration
    if isinstance(n_total, bool) or not isinstance(n_total, int | np.integer) or n_total < c.size:
        raise StatsError(
            f"n_calibration must be a whole number of at least the {c.size} items given, got "
            f"{n_calibration!r}"
        )
    n_total = int(n_total)
    need = _labels_for_risk(risk)
    if c.size == 0:
        raise StatsError(
            f"no calibration item given (of {n_total}): no threshold to choose, nothing decided"
        )
    if n_total < need:
        raise StatsError(
            f"no threshold can keep the expected decided-and-wrong rate at {risk:.3g} from "
            f"{n_total} calibration item(s): even with no disagreement the bound is 1 / "
            f"({n_total} + 1) = {1 / (n_total + 1):.3g} > {risk:.3g}; label at least {need} "
            "items"
        )
    order = np.lexsort((a, -c))  # most confident first
    c, a = c[order], a[order]
    last = np.flatnonzero(np.r_[c[1:] != c[:-1], True])  # each distinct confidence, ties in
    wrong = np.cumsum(1 - a)[last].round().astype(int)
    ok = _passes(wrong, n_total, risk)
    failing = np.flatnonzero(~ok)
    kept = last[: failing[0] if failing.size else last.size]  # the passing ones: a prefix
    if kept.size == 0:
        raise StatsError(
            f"no threshold keeps the expected decided-and-wrong rate at {risk:.3g} on "
            f"{n_total} calibration items: the {last[0] + 1} most confident already hold "
            f"{wrong[0]} disagreement(s), and (wrong + 1) / (n + 1) = "
            f"{(wrong[0] + 1) / (n_total + 1):.3g} > {risk:.3g}; every item goes to a person "
            "(or use a better judge, more labels)"
        )
    at = kept[-1]
    n_wrong = int(wrong[kept.size - 1])
    return RiskThreshold(
        threshold=float(c[at]),
        coverage=(at + 1) / n_total,
        n=int(at + 1),
        n_wrong=n_wrong,
        empirical_risk=n_wrong / n_total,
        bound=(n_wrong + LOSS_BOUND) / (n_total + 1),
        risk=risk,
        n_calibration=n_total,
        method=(
            f"conformal risk control at risk {risk:.4g}: the lowest calibration confidence with "
            f"(n_wrong + 1) / (n + 1) <= risk over n = {n_total} items, scanned from the "
            "highest down"
        ),
        curve=_curve(c, a),
    )
