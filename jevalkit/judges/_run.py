"""Run a judge over a case file: plan one job per (case, repeat) and execute them with the
runner (the same results file, cache, resume, progress and defaults as probe runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Unpack

from .._sync import run_sync
from ..errors import UsageError
from ..runner import (
    RunOptions,
    RunResult,
    RunSettings,
    default_results_path,
    execute,
    open_executor,
    run_adaptive,
)
from ._cases import load_cases
from ._evaluate import JudgeConfig
from ._jobs import TOOL_CALL_EVALUATOR, TOOL_CALL_LEVELS, plan_judge_jobs
from ._pairwise import cases_from_runs, plan_pairwise_jobs
from ._prompts import load_judge_prompt


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
    settings.check_target()
    adaptive = settings.adaptive_plan(metric="mean_score")
    repeats = adaptive.max_repeats if adaptive else settings.repeats
    config = config or JudgeConfig()
    cases = _cases(evaluator, data, criteria, systems)
    if evaluator != TOOL_CALL_EVALUATOR and load_judge_prompt(evaluator).kind == "pairwise":
        if model is None:
            raise UsageError(f"{evaluator} is a model judge: give a model (e.g. --model local)")
        jobs = plan_pairwise_jobs(
            cases,
            repeats=repeats,
            config=config,
            seed=seed,
            both_orders=both_orders,
            evaluator=evaluator,
        )
    else:
        jobs = plan_judge_jobs(
            evaluator, cases, model=model, repeats=repeats, config=config, seed=seed
        )
    out = settings.out
    path = (
        Path(out) if out else default_results_path(f"judge__{evaluator}", model, settings.base_url)
    )
    description = f"judge {evaluator}"
    async with open_executor(settings) as executor:  # here, on Dask, or one shard
        if adaptive is not None:
            return await run_adaptive(
                jobs, adaptive, model=model, out=path, settings=settings,
                description=description, executor=executor,
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
    the facts of the run beside them (``stopped``, ``budget_overrun``, ``adaptive``).

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
        model: the judge model (``local`` for the embedded one).
        config: how to ask (:class:`JudgeConfig`: method, prompt style, samples, coverage).
        criteria: the rubric for ``llm_judge``.
        seed: the run's seed; case c's repeat r, sample i is sent
            ``request_seed(seed, r * n_samples, c) + i`` (:func:`jevalkit.client.request_seed`:
            each case its own draws).
        **options: the run options, as for :func:`jevalkit.run` (the same ones, the same
            defaults: :class:`jevalkit.runner.RunOptions`). ``repeats="auto"`` judges in rounds
            until the anytime-valid interval of the mean judge score over the cases (each case's
            expected score; for a pairwise judge the preference for system_a, both orders
            averaged) is ``target_half_width`` wide; ``adaptive`` sets every option (its
            ``metric="pass_rate"`` uses the verdicts instead). The interval is the result's
            ``adaptive``.

    A judgment that cannot be trusted (no logprobs, coverage below the threshold) becomes an error
    row saying so, never a silent fallback to an integer.

    Example:
        >>> import tempfile, jevalkit.judges as jj
        >>> result = jj.judge("tool_call_accuracy", "tool_call_accuracy", out=tempfile.mkdtemp() + "/r.jsonl", progress=False)
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
