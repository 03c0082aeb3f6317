"""The bounds on every count a file (or an argument) can set: how many repeats of a case, how
many shards a run is split into. A count past its bound is refused in one line before anything
is planned, never a plan that fills the memory (a cascade file's ``repeats: 1000000`` planned
every job first and ended in a MemoryError)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MAX_REPEATS", "MAX_SHARDS", "check_count"]

# repeats of one case by one system (a run's --repeats, a cascade judge's repeats): 10,000
# repeats of a 100-case probe are a million requests, already more than any run needs
MAX_REPEATS = 10_000
# shards of one run (--shard i/N, a part's run configuration): Kubernetes indexed jobs allow
# 100,000 completions, Slurm arrays fewer
MAX_SHARDS = 100_000


def check_count(
    value: Any, name: str, error: Callable[[str], Exception], *, low: int = 1, high: int
) -> int:
    """``value`` when it is a whole number from ``low`` to ``high``; else ``error`` with one
    line naming ``name``, the value and the bounds.

    Example:
        >>> check_count(3, "repeats", ValueError, high=MAX_REPEATS)
        3
        >>> check_count(1_000_000, "steps[0].repeats", ValueError, high=MAX_REPEATS)
        Traceback (most recent call last):
        ...
        ValueError: steps[0].repeats must be a whole number from 1 to 10,000, got 1000000
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise error(f"{name} must be a whole number from {low:,} to {high:,}, got {value!r}")
    return value
