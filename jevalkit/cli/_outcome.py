"""How a run ended, said after its table: the errors by type with the first message, the answers
cut off at ``max_tokens``, and a non-zero exit a CI can trust: when nothing at all was scored, and
when more than ``--max-error-rate`` of the requests failed (every row is saved either way)."""

from __future__ import annotations

import sys

import pandas as pd

from ..local import unauthorized_hint
from ..results import DEFAULT_MAX_ERROR_RATE, error_share, error_summary, scored, truncated

NOTHING_SCORED = 1
TOO_MANY_ERRORS = 1


def check_error_rate(
    df: pd.DataFrame, max_error_rate: float = DEFAULT_MAX_ERROR_RATE, *, unit: str = "request"
) -> int:
    """1, said in one line on stderr, when more than ``max_error_rate`` of the rows are errors
    (:meth:`jevalkit.results.ErrorShare.over`, the gate's rule); else 0. The rows are
    saved before this is asked: it only decides the exit code."""
    share = error_share(df)
    if not share.over(max_error_rate):
        return 0
    print(
        f"jevalkit: error: {share.errors} of {share.total} {unit}(s) failed ({share.share:.0%}, "
        f"over --max-error-rate {max_error_rate:g}); every row is saved: re-run the same command "
        "with --retry-errors to send them again",
        file=sys.stderr,
    )
    return TOO_MANY_ERRORS


def report_outcome(
    df: pd.DataFrame, *, unit: str = "request", max_error_rate: float = DEFAULT_MAX_ERROR_RATE
) -> int:
    """Print what failed and what was cut off; return the exit code: 1 when rows exist but
    none carries a score (an unreachable endpoint, a bad key, ``--retry-errors`` that fixed
    nothing), or when more than ``max_error_rate`` of them are errors."""
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
    return check_error_rate(df, max_error_rate, unit=unit)


def _unauthorized(df: pd.DataFrame) -> None:
    """Say what to do when the endpoint that refused the key is an embedded model's server."""
    urls = df["base_url"].dropna().astype(str).unique() if "base_url" in df else []
    for url in urls:
        hint = unauthorized_hint(url)
        if hint:
            print(f"  {hint}")
