"""Adaptive repeats as a design: send repeats in rounds until the headline's interval is as
narrow as asked (:class:`AdaptiveRepeats`, run by :func:`jevalkit.runner.run_design` through
``run(..., design=AdaptiveRepeats(...))`` or ``--repeats auto``).

Each case (a probe's case in one wording, or a judge's case; a pairwise game's two orders are
one case) is planned for ``max_repeats`` repeats. A round is one or more *sweeps*; a sweep sends
one more repeat of every case, except that a *settled* case (its within-case variance at most
``settled_share`` of the largest, so more repeats of it barely move the answer) is sent only
with probability ``settled_probability`` and weighted back (:class:`SweepSequence`). Which
settled cases a sweep sends is drawn from a generator seeded by the sweep's index, so a
resumed run replays the same decisions and sends only what is missing.

After every round the anytime-valid interval of the headline (the mean over these cases of
each case's pass probability, or expected score) is computed; the run stops when its half-width
is at most ``target_half_width``, when the interval clears ``decide_at`` (a gate's bar) either
way, when every case has ``max_repeats`` repeats, when a budget is reached, or when a whole
round scored nothing and nothing was scored before (an endpoint that only errors: sending on
would spend ``max_repeats`` requests on errors), and says which; with nothing scored the value
and interval are NaN, never the prior's [0, 1] around 0.5. The interval is valid whatever the
stopping rule (a confidence sequence), so stopping early is not peeking. A sweep with an error
row in a sent case is left out whole (valid when errors do not depend on the answer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import pandas as pd

from ..contract import Result, estimator, finish
from ..errors import StatsError, UsageError
from ..results import ROW_POSITION, Design, Stop, Wave, finite, reason_in
from ._sequential import SweepSequence, _fed, _sweeps

ADAPTIVE_METRICS = ("pass_rate", "mean_score")
ESTIMATE_COLUMNS = [
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


def _number(value: object) -> bool:
    """Whether ``value`` is a real number (not a bool, a string or None)."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


AdaptiveStop = Literal["target met", "decided", "max_repeats", "budget", "nothing scored"]
STOP_REASONS: tuple[AdaptiveStop, ...] = get_args(AdaptiveStop)
CASE_COLUMNS = ("source", "probe", "version", "case_id", "variant", "system_a", "system_b")


@dataclass(frozen=True, eq=False)
class AdaptiveEstimate(Result):
    """What adaptive repeats found: the anytime-valid interval of the headline and how the
    rounds went.

    Attributes:
        estimate: one row: ``metric``, ``n_cases``, ``n`` (scored requests), ``sweeps``,
            ``rounds``, ``value``, ``ci_low``, ``ci_high``, ``half_width``,
            ``target_half_width``, ``stop_reason`` (one of ``target met``, ``decided``,
            ``max_repeats``, ``budget``, ``nothing scored``), ``dropped_sweeps`` (left out for
            an error row), ``method``.
    """

    estimate: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """The estimate (one row)."""
        return self.estimate


@dataclass(eq=False, kw_only=True)
class AdaptiveRepeats(Design):
    """Adaptive repeats (see the module docstring): how they run, and the design that runs
    them.

    Attributes:
        target_half_width: stop once the interval's half-width is at most this.
        min_repeats: repeats every case gets in the first round.
        max_repeats: no case gets more (the run plans this many; sweeps are capped here).
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
    _state: dict = field(default_factory=dict, init=False, repr=False)

    kind = "adaptive repeats"

    def __post_init__(self) -> None:
        h = self.target_half_width
        if isinstance(h, bool) or not isinstance(h, int | float) or not 0 < h <= 0.5:
            raise UsageError(f"target_half_width must be a number in (0, 0.5], got {h!r}")
        for name in ("min_repeats", "max_repeats"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"{name} must be a whole number of at least 1, got {v!r}")
        if self.max_repeats > MAX_REPEATS:
            raise UsageError(
                f"max_repeats must be at most {MAX_REPEATS} (every repeat is planned), got "
                f"{self.max_repeats}"
            )
        if self.min_repeats > self.max_repeats:
            raise UsageError(
                f"min_repeats ({self.min_repeats}) must be from 1 to max_repeats ({self.max_repeats})"
            )
        if self.metric not in ADAPTIVE_METRICS:
            raise UsageError(
                f"metric must be one of {', '.join(ADAPTIVE_METRICS)}, got {self.metric!r}"
            )
        if not _number(self.confidence) or not 0 < self.confidence < 1:
            raise UsageError(f"confidence must be between 0 and 1, got {self.confidence!r}")
        if self.decide_at is not None and (
            not _number(self.decide_at) or not 0 <= self.decide_at <= 1
        ):
            raise UsageError(f"decide_at must be in [0, 1], got {self.decide_at!r}")
        share, probability = self.settled_share, self.settled_probability
        if not (_number(share) and _number(probability)) or not (
            0 <= share < 1 and 0 < probability <= 1
        ):
            raise UsageError(
                f"settled_share must be in [0, 1) and settled_probability in (0, 1], got "
                f"{share!r} and {probability!r}"
            )

    # -- the design ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The design as its rows record it."""
        bar = "" if self.decide_at is None else f", decide at {self.decide_at:g}"
        return (
            f"adaptive repeats: {self.metric}, target +/-{self.target_half_width:g}, "
            f"{self.min_repeats}-{self.max_repeats} repeats, {self.confidence:.0%}{bar}"
        )

    @property
    def planned_repeats(self) -> int:
        """The repeats of every case a run plans: ``max_repeats``."""
        return self.max_repeats

    def start(self, candidates: pd.DataFrame, *, in_flight: int = 1) -> None:
        """Group the candidates by case and repeat; refuse a target no run could meet."""
        cases: dict[tuple, dict[int, list[int]]] = {}
        for position, row in enumerate(
            candidates[[*CASE_COLUMNS, "repeat"]].itertuples(index=False, name=None)
        ):
            cases.setdefault(row[:-1], {}).setdefault(int(row[-1]), []).append(position)
        if not cases:
            raise UsageError("nothing to run: no case")
        by_case = [[by_repeat[r] for r in sorted(by_repeat)] for by_repeat in cases.values()]
        if any(len(repeats) < self.max_repeats for repeats in by_case):
            raise UsageError(f"every case needs jobs planned for max_repeats={self.max_repeats}")
        check_reachable(self, len(by_case))
        n = len(by_case)
        self._state.clear()
        self._state.update(
            cases=by_case,
            seq=self.sequence(n),
            next_repeat=np.zeros(n, dtype=int),
            sweep=0,
            rounds=0,
            dropped=0,
            pending=[],  # (sweep in round, case, positions) of the round sent
            draws=[],
            sweeps_per_round=max(1, math.ceil(in_flight / n)),
            reason=None,
        )

    def next(self, rows: pd.DataFrame) -> Wave | Stop:
        """The next round's repeats, or why to stop (after reading the last round's rows)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for a wave")
        if s["pending"]:
            reason = self._read(rows)
            if reason is not None:
                return Stop(reason)
        if s["sweep"] >= self.max_repeats:
            return Stop("max_repeats")
        n_sweeps, send_prob = self.next_round(
            s["seq"], s["rounds"], s["sweep"], s["sweeps_per_round"]
        )
        positions, pending, draws = [], [], []
        for k in range(n_sweeps):
            chosen = self.sweep_draw(s["sweep"] + k, send_prob)
            draws.append(chosen)
            for i in np.flatnonzero(chosen):
                sent = s["cases"][i][s["next_repeat"][i]]
                positions.extend(sent)
                pending.append((k, int(i), sent))
                s["next_repeat"][i] += 1
        s.update(pending=pending, draws=draws, send_prob=send_prob)
        return Wave(positions, label=f"round {s['rounds']}")

    def _read(self, rows: pd.DataFrame) -> AdaptiveStop | None:
        """Feed the round just sent to the sequence; the reason to stop, if any."""
        s = self._state
        by_position = {
            int(p): r for p, r in zip(rows[ROW_POSITION], rows.to_dict("records"), strict=True)
        }
        n_sweeps, n_cases = len(s["draws"]), len(s["cases"])
        scores = np.full((n_sweeps, n_cases), np.nan)
        for k, i, positions in s["pending"]:
            scores[k, i] = case_score(
                [by_position[p] for p in positions if p in by_position], self.metric
            )
        seq: SweepSequence = s["seq"]
        added = 0
        for k in range(n_sweeps):
            if (s["draws"][k] & np.isnan(scores[k])).any():
                s["dropped"] += 1  # left out whole: errors assumed unrelated to the answer
                continue
            seq.add_sweep(scores[k], s["send_prob"])
            added += 1
        s["sweep"] += n_sweeps
        s["rounds"] += 1
        s["pending"] = []
        if added == 0 and seq.n_sweeps == 0:
            return "nothing scored"
        return self.stop_reason(seq)

    def outcome(self, rows: pd.DataFrame, stop: str | None = None) -> AdaptiveEstimate:
        """The anytime-valid interval after the rounds read (:class:`AdaptiveEstimate`)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for its outcome")
        seq: SweepSequence = s["seq"]
        return adaptive_estimate(
            seq,
            metric=self.metric,
            rounds=s["rounds"],
            dropped=s["dropped"],
            target_half_width=self.target_half_width,
            stop_reason=_reason(stop),
            budget=stop if stop and stop.startswith("budget") and stop != "budget" else None,
        )

    def bounds(self, n_cases: int) -> tuple[int, int]:
        """The fewest and most requests of ``n_cases`` cases (one job each per repeat).

        Example:
            >>> AdaptiveRepeats(max_repeats=10).bounds(3)
            (6, 30)
        """
        return n_cases * min(self.min_repeats, self.max_repeats), n_cases * self.max_repeats

    # -- the policy ----------------------------------------------------------------------

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

    def stop_reason(self, seq: SweepSequence) -> AdaptiveStop | None:
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


MAX_REPEATS = 10_000  # the most repeats per case a design may plan (every one is a planned job)


def _reason(stop: str | None) -> AdaptiveStop:
    reason = reason_in(stop, STOP_REASONS, done="max_repeats")
    if reason is None:
        raise StatsError(f"stop_reason must be one of {STOP_REASONS}, got {stop!r}")
    return reason


def case_score(rows: list[dict], metric: str) -> float:
    """One case's repeat: the mean verdict (``pass_rate``) or score (``mean_score``) of its rows
    (two for a pairwise game in both orders); NaN when a row is an error (the repeat is left
    out) or none came back (a budget stopped the round).

    Example:
        >>> case_score([{"passed": True}, {"passed": False}], "pass_rate")
        0.5
        >>> case_score([{"error": {"type": "http"}}], "pass_rate")
        nan
    """
    values = []
    for row in rows:
        if row.get("error"):
            return math.nan
        value = row.get("passed") if metric == "pass_rate" else finite(row.get("score"))
        if value is None:
            if metric == "pass_rate":
                raise UsageError(
                    f"{row.get('probe')} rows carry no pass/fail verdict (passed): adaptive "
                    "repeats on pass_rate cannot use them; use the metric mean_score"
                )
            return math.nan
        value = float(value)
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"adaptive repeats need scores in [0, 1], got {value!r}")
        values.append(value)
    return float(np.mean(values)) if values else math.nan


def _adapter(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter: one system's scores as sweeps (repeats) x cases, fed to a
    sequence as a run feeds it, then read as the design's outcome."""
    seq = _fed(_sweeps(frame))
    return adaptive_estimate(
        seq, metric="mean_score", rounds=1, dropped=0, target_half_width=0.1,
        stop_reason="max_repeats",
    ).table()  # fmt: skip


@estimator(
    unit="case",
    estimand="the mean over the run's cases of each case's expected score (adaptive repeats)",
    interval="anytime-valid confidence sequence over sweeps (SweepSequence), read at the stop",
    checks=("order", "rename", "scale", "no_spread"),
    adapter=_adapter,
    note="a design's outcome from its own sweeps; tests/contract/test_designs.py replays the "
    "design; calibrated by benchmarks/bench_adaptive.py",
)
def adaptive_estimate(
    seq: SweepSequence,
    *,
    metric: str,
    rounds: int,
    dropped: int,
    target_half_width: float,
    stop_reason: AdaptiveStop,
    budget: str | None = None,
) -> AdaptiveEstimate:
    """The outcome of adaptive repeats from their sequence: the interval with how the rounds
    went (:class:`AdaptiveEstimate`); not estimable (NaN, ``method`` saying why) when nothing
    was scored.

    Example:
        >>> seq = SweepSequence(2)
        >>> seq.add_sweep([1.0, 0.0])
        >>> row = adaptive_estimate(seq, metric="pass_rate", rounds=1, dropped=0,
        ...                         target_half_width=0.1, stop_reason="max_repeats").table().iloc[0]
        >>> float(row["value"]), int(row["n"]), row["stop_reason"]
        (0.5, 2, 'max_repeats')
    """
    if stop_reason not in STOP_REASONS:
        raise StatsError(f"stop_reason must be one of {STOP_REASONS}, got {stop_reason!r}")
    scored = seq.n_sweeps > 0
    low, high = seq.interval() if scored else (np.nan, np.nan)
    method = (
        seq.method
        if scored
        else "not estimable: no request was scored (every sweep had an error row)"
    )
    table = finish(
        {
            "metric": [metric],
            "n_cases": [seq.n_cases],
            "n": [int(seq.n.sum())],
            "sweeps": [seq.n_sweeps],
            "rounds": [rounds],
            "value": [seq.estimate() if scored else np.nan],
            "ci_low": [low],
            "ci_high": [high],
            "half_width": [(high - low) / 2],
            "target_half_width": [target_half_width],
            "stop_reason": [stop_reason],
            "dropped_sweeps": [dropped],
            "method": [method + (f"; {budget}" if budget else "")],
        },
        order=ESTIMATE_COLUMNS,
    )
    return AdaptiveEstimate(table)


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
    instead), naming the repeats it would take.

    Example:
        >>> check_reachable(AdaptiveRepeats(target_half_width=0.01, max_repeats=5), 1)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: target half-width 0.01 cannot be met within max_repeats=5 over 1 case(s): even if every repeat agreed, the interval would be +/-0.500; raise --max-repeats to at least 640 or widen --target-half-width
    """
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
