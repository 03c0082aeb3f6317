"""Metrics over results: each returns a tidy DataFrame, one row per group, with n and a CI.

Example:
    >>> from jevalkit.metrics import pass_rate
    >>> round(float(pass_rate([True, False, True, True])["ci_low"][0]), 3)
    0.301
"""

from ._agreement import consistency, win_rate
from ._frame import CASE_COLUMNS, case_key
from ._scores import mean_absolute_error, mean_score, pass_rate
from ._summary import SUMMARY_COLUMNS, has_repeats, summarize

__all__ = [
    "CASE_COLUMNS",
    "SUMMARY_COLUMNS",
    "case_key",
    "consistency",
    "has_repeats",
    "mean_absolute_error",
    "mean_score",
    "pass_rate",
    "summarize",
    "win_rate",
]
