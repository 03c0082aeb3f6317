"""Ask a model for one judgment: logprobs over level tokens, or the empirical distribution of
n samples."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..client import ChatClient, Completion
from ._judgment import JudgeError, Judgment
from ._logprobs import level_distribution, normalise_token, top_alternatives
from ._prompts import JudgePrompt

_WORD = re.compile(r"[A-Za-z0-9]+")


class JudgeRequestError(JudgeError):
    """The endpoint gave no usable response (the runner's error types apply)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


@dataclass(frozen=True)
class JudgeConfig:
    """How to ask.

    Attributes:
        method: ``logprobs`` (one request, probabilities of the level tokens) or ``sampling``
            (``n_samples`` requests at ``temperature``, the empirical distribution).
        prompt_style: ``chat`` (``/chat/completions``) or ``completion`` (``/completions`` with a
            few-shot prompt ending right before the level token: base models put far more mass
            on level tokens there).
        min_coverage: refuse a logprobs judgment whose level tokens hold less probability mass
            than this (or sampling where fewer samples name a level).
        explain: after the judgment, ask (in chat form, at temperature 0) for a one- or two-
            sentence explanation of the most likely level; kept in ``Judgment.explanation``.
    """

    method: Literal["logprobs", "sampling"] = "logprobs"
    prompt_style: Literal["chat", "completion"] = "chat"
    n_samples: int = 10
    temperature: float = 1.0
    min_coverage: float = 0.5
    top_logprobs: int = 20
    explain: bool = False

    def parameters(self) -> dict[str, Any]:
        """Recorded in every results row."""
        params: dict[str, Any] = {"method": self.method, "prompt_style": self.prompt_style,
                                  "min_coverage": self.min_coverage}  # fmt: skip
        if self.method == "sampling":
            params.update(n_samples=self.n_samples, temperature=self.temperature)
        if self.explain:
            params["explain"] = True
        return params


def _body(prompt: JudgePrompt, case: dict[str, Any], model: str, style: str) -> dict[str, Any]:
    if style == "chat":
        return {"model": model, "messages": prompt.chat_messages(case)}
    return {"model": model, "prompt": prompt.completion_prompt(case)}


async def _ask(client: ChatClient, body: dict[str, Any], style: str, repeat: int) -> Completion:
    result = await (
        client.chat(body, repeat=repeat)
        if style == "chat"
        else client.complete(body, repeat=repeat)
    )
    if not result.ok:
        raise JudgeRequestError(result.error)
    return result


def first_level(text: str, prompt: JudgePrompt) -> int | None:
    """Index of the first level named in ``text`` (first word that is a level token), or None.

    Example:
        >>> from jevalkit.judges import load_judge_prompt
        >>> first_level(" 3\\nBecause", load_judge_prompt("faithfulness")), first_level("none", load_judge_prompt("faithfulness"))
        (3, None)
    """
    lookup = {normalise_token(t): i for i, toks in enumerate(prompt.level_tokens) for t in toks}
    for word in _WORD.findall(text):
        if normalise_token(word) in lookup:
            return lookup[normalise_token(word)]
    return None


async def judge_case(
    prompt: JudgePrompt,
    case: dict[str, Any],
    client: ChatClient,
    model: str,
    config: JudgeConfig,
    *,
    repeat: int = 0,
    seed: int | None = None,
) -> Judgment:
    """One judgment of one case. Raises :class:`JudgeError` when the endpoint returns no logprobs,
    coverage is below ``config.min_coverage``, or the request failed."""
    judgment = await _distribution(prompt, case, client, model, config, repeat=repeat, seed=seed)
    if not config.explain:
        return judgment
    token = next(lv["tokens"][0] for lv in prompt.levels if lv["label"] == judgment.verdict)
    messages = [*prompt.chat_messages(case), {"role": "assistant", "content": token},
                {"role": "user", "content": "In one or two sentences, explain that rating."}]  # fmt: skip
    body = {"model": model, "messages": messages, "max_tokens": 120, "temperature": 0}
    result = await _ask(client, body, "chat", repeat)
    return dataclasses.replace(judgment, explanation=(result.text or "").strip())


async def _distribution(
    prompt: JudgePrompt,
    case: dict[str, Any],
    client: ChatClient,
    model: str,
    config: JudgeConfig,
    *,
    repeat: int = 0,
    seed: int | None = None,
) -> Judgment:
    body = _body(prompt, case, model, config.prompt_style)
    if config.method == "logprobs":
        body.update(max_tokens=1, temperature=0)
        if config.prompt_style == "chat":
            body.update(logprobs=True, top_logprobs=config.top_logprobs)
        else:
            body.update(logprobs=config.top_logprobs)
        result = await _ask(client, body, config.prompt_style, repeat)
        alternatives = top_alternatives(result.logprobs)
        probs, coverage = level_distribution(alternatives, prompt.level_tokens)
        if coverage == 0 or coverage < config.min_coverage:
            raise JudgeError(
                f"{prompt.name}: only {coverage:.1%} of the probability went to level tokens "
                f"(threshold {config.min_coverage:.0%}); too little to trust. Try "
                "prompt_style='completion', a stronger model, or method='sampling'"
            )
        return Judgment.from_probs(prompt.labels, probs, coverage=coverage, method="logprobs",
                                   choice_scores=prompt.choice_scores, raw=alternatives)  # fmt: skip
    bodies = []
    for i in range(config.n_samples):
        b = dict(body, max_tokens=4, temperature=config.temperature)
        if seed is not None:
            b["seed"] = seed + i
        bodies.append(b)
    results = await asyncio.gather(
        *(
            _ask(client, b, config.prompt_style, repeat * config.n_samples + i)
            for i, b in enumerate(bodies)
        )
    )
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
    return Judgment.from_probs(prompt.labels, probs, coverage=coverage, method="sampling",
                               choice_scores=prompt.choice_scores, n_samples=len(named), raw=texts)  # fmt: skip
