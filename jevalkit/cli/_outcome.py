"""How a run ended, said after its table: the errors by type with the first message, the answers
cut off at ``max_tokens``, and a non-zero exit when nothing at all was scored."""

from __future__ import annotations

import sys

import pandas as pd

from ..local import unauthorized_hint
from ..results import error_summary, scored, truncated

NOTHING_SCORED = 1


def report_outcome(df: pd.DataFrame, *, unit: str = "request") -> int:
    """Print what failed and what was cut off; return the exit code (1 when rows exist but
    none carries a score: an unreachable endpoint, a bad key, ``--retry-errors`` that fixed
    nothing)."""
    for row in error_summary(df).itertuples():
        status = f" {row.status}" if row.status is not None else ""
        print(f"{row.n} {unit}(s) failed with {row.type}{status}: {row.first_message}")
        if row.status == 401:
            _unauthorized(df)
    cut = truncated(df)
    if cut.any():
        print(
            f"{int(cut.sum())} answer(s) cut off at max_tokens (finish_reason 'length'): their "
            "scores judge an incomplete output; raise --max-tokens"
        )
    if len(df) and scored(df) == 0:
        print(f"jevalkit: error: none of {len(df)} {unit}(s) was scored", file=sys.stderr)
        return NOTHING_SCORED
    return 0


def _unauthorized(df: pd.DataFrame) -> None:
    """Say what to do when the endpoint that refused the key is an embedded model's server."""
    urls = df["base_url"].dropna().astype(str).unique() if "base_url" in df else []
    for url in urls:
        hint = unauthorized_hint(url)
        if hint:
            print(f"  {hint}")
