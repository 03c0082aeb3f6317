"""Adaptive repeats: send repeats in rounds until the headline's interval is as narrow as asked.

Each probe is a case. A round is one or more *sweeps*; a sweep sends one more repeat of every
case, except that a *settled* case (its within-case variance at most ``settled_share`` of the
largest, so more repeats of it barely move the answer) is sent only with probability
``settled_probability`` and weighted back (see :mod:`jevalkit.stats._sequential`). Which settled
cases a sweep sends is drawn from a generator seeded by the sweep's index, so a resumed run
replays the same decisions and sends only what is missing.

After every round the anytime-valid interval of the headline (the mean over these cases of
each case's pass probability, or expected score) is computed; the run stops when its half-width
is at most ``target_half_width``, when the interval clears ``decide_at`` (a gate's bar) either
way, when every case has ``max_repeats`` repeats, when the budget is reached, or when a whole round
scored nothing and nothing was scored before (an endpoint that only errors: sending on would
spend ``max_repeats`` requests on errors), and says which; with nothing scored the value and
interval are NaN, never the prior's [0, 1] around 0.5.
The interval is valid whatever the stopping rule (a confidence sequence), so stopping early is
not peeking.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..costs import Budget
from ..errors import UsageError
from ..local import is_local_model
from ..probes import Probe
from ..stats import SweepSequence, sequence_method
from ._columns import finite
from ._execute import RunSettings, execute
from ._plan import probe_job, probe_parameters
from ._target import open_target

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


def _case_score(row: dict[str, Any], metric: str) -> float:
    if row.get("error"):
        return math.nan
    value = row.get("passed") if metric == "pass_rate" else finite(row.get("score"))
    if value is None:
        return math.nan
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"adaptive repeats need scores in [0, 1], got {value!r}")
    return value


async def run_adaptive(
    probes: list[Probe],
    overrides: dict[str, Any],
    plan: AdaptiveRepeats,
    *,
    model: str,
    out: Path,
    label: str | None,
    base_url: str | None,
    api_key_env: str | None,
    settings: RunSettings,
    constrained: bool = False,
) -> pd.DataFrame:
    """Run ``probes`` with adaptive repeats; return every row sent for them, with the result in
    ``attrs["adaptive"]`` (a one-row DataFrame of :data:`ADAPTIVE_COLUMNS`)."""
    n_cases = len(probes)
    check_reachable(plan, n_cases)
    params = [probe_parameters(p, overrides, constrained=constrained) for p in probes]
    budget: Budget = settings.new_budget()
    seq = plan.sequence(n_cases)
    sweeps_per_round = max(1, math.ceil(settings.concurrency / n_cases))
    next_repeat = np.zeros(n_cases, dtype=int)
    sweep = rounds = dropped = 0
    frames: list[pd.DataFrame] = []
    reason = "max_repeats"
    # keep the embedded model up across rounds (it is started once, not once per round)
    local = is_local_model(model) and base_url is None
    with open_target(model, base_url) if local else contextlib.nullcontext():
        while sweep < plan.max_repeats:
            n_sweeps, send_prob = plan.next_round(seq, rounds, sweep, sweeps_per_round)
            draws = []
            jobs = []
            for k in range(n_sweeps):
                chosen = plan.sweep_draw(sweep + k, send_prob)
                draws.append(chosen)
                for i in np.flatnonzero(chosen):
                    jobs.append(
                        (k, i, probe_job(probes[i], params[i], int(next_repeat[i]), rounds))
                    )
                    next_repeat[i] += 1
            df = await execute(
                [job for _, _, job in jobs],
                model=model,
                out=out,
                label=label,
                base_url=base_url,
                api_key_env=api_key_env,
                settings=settings,
                description=f"round {rounds}",
                budget=budget,
            )
            frames.append(df)
            if df.attrs.get("stopped"):
                reason = "budget"
                break
            by_key = {(r["probe"], r["version"], r["repeat"]): r for r in df.to_dict("records")}
            scores = np.full((n_sweeps, n_cases), np.nan)
            for k, i, job in jobs:
                row = by_key[(job.probe, job.version, job.repeat)]
                scores[k, i] = _case_score(row, plan.metric)
            added = 0
            for k in range(n_sweeps):
                errored = draws[k] & np.isnan(scores[k])
                if errored.any():
                    dropped += 1  # left out whole: errors assumed unrelated to the answer
                    continue
                seq.add_sweep(scores[k], send_prob)
                added += 1
            sweep += n_sweeps
            rounds += 1
            if added == 0 and seq.n_sweeps == 0:
                reason = "nothing scored"
                break
            stop = plan.stop_reason(seq)
            if stop:
                reason = stop
                break
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    scored = seq.n_sweeps > 0
    low, high = seq.interval() if scored else (np.nan, np.nan)
    summary = pd.DataFrame(
        [
            {
                "metric": plan.metric,
                "n_cases": n_cases,
                "n": int(seq.n.sum()),
                "sweeps": seq.n_sweeps,
                "rounds": rounds,
                "value": seq.estimate() if scored else np.nan,
                "ci_low": low,
                "ci_high": high,
                "half_width": (high - low) / 2,
                "target_half_width": plan.target_half_width,
                "stop_reason": reason,
                "dropped_sweeps": dropped,
                "method": (
                    sequence_method(n_cases, plan.confidence)
                    if scored
                    else "not estimable: no request was scored (every sweep had an error row)"
                )
                + (f"; {budget.reached}" if budget.reached else ""),
            }
        ],
        columns=ADAPTIVE_COLUMNS,
    )
    rows.attrs["adaptive"] = summary
    rows.attrs["stopped"] = budget.reached
    rows.attrs["budget_overrun"] = budget.overrun is not None
    return rows
