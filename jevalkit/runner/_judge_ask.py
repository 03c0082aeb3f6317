"""Ask a model for one judgment through the ``send`` function the runner hands every job:
logprobs over the judge's level tokens, or the empirical distribution of n samples (how to ask
is the judge's :class:`jevalkit.judges.JudgeConfig`; the prompt and levels are its
:class:`jevalkit.judges.JudgePrompt`)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from ..client import CHAT, COMPLETIONS, Completion, Request
from ..errors import JudgeError
from ..judges import (
    JudgeConfig,
    JudgePrompt,
    Judgment,
    first_level,
    level_distribution,
    top_alternatives,
)
from ._job import Send


def judge_request(prompt: JudgePrompt, case: dict[str, Any], style: str, **body: Any) -> Request:
    """The request asking ``prompt`` about ``case`` in ``style`` (``chat`` or ``completion``).

    Example:
        >>> from jevalkit.judges import load_judge_prompt, load_cases
        >>> r = judge_request(load_judge_prompt("faithfulness"), load_cases("faithfulness")[0], "completion")
        >>> r.path, r.body["prompt"].endswith("Rating: ")
        ('/completions', True)
    """
    if style == "chat":
        return Request(CHAT, {"messages": prompt.chat_messages(case), **body})
    return Request(COMPLETIONS, {"prompt": prompt.completion_prompt(case), **body})


async def _ask(send: Send, request: Request) -> Completion:
    result = await send(request)
    if result.error is not None:  # not result.ok
        raise JudgeError(result.error["message"], error=result.error)
    return result


async def judge_case(
    prompt: JudgePrompt,
    case: dict[str, Any],
    send: Send,
    config: JudgeConfig,
    *,
    repeat: int = 0,
    seed: int | None = None,
) -> Judgment:
    """One judgment of one case, asked through ``send`` (the runner's, or any coroutine
    function taking a :class:`~jevalkit.client.Request` and returning a
    :class:`~jevalkit.client.Completion`).

    Raises:
        JudgeError: the endpoint returned no logprobs, coverage is below
            ``config.min_coverage``, or a request failed (``error`` holds its typed error).
    """
    judgment = await _distribution(prompt, case, send, config, repeat=repeat, seed=seed)
    if not config.explain:
        return judgment
    token = next(lv["tokens"][0] for lv in prompt.levels if lv["label"] == judgment.verdict)
    messages = [
        *prompt.chat_messages(case),
        {"role": "assistant", "content": token},
        {"role": "user", "content": "In one or two sentences, explain that rating."},
    ]
    body = {"messages": messages, "max_tokens": 120, "temperature": 0}
    result = await _ask(send, Request(CHAT, body, repeat))
    return dataclasses.replace(judgment, explanation=(result.text or "").strip())


async def _distribution(
    prompt: JudgePrompt,
    case: dict[str, Any],
    send: Send,
    config: JudgeConfig,
    *,
    repeat: int,
    seed: int | None,
) -> Judgment:
    style = config.prompt_style
    if config.method == "logprobs":
        logprobs: Any = (
            {"logprobs": True, "top_logprobs": config.top_logprobs}
            if style == "chat"
            else {"logprobs": config.top_logprobs}
        )
        request = judge_request(prompt, case, style, max_tokens=1, temperature=0, **logprobs)
        result = await _ask(send, dataclasses.replace(request, repeat=repeat))
        alternatives = top_alternatives(result.logprobs)
        probs, coverage = level_distribution(alternatives, prompt.level_tokens)
        if coverage == 0 or coverage < config.min_coverage:
            raise JudgeError(
                f"{prompt.name}: only {coverage:.1%} of the probability went to level tokens "
                f"(threshold {config.min_coverage:.0%}); too little to trust. Try "
                "prompt_style='completion', a stronger model, or method='sampling'"
            )
        return Judgment.from_probs(
            prompt.labels,
            probs,
            coverage=coverage,
            method="logprobs",
            choice_scores=prompt.choice_scores,
            raw=alternatives,
        )
    requests = []
    for i in range(config.n_samples):
        extra = {"seed": seed + i} if seed is not None else {}
        body = {"max_tokens": 4, **config.generation, "temperature": config.temperature}
        request = judge_request(prompt, case, style, **body, **extra)
        requests.append(dataclasses.replace(request, repeat=repeat * config.n_samples + i))
    results = await asyncio.gather(*(_ask(send, r) for r in requests))
    texts = [r.text or "" for r in results]
    picks = [first_level(t, prompt) for t in texts]
    named = [p for p in picks if p is not None]
    coverage = len(named) / len(picks)
    if not named or coverage < config.min_coverage:
        raise JudgeError(
            f"{prompt.name}: only {len(named)} of {len(picks)} samples named a level "
            f"(threshold {config.min_coverage:.0%}); too few to trust"
        )
    probs = [named.count(i) / len(named) for i in range(len(prompt.levels))]
    return Judgment.from_probs(
        prompt.labels,
        probs,
        coverage=coverage,
        method="sampling",
        choice_scores=prompt.choice_scores,
        n_samples=len(named),
        raw=texts,
    )
