"""Metrics over results: each returns a tidy DataFrame, one row per group, with n and a CI.

Every metric names the columns it uses (``case=``, ``system=``, ``score=``, ``repeat=``, ...),
defaulting to the results columns, and refuses to guess when one is missing. Analyses of judged
results live here too: a judge's quality against gold, its position and length bias, rankings
from pairwise games. Corrections with human labels are :mod:`jevalkit.labels`.

Example:
    >>> from jevalkit.metrics import pass_rate
    >>> round(float(pass_rate([True, False, True, True])["ci_low"][0]), 3)
    0.301
"""

from ._agreement import WIN_RATE_COLUMNS, consistency, win_rate
from ._changes import CHANGE_COLUMNS, case_changes
from ._compare import COMPARE_COLUMNS, COMPARE_METRICS, compare
from ._cost import COST_COLUMNS, cost
from ._facets import (
    FACET_INTERVAL_COLUMNS,
    judge_retest,
    mean_error,
    present_facets,
    reliability,
    run_noise_floor,
    variance_components,
)
from ._failures import ERROR_SUMMARY_COLUMNS, error_summary, scored, truncated
from ._frame import CASE_COLUMNS, by_groups, columns_of, group_codes, require, system_names
from ._gate import (
    DECISIONS,
    DEFAULT_MAX_ERROR_RATE,
    GATE_COLUMNS,
    GATE_METRICS,
    RELEASE_COLUMNS,
    error_share,
    gate,
    gate_decision,
    release_gate,
)
from ._judge_bias import (
    LENGTH_COLUMNS,
    POSITION_COLUMNS,
    PREFERENCE_COLUMNS,
    games_of,
    length_bias,
    pairwise_preferences,
    position_bias,
)
from ._judge_quality import QUALITY_COLUMNS, judge_kind, quality, reliability_curve
from ._leaderboard import LEADERBOARD_COLUMNS, leaderboard, rank_sets
from ._pass_at_k import pass_at_k, pass_hat_k
from ._per_case import PER_CASE_COLUMNS, per_case
from ._plan import PLAN_COLUMNS, plan_design
from ._rank import BASELINE_COLUMNS, RANK_COLUMNS, baseline_win_rates, rank, separability
from ._runs import combine_runs
from ._scores import mean_absolute_error, mean_score, pass_rate
from ._summary import RUN_SUMMARY_COLUMNS, SUMMARY_COLUMNS, has_repeats, run_summary, summarize

__all__ = [
    "BASELINE_COLUMNS",
    "CASE_COLUMNS",
    "CHANGE_COLUMNS",
    "COMPARE_COLUMNS",
    "COMPARE_METRICS",
    "COST_COLUMNS",
    "DECISIONS",
    "DEFAULT_MAX_ERROR_RATE",
    "ERROR_SUMMARY_COLUMNS",
    "FACET_INTERVAL_COLUMNS",
    "GATE_COLUMNS",
    "GATE_METRICS",
    "LEADERBOARD_COLUMNS",
    "LENGTH_COLUMNS",
    "PER_CASE_COLUMNS",
    "PLAN_COLUMNS",
    "POSITION_COLUMNS",
    "PREFERENCE_COLUMNS",
    "QUALITY_COLUMNS",
    "RANK_COLUMNS",
    "RELEASE_COLUMNS",
    "RUN_SUMMARY_COLUMNS",
    "SUMMARY_COLUMNS",
    "WIN_RATE_COLUMNS",
    "baseline_win_rates",
    "by_groups",
    "case_changes",
    "columns_of",
    "combine_runs",
    "compare",
    "consistency",
    "cost",
    "error_share",
    "error_summary",
    "games_of",
    "gate",
    "gate_decision",
    "group_codes",
    "has_repeats",
    "judge_kind",
    "judge_retest",
    "leaderboard",
    "length_bias",
    "mean_absolute_error",
    "mean_error",
    "mean_score",
    "pairwise_preferences",
    "pass_at_k",
    "pass_hat_k",
    "pass_rate",
    "per_case",
    "plan_design",
    "position_bias",
    "present_facets",
    "quality",
    "rank",
    "rank_sets",
    "release_gate",
    "reliability",
    "reliability_curve",
    "require",
    "run_noise_floor",
    "run_summary",
    "scored",
    "separability",
    "summarize",
    "system_names",
    "truncated",
    "variance_components",
    "win_rate",
]
