"""Metrics over results: each returns a tidy DataFrame, one row per group, with n and a CI.

Every metric names the columns it uses (``case=``, ``system=``, ``score=``, ``repeat=``, ...),
defaulting to the results columns, and refuses to guess when one is missing.

Example:
    >>> from jevalkit.metrics import pass_rate
    >>> round(float(pass_rate([True, False, True, True])["ci_low"][0]), 3)
    0.301
"""

from ._agreement import WIN_RATE_COLUMNS, consistency, win_rate
from ._changes import CHANGE_COLUMNS, case_changes
from ._compare import COMPARE_COLUMNS, COMPARE_METRICS, compare
from ._corrected import (
    BUDGET_COLUMNS,
    CORRECTED_COLUMNS,
    ESTIMATORS,
    corrected_difference,
    corrected_mean,
    label_budget,
    ppi_interval,
)
from ._cost import COST_COLUMNS, cost
from ._failures import ERROR_SUMMARY_COLUMNS, error_summary, scored, truncated
from ._frame import CASE_COLUMNS, by_groups, columns_of, group_codes, require, system_names
from ._gate import GATE_COLUMNS, GATE_METRICS, RELEASE_COLUMNS, gate, release_gate
from ._rank import BASELINE_COLUMNS, RANK_COLUMNS, baseline_win_rates, rank, separability
from ._scores import mean_absolute_error, mean_score, pass_rate
from ._summary import RUN_SUMMARY_COLUMNS, SUMMARY_COLUMNS, has_repeats, run_summary, summarize

__all__ = [
    "BASELINE_COLUMNS",
    "BUDGET_COLUMNS",
    "CASE_COLUMNS",
    "CHANGE_COLUMNS",
    "COMPARE_COLUMNS",
    "COMPARE_METRICS",
    "CORRECTED_COLUMNS",
    "COST_COLUMNS",
    "ERROR_SUMMARY_COLUMNS",
    "ESTIMATORS",
    "GATE_COLUMNS",
    "GATE_METRICS",
    "RANK_COLUMNS",
    "RELEASE_COLUMNS",
    "RUN_SUMMARY_COLUMNS",
    "SUMMARY_COLUMNS",
    "WIN_RATE_COLUMNS",
    "baseline_win_rates",
    "by_groups",
    "case_changes",
    "columns_of",
    "compare",
    "consistency",
    "corrected_difference",
    "corrected_mean",
    "cost",
    "error_summary",
    "gate",
    "group_codes",
    "has_repeats",
    "label_budget",
    "mean_absolute_error",
    "mean_score",
    "pass_rate",
    "ppi_interval",
    "rank",
    "release_gate",
    "require",
    "run_summary",
    "scored",
    "separability",
    "summarize",
    "system_names",
    "truncated",
    "win_rate",
]
