"""Judge jobs, one per (case, repeat) (a pairwise comparison: one per order too), executed by
the runner like any probe request: what a judge is (its prompt, levels and config) comes from
:mod:`jevalkit.judges`; asking is :func:`judge_case`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import JudgeError, UsageError
from ..generation import request_seed
from ..judges import (
    POSITIONS,
    TOOL_CALL_EVALUATOR,
    TOOL_CALL_LEVELS,
    JudgeConfig,
    JudgePrompt,
    free_text_pairs,
    judgment_fields,
    load_judge_prompt,
    style_features,
    to_systems,
    tool_call_accuracy,
)
from ..results import params_hash
from ._job import Job, Send
from ._judge_ask import judge_case


def error_fields(exc: JudgeError) -> dict[str, Any]:
    """The row's ``error`` for a judgment that could not be trusted or a request that failed."""
    return {"error": exc.error or {"type": "judge", "message": str(exc), "status": None}}


@dataclass(frozen=True, kw_only=True)
class JudgeJob(Job):
    """One judgment of one case by a model judge."""

    prompt: JudgePrompt
    case: dict[str, Any]
    config: JudgeConfig
    seed: int | None = None

    async def perform(self, send: Send) -> dict[str, Any]:
        """Ask for the judgment; an untrustworthy one becomes an error row saying why."""
        try:
            judgment = await judge_case(
                self.prompt, self.case, send, self.config, repeat=self.repeat, seed=self.seed
            )
        except JudgeError as exc:
            return error_fields(exc)
        return judgment_fields(judgment)


@dataclass(frozen=True, kw_only=True)
class ToolCallJob(Job):
    """tool_call_accuracy on one case: deterministic, except free-text arguments, which go to
    the ``argument_equivalence`` judge when a model is given."""

    case: dict[str, Any]
    config: JudgeConfig
    equivalence: JudgePrompt | None = None

    async def perform(self, send: Send) -> dict[str, Any]:
        """Compare the calls; ask the model about free-text arguments when there is one."""
        free = tuple(self.case.get("free_text_arguments") or ())
        calls, expected = self.case.get("tool_calls"), self.case.get("expected_tool_calls")
        judged: dict[tuple[str, str], float] = {}
        if free and self.equivalence is not None:
            for want, got in free_text_pairs(calls, expected, free):
                pair = {"expected": want, "output": got}
                try:
                    j = await judge_case(
                        self.equivalence, pair, send, self.config, repeat=self.repeat
                    )
                except JudgeError as exc:
                    return error_fields(exc)
                judged[(want, got)] = j.score
        score = tool_call_accuracy(
            calls or [],
            expected or [],
            free_text=free,
            same_meaning=(lambda want, got: judged[(want, got)]) if judged else None,
        )
        return {
            "score": score.value,
            "passed": score.passed,
            "score_errors": list(score.errors),
            "verdict": TOOL_CALL_LEVELS[score.passed],
        }


def plan_judge_jobs(
    evaluator: str,
    cases: list[dict[str, Any]],
    *,
    model: str | None,
    repeats: int,
    config: JudgeConfig,
    seed: int | None = None,
) -> list[Job]:
    """One job per (case, repeat). ``tool_call_accuracy`` needs no model (free-text arguments
    are then compared by Levenshtein similarity); the other evaluators do.

    Example:
        >>> from jevalkit.judges import load_cases
        >>> jobs = plan_judge_jobs("faithfulness", load_cases("faithfulness"), model="m",
        ...                        repeats=2, config=JudgeConfig())
        >>> len(jobs), jobs[0].case_id, jobs[1].repeat
        (12, 'f1', 1)
    """
    if evaluator == TOOL_CALL_EVALUATOR:
        params: dict[str, Any] = {"method": "deterministic"}
        equivalence = None
        if model is not None and any(c.get("free_text_arguments") for c in cases):
            equivalence = load_judge_prompt("argument_equivalence")
            params = {"method": "deterministic", "free_text": config.parameters()}
        digest = params_hash(params)
        return [
            ToolCallJob(
                kind="judge",
                probe=evaluator,
                version=1,
                probe_hash=None,
                case_id=c["id"],
                parameters=params,
                params_hash=digest,
                repeat=r,
                gold=c.get("gold"),
                needs_model=equivalence is not None,
                case=c,
                config=config,
                equivalence=equivalence,
            )
            for c in cases
            for r in range(repeats)
        ]
    if model is None:
        raise UsageError(f"{evaluator} is a model judge: give a model (e.g. --model local)")
    prompt = load_judge_prompt(evaluator)
    for case in cases:
        prompt.check_case(case)
    params = config.parameters()
    digest = params_hash(params)
    return [
        JudgeJob(
            kind="judge",
            probe=prompt.id,
            version=prompt.version,
            probe_hash=prompt.content_hash,
            case_id=c["id"],
            parameters=params,
            params_hash=digest,
            repeat=r,
            gold=c.get("gold"),
            prompt=prompt,
            case=c,
            config=config,
            seeded=seed is not None and config.method == "sampling",
            seed=None if seed is None else request_seed(seed, r * config.n_samples, c["id"]),
        )
        for c in cases
        for r in range(repeats)
    ]


@dataclass(frozen=True, kw_only=True)
class PairwiseJob(Job):
    """One game: the case's two answers in one order, judged, mapped back to the systems."""

    prompt: JudgePrompt
    case: dict[str, Any]
    config: JudgeConfig
    seed: int | None = None

    async def perform(self, send: Send) -> dict[str, Any]:
        """Ask for the verdict on the answers in this job's order."""
        assert self.position is not None, "plan_pairwise_jobs gives every game its order"
        first, second = (
            ("output_a", "output_b") if self.position == "a_first" else ("output_b", "output_a")
        )
        shown = {**self.case, "output_a": self.case[first], "output_b": self.case[second]}
        shown.setdefault("criteria", "(none given)")
        shown.setdefault("expected", "(none)")
        try:
            judgment = await judge_case(
                self.prompt, shown, send, self.config, repeat=self.repeat, seed=self.seed
            )
        except JudgeError as exc:
            return error_fields(exc)
        return {**to_systems(judgment, self.position), "source": self.style}

    @property
    def style(self) -> dict[str, Any]:
        """Style features of both answers (for length bias and style control)."""
        return {
            "a": style_features(self.case["output_a"]),
            "b": style_features(self.case["output_b"]),
        }


def plan_pairwise_jobs(
    cases: list[dict[str, Any]],
    *,
    repeats: int,
    config: JudgeConfig,
    seed: int | None = None,
    both_orders: bool = True,
    evaluator: str = "pairwise",
) -> list[Job]:
    """Two games per (case, repeat): one in each order (``both_orders=False``: ``a_first`` only).

    Example:
        >>> cases = [{"id": "c", "input": "q", "output_a": "x", "output_b": "y"}]
        >>> [j.position for j in plan_pairwise_jobs(cases, repeats=1, config=JudgeConfig())]
        ['a_first', 'b_first']
    """
    prompt = load_judge_prompt(evaluator)
    if prompt.kind != "pairwise":
        raise UsageError(f"{prompt.name} is a {prompt.kind} judge, not a pairwise one")
    for case in cases:
        prompt.check_case(case)
    params = {**config.parameters(), "both_orders": both_orders}
    digest = params_hash(params)
    positions = POSITIONS if both_orders else POSITIONS[:1]
    jobs: list[Job] = []
    for case in cases:
        for r in range(repeats):
            for position in positions:
                jobs.append(
                    PairwiseJob(
                        kind="pairwise",
                        probe=prompt.id,
                        version=prompt.version,
                        probe_hash=prompt.content_hash,
                        case_id=case["id"],
                        parameters=params,
                        params_hash=digest,
                        repeat=r,
                        gold=case.get("gold"),
                        system_a=str(case.get("system_a") or "A"),
                        system_b=str(case.get("system_b") or "B"),
                        position=position,
                        prompt=prompt,
                        case=case,
                        config=config,
                        seeded=seed is not None and config.method == "sampling",
                        seed=None
                        if seed is None
                        else request_seed(seed, r * config.n_samples, case["id"], position),
                    )
                )
    return jobs
