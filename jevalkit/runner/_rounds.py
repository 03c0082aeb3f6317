"""Execute adaptive repeats in rounds, for probe runs and judge runs alike (the policy, when to
stop and what the next round sends, is :class:`~jevalkit.runner.AdaptiveRepeats`).

The jobs come planned for ``max_repeats`` repeats; a *case* is what one job per repeat (two for
a pairwise game played in both orders) evaluates: a probe's case in one wording (variant), or a
judge's case. Each round sends
the repeats the policy asks for through the one execution path, scores each case's repeat (its
rows' mean verdict or score; an error row leaves the repeat out), and feeds the anytime-valid
interval.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..costs import Budget
from ..errors import UsageError
from ..local import is_local_model
from ..results import finite, row_key
from ._adaptive import ADAPTIVE_COLUMNS, AdaptiveRepeats, check_reachable
from ._execute import Executor, execute
from ._job import Job
from ._options import RunSettings
from ._run_result import RunResult
from ._target import open_target


def case_repeats(jobs: Sequence[Job]) -> list[list[list[Job]]]:
    """The jobs by case (in planning order), then by repeat: ``[case][repeat] -> jobs``.

    Example:
        >>> import jevalkit
        >>> from jevalkit.runner import jobs_of
        >>> jobs = jobs_of([jevalkit.load_probe("schema-ten-records")], 3, {})
        >>> [[j.repeat for j in r] for r in case_repeats(jobs)[0]]
        [[0], [1], [2]]
    """
    cases: dict[tuple, dict[int, list[Job]]] = {}
    for job in jobs:
        case = (job.probe, job.version, job.case_id, job.variant, job.system_a, job.system_b)
        cases.setdefault(case, {}).setdefault(job.repeat, []).append(job)
    return [[by_repeat[r] for r in sorted(by_repeat)] for by_repeat in cases.values()]


def _case_score(rows: list[dict[str, Any]], metric: str) -> float:
    """One case's repeat: the mean verdict (``pass_rate``) or score (``mean_score``) of its rows;
    NaN when a row is an error (the repeat is left out)."""
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


async def run_adaptive(
    jobs: Sequence[Job],
    plan: AdaptiveRepeats,
    *,
    model: str | None,
    out: Path,
    settings: RunSettings,
    description: str = "requests",
    executor: Executor | None = None,
) -> RunResult:
    """Run ``jobs`` (planned for ``plan.max_repeats`` repeats) with adaptive repeats; return
    every row sent for them, with the interval in the result's ``adaptive`` (a one-row DataFrame
    of :data:`ADAPTIVE_COLUMNS`). Each round is one call of :func:`execute` with ``executor`` (on
    Dask the round's tasks run as a wave and the stopping rule sees its merged rows)."""
    cases = case_repeats(jobs)
    n_cases = len(cases)
    if n_cases == 0:
        raise UsageError("nothing to run: no case")
    if any(len(repeats) < plan.max_repeats for repeats in cases):
        raise UsageError(f"every case needs jobs planned for max_repeats={plan.max_repeats}")
    check_reachable(plan, n_cases)
    asked = model or "deterministic"
    budget: Budget = settings.new_budget()
    seq = plan.sequence(n_cases)
    sweeps_per_round = max(1, math.ceil(settings.concurrency / n_cases))
    next_repeat = np.zeros(n_cases, dtype=int)
    sweep = rounds = dropped = 0
    parts: list[RunResult] = []
    reason = "max_repeats"
    # keep the embedded model up across rounds (it is started once, not once per round)
    local = model is not None and is_local_model(model) and settings.base_url is None
    with open_target(model, settings.base_url) if local else contextlib.nullcontext():
        while sweep < plan.max_repeats:
            n_sweeps, send_prob = plan.next_round(seq, rounds, sweep, sweeps_per_round)
            draws = []
            sent: list[tuple[int, int, Job]] = []
            for k in range(n_sweeps):
                chosen = plan.sweep_draw(sweep + k, send_prob)
                draws.append(chosen)
                for i in np.flatnonzero(chosen):
                    for job in cases[i][next_repeat[i]]:
                        sent.append((k, i, replace(job, round=rounds)))
                    next_repeat[i] += 1
            part = await execute(
                [job for _, _, job in sent],
                model=model,
                out=out,
                settings=settings,
                description=f"{description}, round {rounds}",
                budget=budget,
                executor=executor,
            )
            parts.append(part)
            if part.stopped:
                reason = "budget"
                break
            by_key = {row_key(r): r for r in part.rows.to_dict("records")}
            rows: dict[tuple[int, int], list[dict[str, Any]]] = {}
            for k, i, job in sent:
                rows.setdefault((k, i), []).append(by_key[job.key(asked, settings.label)])
            scores = np.full((n_sweeps, n_cases), np.nan)
            for (k, i), case_rows in rows.items():
                scores[k, i] = _case_score(case_rows, plan.metric)
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
                    seq.method
                    if scored
                    else "not estimable: no request was scored (every sweep had an error row)"
                )
                + (f"; {budget.reached}" if budget.reached else ""),
            }
        ],
        columns=ADAPTIVE_COLUMNS,
    )
    return RunResult.of(parts, budget, adaptive=summary)
