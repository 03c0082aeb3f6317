"""Read a level distribution from an endpoint's logprobs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ._judgment import JudgeError


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
        raise JudgeError("the endpoint returned no logprobs; use a model/endpoint that supports "
                         "them, or method='sampling'")  # fmt: skip
    content = logprobs.get("content")
    if isinstance(content, Sequence) and content:
        first = content[0]
        alts = first.get("top_logprobs") or [
            {"token": first.get("token"), "logprob": first.get("logprob")}
        ]
        return [(str(a["token"]), float(a["logprob"])) for a in alts if a.get("token") is not None]
    tops = logprobs.get("top_logprobs")
    if isinstance(tops, Sequence) and tops and isinstance(tops[0], Mapping):
        return [(str(t), float(lp)) for t, lp in tops[0].items()]
    raise JudgeError(
        "the endpoint's logprobs carry no top alternatives; ask with top_logprobs >= 5"
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
