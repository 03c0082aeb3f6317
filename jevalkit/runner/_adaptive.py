"""Adaptive repeats: send repeats in rounds until the headline's interval is as narrow as asked.
This module is the policy (:class:`AdaptiveRepeats`: when to stop, what the next round sends);
the rounds are executed by ``_rounds.py``.

Each probe (or judge case) is a case. A round is one or more *sweeps*; a sweep sends one more
repeat of every case, except that a *settled* case (its within-case variance at most
``settled_share`` of the largest, so more repeats of it barely move the answer) is sent only
with probability ``settled_probability`` and weighted back (see :class:`jevalkit.stats.SweepSequence`).
Which settled cases a sweep sends is drawn from a generator seeded by the sweep's index, so a
resumed run replays the same decisions and sends only what is missing.

After every round the anytime-valid interval of the headline (the mean over these cases of
each case's pass probability, or expected score) is computed; the run stops when its half-width
is at most ``target_half_width``, when the interval clears ``decide_at`` (a gate's bar) either
way, when every case has ``max_repeats`` repeats, when the budget is reached, or when a whole
round scored nothing and nothing was scored before (an endpoint that only errors: sending on
would spend ``max_repeats`` requests on errors), and says which; with nothing scored the value
and interval are NaN, never the prior's [0, 1] around 0.5.
The interval is valid whatever the stopping rule (a confidence sequence), so stopping early is
not peeking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..stats import SweepSequence

ADAPTIVE_METRICS = ("pass_rate", "mean_score")
ADAPTIVE_COLUMNS = [
    "metric",
    "n_cases",
    "n",
    "sweeps",
    "rounds",
    "value",
    "ci_low",
    "ci_high",
    "half_width",
    "target_half_width",
    "stop_reason",
    "dropped_sweeps",
    "method",
]
STOP_REASONS = ("target met", "decided", "max_repeats", "budget", "nothing scored")


@dataclass(frozen=True, kw_only=True)
class AdaptiveRepeats:
    """How adaptive repeats run (``repeats="auto"``).

    Attributes:
        target_half_width: stop once the interval's half-width is at most this.
        min_repeats: repeats every case gets in the first round.
        max_repeats: no case gets more (sweeps are capped here).
        metric: ``pass_rate`` (the ``passed`` verdict) or ``mean_score`` (``score`` in [0, 1]).
        confidence: of the anytime-valid interval.
        decide_at: a bar; stop as soon as the interval lies wholly above or below it (the gate).
        settled_share: a case whose variance is at most this share of the largest is settled.
        settled_probability: the chance a sweep sends a settled case.

    Example:
        >>> AdaptiveRepeats(target_half_width=0.05, max_repeats=50).min_repeats
        2
        >>> AdaptiveRepeats(min_repeats=30, max_repeats=20)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: min_repeats (30) must be from 1 to max_repeats (20)
    """

    target_half_width: float = 0.03
    min_repeats: int = 2
    max_repeats: int = 20
    metric: str = "pass_rate"
    confidence: float = 0.95
    decide_at: float | None = None
    settled_share: float = 0.3
    settled_probability: float = 0.5

    def __post_init__(self) -> None:
        h = self.target_half_width
        if isinstance(h, bool) or not isinstance(h, int | float) or not 0 < h <= 0.5:
            raise UsageError(f"target_half_width must be a number in (0, 0.5], got {h!r}")
        for name in ("min_repeats", "max_repeats"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"{name} must be a whole number of at least 1, got {v!r}")
        if self.min_repeats > self.max_repeats:
            raise UsageError(
                f"min_repeats ({self.min_repeats}) must be from 1 to max_repeats ({self.max_repeats})"
            )
        if self.metric not in ADAPTIVE_METRICS:
            raise UsageError(
                f"metric must be one of {', '.join(ADAPTIVE_METRICS)}, got {self.metric!r}"
            )
        if not 0 < self.confidence < 1:
            raise UsageError(f"confidence must be between 0 and 1, got {self.confidence!r}")
        if self.decide_at is not None and not 0 <= self.decide_at <= 1:
            raise UsageError(f"decide_at must be in [0, 1], got {self.decide_at!r}")
        if not 0 <= self.settled_share < 1 or not 0 < self.settled_probability <= 1:
            raise UsageError("settled_share must be in [0, 1) and settled_probability in (0, 1]")

    def sequence(self, n_cases: int) -> SweepSequence:
        """The confidence sequence of an adaptive run over ``n_cases`` (bets tuned for its target
        and horizon).

        Example:
            >>> AdaptiveRepeats(max_repeats=50).sequence(4).n_cases
            4
        """
        return SweepSequence(
            n_cases,
            confidence=self.confidence,
            horizon=self.max_repeats,
            target_half_width=None if self.decide_at is not None else self.target_half_width,
        )

    def next_round(
        self, seq: SweepSequence, rounds: int, sweep: int, sweeps_per_round: int
    ) -> tuple[int, np.ndarray]:
        """How many sweeps the next round runs, and each case's chance of being sent in them:
        ``min_repeats`` sweeps of every case first; then settled cases (variance at most
        ``settled_share`` of the largest) are sent with ``settled_probability``.

        Example:
            >>> seq = SweepSequence(2)
            >>> AdaptiveRepeats(min_repeats=3).next_round(seq, 0, 0, 4)[0]
            3
        """
        if rounds == 0:
            return min(self.min_repeats, self.max_repeats), np.ones(seq.n_cases)
        variance = seq.case_variance()
        settled = variance <= self.settled_share * variance.max()
        n_sweeps = min(sweeps_per_round, self.max_repeats - sweep)
        return n_sweeps, np.where(settled, self.settled_probability, 1.0)

    @staticmethod
    def sweep_draw(sweep_index: int, send_prob: np.ndarray) -> np.ndarray:
        """Which cases sweep ``sweep_index`` sends: drawn from a generator seeded by the index, so a
        resumed run makes the same draws.

        Example:
            >>> draw = AdaptiveRepeats.sweep_draw
            >>> draw(7, np.array([1.0, 0.5, 0.5])).tolist() == draw(7, np.array([1.0, 0.5, 0.5])).tolist()
            True
        """
        return np.random.default_rng([sweep_index, 0x5EED]).random(send_prob.size) < send_prob

    def stop_reason(self, seq: SweepSequence) -> str | None:
        """``decided`` when the interval clears the bar, ``target met`` when it is narrow enough,
        else None (go on).

        Example:
            >>> AdaptiveRepeats().stop_reason(AdaptiveRepeats().sequence(3)) is None  # no data yet
            True
        """
        low, high = seq.interval()
        if self.decide_at is not None and (low >= self.decide_at or high < self.decide_at):
            return "decided"
        if (high - low) / 2 <= self.target_half_width:
            return "target met"
        return None


def best_half_width(n_cases: int, sweeps: int, confidence: float) -> float:
    """The narrowest half-width ``sweeps`` sweeps over ``n_cases`` cases can give: every repeat
    of every case the same answer (any real run is at least this wide).

    Example:
        >>> round(best_half_width(1, 20, 0.95), 3) > 0.1
        True
    """
    seq = SweepSequence(n_cases, confidence=confidence, horizon=sweeps)
    for _ in range(sweeps):
        seq.add_sweep(np.ones(n_cases))
    low, high = seq.interval()
    return (high - low) / 2


def check_reachable(plan: AdaptiveRepeats, n_cases: int) -> None:
    """Refuse a target no run could meet within ``max_repeats`` (when there is no bar to decide
    instead), naming the repeats it would take."""
    if plan.decide_at is not None:
        return
    best = best_half_width(n_cases, plan.max_repeats, plan.confidence)
    if best <= plan.target_half_width:
        return
    needed = plan.max_repeats
    while (
        needed < 100_000
        and best_half_width(n_cases, needed, plan.confidence) > plan.target_half_width
    ):
        needed *= 2
    raise UsageError(
        f"target half-width {plan.target_half_width:g} cannot be met within max_repeats="
        f"{plan.max_repeats} over {n_cases} case(s): even if every repeat agreed, the interval "
        f"would be +/-{best:.3f}; raise --max-repeats to at least {needed} or widen "
        "--target-half-width"
    )
