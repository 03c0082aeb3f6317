"""Run judges over a case file: plan one job per (case, repeat) and execute them with the
runner (the same results file, cache, resume, progress and defaults as probe runs); several
judge models over the same cases (:func:`judge_models`); and a design that asks several judges
itself (a cascade: each judge one source of the one design loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Unpack

import pandas as pd

from .._sync import run_sync
from ..errors import UsageError
from ..judges import (
    TOOL_CALL_EVALUATOR,
    TOOL_CALL_LEVELS,
    JudgeConfig,
    cases_from_runs,
    load_cases,
    load_judge_prompt,
)
from ..results import Arm
from ._arms import arm_source, results_path_for
from ._design_run import Source, run_design
from ._execute import execute
from ._executors import open_executor
from ._job import Job
from ._judge_jobs import plan_judge_jobs, plan_pairwise_jobs
from ._options import RunOptions, RunSettings
from ._plan import default_results_path
from ._run_result import RunResult


def _cases(
    evaluator: str,
    data: str | Path | list[dict[str, Any]] | None,
    criteria: str | None,
    systems: tuple[Any, Any] | None = None,
) -> list[dict[str, Any]]:
    if systems is not None:
        if len(systems) != 2:
            raise UsageError(f"systems= takes the outputs of two runs, got {len(systems)}")
        inputs = (
            None if data is None else (load_cases(data) if not isinstance(data, list) else data)
        )
        cases = cases_from_runs(systems[0], systems[1], inputs)
    elif data is None:
        raise UsageError(
            "give the cases (data=, --data), or for a pairwise judge two runs (systems=)"
        )
    elif evaluator == TOOL_CALL_EVALUATOR:
        cases = load_cases(data) if not isinstance(data, list) else data
        for case in cases:
            gold = case.get("gold")
            if gold is not None and gold not in TOOL_CALL_LEVELS:
                raise UsageError(
                    f"case {case.get('id')!r}: gold {gold!r} is not a level of "
                    f"{TOOL_CALL_EVALUATOR}; valid levels: {', '.join(TOOL_CALL_LEVELS)}"
                )
    else:
        prompt = load_judge_prompt(evaluator)
        if isinstance(data, list):
            cases = [dict(c) for c in data]
            for i, case in enumerate(cases):
                prompt.check_gold(case.get("gold"), f"case {i} ({case.get('id')!r})")
        else:
            cases = load_cases(data, prompt=prompt)
    if criteria is not None:
        cases = [{**c, "criteria": criteria} for c in cases]
    return cases


def _jobs(
    evaluator: str,
    cases: list[dict[str, Any]],
    model: str | None,
    *,
    repeats: int,
    config: JudgeConfig,
    seed: int | None,
    both_orders: bool,
) -> list[Job]:
    """The jobs of one judge model over ``cases``."""
    if evaluator != TOOL_CALL_EVALUATOR and load_judge_prompt(evaluator).kind == "pairwise":
        if model is None:
            raise UsageError(f"{evaluator} is a model judge: give a model (e.g. --model local)")
        return plan_pairwise_jobs(
            cases,
            repeats=repeats,
            config=config,
            seed=seed,
            both_orders=both_orders,
            evaluator=evaluator,
        )
    return plan_judge_jobs(evaluator, cases, model=model, repeats=repeats, config=config, seed=seed)


def _arm_source(
    arm: Arm,
    evaluator: str,
    cases: list[dict[str, Any]],
    settings: RunSettings,
    *,
    config: JudgeConfig,
    seed: int | None,
    both_orders: bool,
) -> Source:
    """One judge a design names: its jobs (its repeats and config) as an arm's source."""
    repeats = arm.repeats if arm.repeats is not None else settings.repeats
    asked = JudgeConfig.from_parameters(arm.parameters) if arm.parameters else config
    jobs = _jobs(evaluator, cases, arm.model, repeats=repeats, config=asked, seed=seed,
                 both_orders=both_orders)  # fmt: skip
    return arm_source(arm, jobs, settings, f"judge__{evaluator.split('@')[0]}")


async def ajudge(
    evaluator: str,
    data: str | Path | list[dict[str, Any]] | None,
    model: str | None = None,
    *,
    systems: tuple[Any, Any] | None = None,
    both_orders: bool = True,
    config: JudgeConfig | None = None,
    criteria: str | None = None,
    seed: int | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """Async form of :func:`judge`."""
    settings = RunSettings.of(options)
    config = config or JudgeConfig()
    cases = _cases(evaluator, data, criteria, systems)
    design = settings.design
    description = f"judge {evaluator}"
    arms = design.arms if design is not None else None
    if design is not None and arms:
        if model is not None:
            raise UsageError(
                f"{design.name} names its own judges ({', '.join(a.name for a in arms)}): "
                "do not give a model"
            )
        if settings.repeats != 1:
            raise UsageError(
                f"{design.name} asks each of its judges as often per item as it says (a "
                "cascade: as in its calibration); do not give repeats"
            )
        sources = [
            _arm_source(
                a, evaluator, cases, settings, config=config, seed=seed, both_orders=both_orders
            )
            for a in arms
        ]
        async with open_executor(settings) as executor:  # here, or on Dask
            return await run_design(
                design, sources, settings=settings, executor=executor, description=description
            )
    jobs = _jobs(evaluator, cases, model, repeats=settings.planned_repeats(), config=config,
                 seed=seed, both_orders=both_orders)  # fmt: skip
    out = settings.out
    path = (
        Path(out) if out else default_results_path(f"judge__{evaluator}", model, settings.base_url)
    )
    async with open_executor(settings) as executor:  # here, on Dask, or one shard
        if design is not None:
            return await run_design(
                design, [Source(model or "deterministic", jobs, model, path, settings)],
                settings=settings, executor=executor, description=description,
            )  # fmt: skip
        return await execute(
            jobs, model=model, out=path, settings=settings, description=description,
            executor=executor,
        )  # fmt: skip


def judge(
    evaluator: str,
    data: str | Path | list[dict[str, Any]] | None,
    model: str | None = None,
    *,
    systems: tuple[Any, Any] | None = None,
    both_orders: bool = True,
    config: JudgeConfig | None = None,
    criteria: str | None = None,
    seed: int | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """Judge every case of ``data`` with ``evaluator``; a run's result
    (:class:`jevalkit.runner.RunResult`) whose rows are in the runner's results format with
    ``probs``, ``expected_level``, ``verdict``, ``coverage``, ``method`` and ``gold``, and
    the facts of the run beside them (``stopped``, ``budget_overrun``, ``design``).

    Args:
        evaluator: a judge in ``data/judges/`` (``faithfulness``, ``answer_relevancy``,
            ``answer_correctness``, ``translation``, ``security``, ``factuality``,
            ``llm_judge``, ``pairwise``) or ``tool_call_accuracy`` (deterministic; a model, when
            given, judges free-text arguments).
        data: a case file path, a bundled case set name, or a list of case dicts (for
            ``pairwise``: cases with ``output_a`` and ``output_b``, or the inputs of ``systems``).
        systems: for a pairwise judge, two runs (results paths, frames, or what
            :func:`jevalkit.run` returned) whose outputs are compared case by case.
        both_orders: for a pairwise judge, play every comparison in both orders (two rows).
        model: the judge model (``local`` for the embedded one); none for a design that names
            its own judges (a cascade: :meth:`jevalkit.labels.Cascade.design`).
        config: how to ask (:class:`JudgeConfig`: method, prompt style, samples, coverage).
        criteria: the rubric for ``llm_judge``.
        seed: the run's seed; case c's repeat r, sample i is sent
            ``request_seed(seed, r * n_samples, c) + i`` (:func:`jevalkit.client.request_seed`:
            each case its own draws).
        **options: the run options, as for :func:`jevalkit.run` (the same ones, the same
            defaults: :class:`jevalkit.runner.RunOptions`). ``design`` decides what to send
            from the judgments so far: :class:`jevalkit.stats.AdaptiveRepeats` with
            ``metric="mean_score"`` judges in rounds until the anytime-valid interval of the
            mean judge score over the cases (each case's expected score; for a pairwise judge
            the preference for system_a, both orders averaged) is narrow enough; a cascade
            (:meth:`jevalkit.labels.Cascade.design`) asks each next judge only about the items
            the judges before it were not sure of, each judge into its own results file
            (``out`` with ``__<judge>`` before the suffix). The outcome is the result's
            ``design``.

    A judgment that cannot be trusted (no logprobs, coverage below the threshold) becomes an error
    row saying so, never a silent fallback to an integer.

    Example:
        >>> import tempfile
        >>> from jevalkit.runner import judge
        >>> result = judge("tool_call_accuracy", "tool_call_accuracy", out=tempfile.mkdtemp() + "/r.jsonl", progress=False)
        >>> bool((result.rows["verdict"] == result.rows["gold"]).all()), result.stopped
        (True, None)
    """
    return run_sync(
        ajudge(
            evaluator,
            data,
            model,
            systems=systems,
            both_orders=both_orders,
            config=config,
            criteria=criteria,
            seed=seed,
            **options,
        )
    )


def judge_models(
    evaluator: str,
    data: Any,
    models: list[str],
    *,
    out: str | Path | None = None,
    **options: Any,
) -> RunResult:
    """Judge the same cases with each of ``models`` in turn (each its own results file: ``out``
    with ``__<model>`` before the suffix) and return the rows together, so the judge model is a
    facet for :func:`jevalkit.stats.variance_components` (``facets=["case", "model"]``).

    ``options`` are :func:`judge`'s (repeats, base_url, config, ...), the same for every model
    (a budget holds for each model's run). The result's ``stopped`` names each model a budget
    stopped (``"<model>: <why>"``, joined by ``"; "``) and ``budget_overrun`` is any model's;
    a ``design`` is run for each model in turn, and the result's ``design`` is None (each
    model's outcome is its own run's).

    Example:
        >>> judge_models("tool_call_accuracy", "tool_call_accuracy", ["a", "a"])
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: models lists judge models once each, got ['a', 'a']
    """
    if len(models) < 1 or len(set(models)) != len(models):
        raise UsageError(f"models lists judge models once each, got {list(models)!r}")
    if not all(isinstance(m, str) and m for m in models):
        raise UsageError(f"models must be model names, got {list(models)!r}")
    runs = []
    for name in models:
        path = None if out is None else results_path_for(out, name)
        runs.append(judge(evaluator, data, name, out=path, **options))
    named = list(zip(models, runs, strict=True))
    return RunResult(
        pd.concat([r.rows for r in runs], ignore_index=True),
        stopped="; ".join(f"{m}: {r.stopped}" for m, r in named if r.stopped) or None,
        budget_overrun=any(r.budget_overrun for r in runs),
        dashboard=runs[-1].dashboard,
    )
