"""Judge jobs: one per (case, repeat), executed by the runner like any probe request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..client import request_seed
from ..errors import JudgeError, UsageError
from ..results import params_hash
from ..runner import Job, Send
from ._evaluate import JudgeConfig, judge_case
from ._judgment import Judgment
from ._prompts import JudgePrompt, load_judge_prompt
from ._tool_calls import free_text_pairs, tool_call_accuracy

TOOL_CALL_EVALUATOR = "tool_call_accuracy"
TOOL_CALL_LEVELS = ("mismatch", "match")


def judgment_fields(judgment: Judgment) -> dict[str, Any]:
    """Row fields of a :class:`Judgment`.

    Example:
        >>> j = Judgment.from_probs(["no", "yes"], [0.2, 0.8], coverage=0.9, method="logprobs")
        >>> judgment_fields(j)["verdict"], judgment_fields(j)["passed"]
        ('yes', True)
    """
    return {
        "probs": list(judgment.probs),
        "expected_level": judgment.expected_level,
        "verdict": judgment.verdict,
        "coverage": judgment.coverage,
        "method": judgment.method,
        "score": judgment.score,
        "passed": judgment.score >= 0.5,
        "explanation": judgment.explanation,
        "output": judgment.verdict
        if judgment.method == "logprobs"
        else " | ".join(judgment.raw or ()),
    }


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
        params = {"method": "deterministic"}
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
