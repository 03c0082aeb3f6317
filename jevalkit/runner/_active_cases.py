"""Active evaluation in the runner (``cases="active:K"``, ``prior=fit``): a new model is run on
K cases of a benchmark drawn in waves by :func:`jevalkit.items.select` (``method="active"``)
from an item model fitted on past systems, and its full-benchmark score estimated from them.

Each wave is one call of :func:`execute`. Before each wave the plan is drawn again from the
prior, the seed and the model's answers so far: the same inputs give the same draws, so a run
that is stopped (kill -9, a budget) and started again sends the cases it had drawn and goes on
from there, never re-drawing. Every row carries ``subset`` naming the plan and the case's draw
(its wave, step and the probability it had when drawn), so the rows say how they were chosen.

With a target half-width the plan may stop early: after each wave the anytime-valid interval
of the draws answered so far (:func:`jevalkit.items.estimate` with ``anytime=True``, a
confidence sequence that holds at every draw at once) is computed, and the run stops once it is
at most that wide on each side; the estimate reports that interval, whether the target was met
or all K draws were run. Without a target the plan runs its K draws and reports the t interval,
which holds at a number of draws fixed in advance. Resume a plan with the target it was run
with: continuing past a stop that looked at the data is what only the anytime interval allows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..items import ActivePlan, IrtFit, estimate, load_fit, select, waves_for
from ..results import latest_rows
from ._execute import Executor, execute
from ._job import Job
from ._options import RunSettings
from ._run_result import ActiveRun, RunResult

ACTIVE_PREFIX = "active:"
ACTIVE_COLUMNS = [
    "k",
    "n_cases",
    "n_drawn",
    "n_answered",
    "waves",
    "value",
    "ci_low",
    "ci_high",
    "half_width",
    "target_half_width",
    "stop_reason",
    "method",
]


@dataclass(frozen=True)
class ActiveCases:
    """An active plan of a run: ``k`` cases drawn with ``seed`` from the item model ``prior``
    (named ``source`` in the rows), in ``waves``.

    Example:
        >>> active_cases("1-5", None, seed=0) is None
        True
    """

    k: int
    prior: IrtFit
    source: str
    seed: int
    waves: int
    target_half_width: float | None = None

    def name(self, n_cases: int) -> str:
        """The plan, as each of its rows' ``subset`` begins."""
        return (
            f"active:{self.k} of {n_cases} cases (prior {self.source}, seed {self.seed}, "
            f"{self.waves} waves)"
        )

    def subset(self, n_cases: int, wave: int, step: int, probability: float) -> str:
        """A row's ``subset``: the plan, then the case's draw."""
        return f"{self.name(n_cases)}: wave {wave}, draw {step}, probability {float(probability)!r}"


def active_cases(
    cases: Any,
    prior: Any,
    *,
    seed: int | None,
    waves: int | None = None,
    target_half_width: float | None = None,
) -> ActiveCases | None:
    """The active plan ``cases="active:K"`` and ``prior`` ask for, or None for other cases
    (``target_half_width``: stop early at that anytime-valid half-width).

    Example:
        >>> active_cases("active:30", None, seed=0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: --cases active:30 needs --prior FIT.json: an item model fitted on past systems' results (jevalkit items RESULTS --irt 2pl --save-fit FIT.json)
    """
    if not (isinstance(cases, str) and cases.startswith(ACTIVE_PREFIX)):
        if prior is not None:
            raise UsageError(
                "--prior is for --cases active:K (an active plan); drop it or give active:K"
            )
        return None
    text = cases[len(ACTIVE_PREFIX) :]
    if not text.isdigit() or int(text) < 2 or text.startswith("0"):
        raise UsageError(
            f"--cases {cases}: give active:K with K a whole number of cases from 2 up, e.g. "
            "active:50"
        )
    if prior is None:
        raise UsageError(
            f"--cases {cases} needs --prior FIT.json: an item model fitted on past systems' "
            "results (jevalkit items RESULTS --irt 2pl --save-fit FIT.json)"
        )
    if isinstance(prior, str | Path):
        fit, source = load_fit(prior), Path(prior).name
    elif isinstance(prior, IrtFit):
        fit, source = prior, f"{prior.model} fit"
    else:
        raise UsageError(
            f"prior must be an IrtFit (items.fit_irt) or the path of a saved one, got "
            f"{type(prior).__name__}"
        )
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
    ):
        raise UsageError(
            f"--sample-seed must be a whole number from 0 up (the active plan's draws), got {seed!r}"
        )
    target = target_half_width
    if target is not None and (
        isinstance(target, bool) or not isinstance(target, int | float) or not 0 < target <= 0.5
    ):
        raise UsageError(
            f"--target-half-width must be a number in (0, 0.5] (a half-width of the score), "
            f"got {target!r}"
        )
    k = int(text)
    return ActiveCases(
        k=k,
        prior=fit,
        source=source,
        seed=0 if seed is None else int(seed),
        waves=waves_for(k, waves),
        target_half_width=None if target is None else float(target),
    )


def _by_item(jobs: Sequence[Job], fit: IrtFit) -> dict[Any, list[Job]]:
    """The jobs of each item of the prior (its case columns read off each job)."""
    columns = list(fit.matrix.items.columns)
    fields = {f.name for f in dataclasses.fields(Job)}
    unknown = [c for c in columns if c not in fields]
    if unknown:
        raise UsageError(
            f"the prior's case columns {unknown} are not fields of a run's rows: fit it on "
            "case columns such as probe, version, case_id"
        )
    by_item: dict[Any, list[Job]] = {}
    for job in jobs:
        key = tuple(getattr(job, c) for c in columns)
        by_item.setdefault(key[0] if len(key) == 1 else key, []).append(job)
    ids = fit.matrix.item_ids()
    known = set(ids)
    missing = [i for i in ids if i not in by_item]
    if missing:
        raise UsageError(
            f"the prior has {len(missing)} item(s) this run does not plan (e.g. {missing[0]!r}): "
            "run the probes and versions it was fitted on, every case"
        )
    extra = [i for i in by_item if i not in known]
    if extra:
        raise UsageError(
            f"{len(extra)} case(s) of this run are not items of the prior (e.g. {extra[0]!r}): "
            "its estimate is of the benchmark it was fitted on"
        )
    return by_item


def _check_one_plan(out: Path, jobs: Sequence[Job], plan: str, asked: str, label) -> None:
    """Refuse a results file holding rows of these cases that another plan drew (or that no
    plan drew): resuming would reuse them under this plan's probabilities while their
    ``subset`` names the other's, and the file would no longer say how its rows were drawn."""
    if not out.exists():
        return
    stored = latest_rows(out).rows
    mine = f"{plan}: wave "
    other = [
        row.get("subset")
        for job in jobs
        if (row := stored.get(job.key(asked, label))) is not None
        and not str(row.get("subset") or "").startswith(mine)
    ]
    if other:
        raise UsageError(
            f"{out}: holds {len(other)} row(s) of these cases drawn by another plan (subset "
            f"{other[0]!r}), not by {plan}: write this plan to another --out (or run that one)"
        )


def _scored(rows: pd.DataFrame, columns: list[str]) -> set:
    """The items with a scored row (not an error) among ``rows``."""
    ok = rows[rows["error"].isna() & pd.to_numeric(rows["score"], errors="coerce").notna()]
    keys = list(ok[columns].itertuples(index=False, name=None))
    return {k[0] if len(k) == 1 else k for k in keys}


def _answers(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows the item model reads: those without an error."""
    return rows[rows["error"].isna()]


async def run_active_cases(
    jobs: Sequence[Job],
    spec: ActiveCases,
    *,
    model: str | None,
    out: Path,
    settings: RunSettings,
    executor: Executor | None = None,
) -> RunResult:
    """Run ``jobs`` (planned for every case of the benchmark) on an active plan, wave by wave;
    return the rows sent, with the estimate (one row of :data:`ACTIVE_COLUMNS`) and the plan in
    the result's ``active`` (:class:`ActiveRun`)."""
    fit = spec.prior
    by_item = _by_item(jobs, fit)
    n_cases = len(by_item)
    if not 2 <= spec.k < n_cases:
        raise UsageError(f"--cases active:{spec.k}: K must be from 2 to {n_cases - 1} (the cases)")
    _check_one_plan(out, jobs, spec.name(n_cases), model or "deterministic", settings.label)
    columns = list(fit.matrix.items.columns)
    budget = settings.new_budget()
    options = {"k": spec.k, "method": "active", "seed": spec.seed, "waves": spec.waves}
    parts: list[RunResult] = []
    answered: pd.DataFrame | None = None
    sent: set = set()
    reason = "complete"
    plan: ActivePlan = select(fit, **options)
    while True:
        draws = plan.draws[~plan.draws["case"].isin(sent)]
        if draws.empty:
            break
        wave_jobs = [
            dataclasses.replace(
                job, subset=spec.subset(n_cases, int(d.wave), int(d.step), float(d.probability))
            )
            for d in draws.itertuples(index=False)
            for job in by_item[d.case]
        ]
        part = await execute(
            wave_jobs,
            model=model,
            out=out,
            settings=settings,
            description=f"requests, active wave {int(draws['wave'].iloc[0])}",
            budget=budget,
            executor=executor,
        )
        parts.append(part)
        sent |= set(draws["case"])
        answered = pd.concat([p.rows for p in parts], ignore_index=True)
        if part.stopped:
            reason = "budget"
            break
        if not set(plan.cases) <= _scored(answered, columns):
            reason = "errors"
            break
        if _reached(fit, plan, answered, spec):
            reason = "target"
            break
        if plan.complete:
            break
        plan = select(fit, new_results=_answers(answered), **options)
    rows = pd.concat([p.rows for p in parts], ignore_index=True) if parts else pd.DataFrame()
    summary = _summary(fit, plan, rows, spec, n_cases, reason, budget.reached)
    return RunResult.of(parts, budget, active=ActiveRun(summary, plan))


def _reached(fit: IrtFit, plan: ActivePlan, answered: pd.DataFrame, spec: ActiveCases) -> bool:
    """Whether the anytime-valid interval of the draws so far (every one answered) is at most
    the target half-width."""
    if spec.target_half_width is None or len(plan.draws) < 2:
        return False
    row = estimate(fit, plan, _answers(answered), anytime=True).iloc[0]
    return bool((row["ci_high"] - row["ci_low"]) / 2 <= spec.target_half_width)


def _summary(fit, plan, rows, spec, n_cases, reason, stopped) -> pd.DataFrame:
    """The estimate from the draws answered in order (a plan stopped early is a smaller
    plan: its draws up to the first unanswered one)."""
    columns = list(fit.matrix.items.columns)
    scored = _scored(rows, columns) if len(rows) else set()
    cases = plan.draws["case"].tolist()
    prefix = next((i for i, c in enumerate(cases) if c not in scored), len(cases))
    out = {
        "k": spec.k,
        "n_cases": n_cases,
        "n_drawn": len(cases),
        "n_answered": prefix,
        "waves": int(plan.draws["wave"].max()) + 1 if cases else 0,
        "value": np.nan,
        "ci_low": np.nan,
        "ci_high": np.nan,
        "half_width": np.nan,
        "target_half_width": np.nan if spec.target_half_width is None else spec.target_half_width,
        "stop_reason": reason,
    }
    missed = (
        f"; the target half-width {spec.target_half_width!r} was not reached in {spec.k} draws"
        if spec.target_half_width is not None
        else ""
    )
    how = {
        "complete": missed,
        "target": f"; stopped at the target half-width {spec.target_half_width!r}",
        "budget": f"; stopped by the budget ({stopped}): the draws answered in order",
        "errors": "; drawn case(s) answered only by errors (run again with --retry-errors): "
        "the draws answered in order",
    }[reason]
    if prefix < 2:
        out["method"] = f"not estimable: {prefix} drawn case(s) answered{how}"
        return pd.DataFrame([out], columns=ACTIVE_COLUMNS)
    smaller = dataclasses.replace(plan, draws=plan.draws.iloc[:prefix].reset_index(drop=True))
    anytime = spec.target_half_width is not None
    row = estimate(fit, smaller, _answers(rows), anytime=anytime).iloc[0]
    out.update(
        value=row["value"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
        half_width=(row["ci_high"] - row["ci_low"]) / 2,
        method=f"{row['method']}{how}",
    )
    return pd.DataFrame([out], columns=ACTIVE_COLUMNS)
