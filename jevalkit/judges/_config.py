"""How a judge is asked (:class:`JudgeConfig`: logprobs over level tokens, or the empirical
distribution of n samples) and how a sampled answer names a level (:func:`first_level`). The
runner asks (:mod:`jevalkit.runner`'s judge jobs)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import UsageError
from ..generation import GENERATION, check_generation
from ._logprobs import normalise_token
from ._prompts import JudgePrompt

_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class JudgeConfig:
    """How to ask.

    Attributes:
        method: ``logprobs`` (one request, probabilities of the level tokens) or ``sampling``
            (``n_samples`` requests at ``temperature``, the empirical distribution).
        prompt_style: ``chat`` (``/chat/completions``) or ``completion`` (``/completions`` with a
            few-shot prompt ending right before the level token: base models put far more mass
            on level tokens there).
        n_samples: samples per judgment (sampling).
        temperature: sampling temperature (sampling).
        generation: more generation parameters of the sampling requests
            (:data:`jevalkit.generation.GENERATION`: ``top_p``, ``stop``, ``frequency_penalty``,
            ...), checked as a run's are and recorded in the rows' parameters; ``temperature``
            and ``seed`` have their own keywords.
        min_coverage: refuse a logprobs judgment whose level tokens hold less probability mass
            than this (or sampling where fewer samples name a level).
        top_logprobs: alternatives asked for per token (logprobs).
        explain: after the judgment, ask (in chat form, at temperature 0) for a one- or two-
            sentence explanation of the most likely level; kept in ``Judgment.explanation``.

    Example:
        >>> JudgeConfig(n_samples=0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: n_samples must be a whole number of at least 1, got 0
    """

    method: Literal["logprobs", "sampling"] = "logprobs"
    prompt_style: Literal["chat", "completion"] = "chat"
    n_samples: int = 10
    temperature: float = 1.0
    min_coverage: float = 0.5
    top_logprobs: int = 20
    explain: bool = False
    generation: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method not in ("logprobs", "sampling"):
            raise UsageError(f"method must be 'logprobs' or 'sampling', got {self.method!r}")
        if self.prompt_style not in ("chat", "completion"):
            raise UsageError(
                f"prompt_style must be 'chat' or 'completion', got {self.prompt_style!r}"
            )
        for name, low in (("n_samples", 1), ("top_logprobs", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UsageError(f"{name} must be a whole number of at least {low}, got {value!r}")
        value = self.min_coverage
        if not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 1:
            raise UsageError(f"min_coverage must be a number from 0 to 1, got {value!r}")
        temperature = GENERATION["temperature"]
        if not temperature.allows(self.temperature):
            raise UsageError(
                f"temperature must be {temperature.values()}, got {self.temperature!r}"
            )
        if not isinstance(self.generation, Mapping):
            raise UsageError(f"generation must be a dict of parameters, got {self.generation!r}")
        given = set(self.generation)
        unknown = sorted(given - set(GENERATION) | given & {"temperature", "seed"})
        if unknown:
            raise UsageError(
                f"generation: {unknown[0]!r} is not a generation parameter the config takes; "
                f"give one of {', '.join(n for n in GENERATION if n not in ('temperature', 'seed'))} "
                "(temperature and seed have keywords of their own)"
            )
        object.__setattr__(self, "generation", check_generation(self.generation))

    def parameters(self) -> dict[str, Any]:
        """Recorded in every results row."""
        params: dict[str, Any] = {
            "method": self.method,
            "prompt_style": self.prompt_style,
            "min_coverage": self.min_coverage,
        }
        if self.method == "sampling":
            params.update(n_samples=self.n_samples, temperature=self.temperature)
            params.update(self.generation)
        if self.explain:
            params["explain"] = True
        return params

    @classmethod
    def from_parameters(cls, params: Mapping[str, Any]) -> JudgeConfig:
        """The config a row's ``parameters`` record (the inverse of :meth:`parameters`; a
        value it does not record, such as ``top_logprobs``, keeps its default).

        Example:
            >>> c = JudgeConfig(method="sampling", n_samples=5, temperature=0.7, generation={"top_p": 0.9})
            >>> JudgeConfig.from_parameters(c.parameters()) == c
            True
        """
        if not isinstance(params, Mapping) or "method" not in params:
            raise UsageError(f"not the parameters of a judge: {dict(params or {})!r}")
        own = {"method", "prompt_style", "min_coverage", "n_samples", "temperature", "explain"}
        return cls(
            **{k: params[k] for k in own if k in params},
            generation={k: v for k, v in params.items() if k not in own},
        )


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
