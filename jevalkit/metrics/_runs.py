"""Two runs as one frame: a base run and a head run compared system against system."""

from __future__ import annotations

import pandas as pd

from ..errors import StatsError


def combine_runs(base: pd.DataFrame, head: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """One frame of a base and a head run, and the baseline system's name: the base must hold one
    system; names shared by both runs are told apart as ``base: <name>`` / ``head: <name>``.

    Raises:
        StatsError: the base run holds several systems (compare within one file instead).

    Example:
        >>> b = pd.DataFrame({"system": ["m"], "x": [1]})
        >>> frame, name = combine_runs(b, b)
        >>> sorted(frame["system"]), name
        (['base: m', 'head: m'], 'base: m')
    """
    base_systems = sorted(base["system"].dropna().astype(str).unique())
    if len(base_systems) != 1:
        raise StatsError(
            f"the base run holds {len(base_systems)} systems ({', '.join(base_systems[:5])}); "
            "compare within one file with --baseline SYSTEM"
        )
    shared = set(base_systems) & set(head["system"].dropna().astype(str))
    if shared:
        base = base.assign(system="base: " + base["system"].astype(str))
        head = head.assign(system="head: " + head["system"].astype(str))
    return pd.concat([base, head], ignore_index=True), str(base["system"].iloc[0])
