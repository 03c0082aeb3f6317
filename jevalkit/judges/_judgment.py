"""A judgment: a probability distribution over ordinal levels, not a bare integer."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import JudgeError


def expected_level(probs: Sequence[float]) -> float:
    """The expected level of a distribution over a judge's levels: sum of p_i * i, the levels
    numbered 0, 1, ... as the judge file lists them (lowest first), whatever their labels; the
    score is the expected level / top level. The one definition: judgments, results rows,
    reports and the LevelDistribution widget all use it.

    Example (a 1-5 judge, levels numbered 0..4):
        >>> round(expected_level([0.02, 0.05, 0.13, 0.30, 0.50]), 2)
        3.21
    """
    return math.fsum(i * p for i, p in enumerate(probs))


@dataclass(frozen=True)
class Judgment:
    """What a judge returns for one case.

    Attributes:
        levels: the level labels, lowest first (``("0", "1", "2", "3", "4")``, ``("no", "yes")``).
        probs: a distribution over ``levels`` (sums to 1).
        expected_level: sum of p_i * i, the levels numbered 0, 1, ... as listed
            (:func:`expected_level`).
        score: expected_level / top level, in [0, 1] (for a two-level judge this is p(top level),
            e.g. p(good)); or the probability-weighted choice score when ``choice_scores`` is given.
        verdict: the most likely level's label.
        coverage: probability mass the model put on valid level tokens before renormalising
            (logprobs), or the share of samples that named a level (sampling).
        entropy: Shannon entropy of ``probs`` in bits.
        method: ``logprobs`` or ``sampling``.
        n_samples: samples behind a sampled distribution (None for logprobs).
        raw: what came back (top tokens and their logprobs, or the sampled texts).
        explanation: the judge's reasoning, when asked for.

    Example (the mean-score reference page: levels 0..4 at 2%, 5%, 13%, 30%, 50%):
        >>> j = Judgment.from_probs(["0", "1", "2", "3", "4"], [0.02, 0.05, 0.13, 0.30, 0.50],
        ...                         coverage=1.0, method="logprobs")
        >>> j.verdict, round(j.expected_level, 2), round(j.score, 4)
        ('4', 3.21, 0.8025)
    """

    levels: tuple[str, ...]
    probs: tuple[float, ...]
    expected_level: float
    score: float
    verdict: str
    coverage: float
    entropy: float
    method: str
    n_samples: int | None = None
    raw: Any = field(default=None, repr=False, compare=False)
    explanation: str | None = None

    @classmethod
    def from_probs(
        cls,
        levels: Sequence[str],
        probs: Sequence[float],
        *,
        coverage: float,
        method: str,
        choice_scores: Sequence[float] | None = None,
        n_samples: int | None = None,
        raw: Any = None,
        explanation: str | None = None,
    ) -> Judgment:
        """Build a Judgment from a distribution, checking it sums to 1 (within 1e-6)."""
        if len(levels) != len(probs) or len(levels) < 2:
            raise JudgeError(
                f"need one probability per level (>= 2 levels), got {len(probs)} for {len(levels)}"
            )
        total = math.fsum(probs)
        if any(p < 0 for p in probs) or abs(total - 1.0) > 1e-6:
            raise JudgeError(
                f"probabilities must be non-negative and sum to 1, got sum {total:.6f}"
            )
        p = tuple(float(x) / total for x in probs)
        expected = expected_level(p)
        if choice_scores is not None:
            score = math.fsum(s * x for s, x in zip(choice_scores, p, strict=True))
        else:
            score = expected / (len(levels) - 1)
        entropy = -math.fsum(x * math.log2(x) for x in p if x > 0)
        verdict = levels[max(range(len(p)), key=lambda i: (p[i], -i))]
        return cls(
            tuple(levels),
            p,
            expected,
            min(1.0, max(0.0, score)),
            verdict,
            float(coverage),
            entropy,
            method,
            n_samples,
            raw,
            explanation,
        )


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
