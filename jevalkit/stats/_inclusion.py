"""Inclusion probabilities of an unequal-probability sample (active label and case plans)."""

from __future__ import annotations

import numpy as np

from ..contract import not_a_statistic


@not_a_statistic("a sampling design: the probabilities a plan draws with, not an estimate")
def capped_inclusion(u: np.ndarray, size: float) -> np.ndarray:
    """Inclusion probabilities proportional to ``u`` that sum to ``size`` with none above 1:
    the units that would exceed 1 are taken with certainty and the rest rescaled, until none
    does (the usual construction of a probability-proportional-to-size design).

    Example:
        >>> capped_inclusion(np.array([10.0, 1.0, 1.0, 2.0]), 2).round(3).tolist()
        [1.0, 0.25, 0.25, 0.5]
    """
    u = np.asarray(u, dtype=float)
    prob = np.zeros_like(u)
    capped = np.zeros(u.size, dtype=bool)
    for _ in range(u.size):
        free = ~capped
        prob[free] = u[free] * (size - capped.sum()) / u[free].sum()
        prob[capped] = 1.0
        over = free & (prob > 1)
        if not over.any():
            break
        capped |= over
    return np.clip(prob, 0.0, 1.0)
