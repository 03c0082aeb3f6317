"""Read a level distribution from an endpoint's logprobs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from ..errors import JudgeError


def normalise_token(token: str) -> str:
    """Tokens arrive as " 4", "4", "Yes", " yes": compare without surrounding space and case.

    Example:
        >>> normalise_token(" Yes\\n")
        'yes'
    """
    return token.strip().casefold()


def top_alternatives(logprobs: Any) -> list[tuple[str, float]]:
    """The first generated token's alternatives as (token, logprob), from either response shape:
    chat (``content[0].top_logprobs`` list) or legacy completions (``top_logprobs[0]`` dict).

    Example:
        >>> top_alternatives({"content": [{"token": "4", "logprob": -0.1,
        ...                                "top_logprobs": [{"token": "4", "logprob": -0.1}]}]})
        [('4', -0.1)]
        >>> top_alternatives({"tokens": ["4"], "top_logprobs": [{"4": -0.1, "3": -2.5}]})
        [('4', -0.1), ('3', -2.5)]
    """
    if not isinstance(logprobs, Mapping):
        raise JudgeError(
            "the endpoint returned no logprobs; use a model/endpoint that supports them, "
            "or method='sampling'"
        )
    content = logprobs.get("content")
    if isinstance(content, list) and content and isinstance(content[0], Mapping):
        first = content[0]
        alts = first.get("top_logprobs") or [
            {"token": first.get("token"), "logprob": first.get("logprob")}
        ]
        pairs = [(a.get("token"), a.get("logprob")) for a in alts if isinstance(a, Mapping)]
    else:
        tops = logprobs.get("top_logprobs")
        if not (isinstance(tops, list) and tops and isinstance(tops[0], Mapping)):
            raise JudgeError(
                "the endpoint's logprobs carry no top alternatives; ask with top_logprobs >= 5"
            )
        pairs = list(tops[0].items())
    usable = [(t, float(lp)) for t, lp in pairs if isinstance(t, str) and _is_logprob(lp)]
    if not usable:
        raise JudgeError("the endpoint's logprobs are malformed (no token with a finite logprob)")
    return usable


def _is_logprob(value: Any) -> TypeGuard[float]:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value <= 0
    )


def level_distribution(
    alternatives: Sequence[tuple[str, float]], level_tokens: Sequence[Sequence[str]]
) -> tuple[list[float], float]:
    """Probability of each level (summing the variants of its token) and the coverage, the mass on
    any level token before renormalising.

    Args:
        alternatives: (token, logprob) pairs for one position.
        level_tokens: for each level, the token strings that name it (``[["0"], ["1"], ...]``).

    Example:
        >>> alts = [(" 4", math.log(0.5)), ("4", math.log(0.1)), ("3", math.log(0.2)), ("The", math.log(0.2))]
        >>> probs, coverage = level_distribution(alts, [["3"], ["4"]])
        >>> [round(p, 3) for p in probs], round(coverage, 3)
        ([0.25, 0.75], 0.8)
    """
    lookup = {}
    for i, names in enumerate(level_tokens):
        for name in names:
            lookup[normalise_token(name)] = i
    mass = [0.0] * len(level_tokens)
    seen: set[str] = set()
    for token, logprob in alternatives:
        if token in seen:  # some servers repeat the chosen token in its own alternatives
            continue
        seen.add(token)
        idx = lookup.get(normalise_token(token))
        if idx is not None:
            mass[idx] += math.exp(logprob)
    coverage = math.fsum(mass)
    if coverage <= 0:
        return [0.0] * len(level_tokens), 0.0
    return [m / coverage for m in mass], min(1.0, coverage)
