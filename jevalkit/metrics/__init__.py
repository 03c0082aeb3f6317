"""Metrics over results: each returns a tidy DataFrame, one row per group, with n and a CI, or
a small results object (``Ranking``, ``Leaderboard``, ``DesignChoice``, ``RankSets``,
``NoiseFloor``, ``MeanError``) with ``.table()``.

Every metric names the columns it uses (``case=``, ``system=``, ``score=``, ``repeat=``, ...),
defaulting to the results columns, and refuses to guess when one is missing; each carries its
contract (``fn.contract``, :mod:`jevalkit.contract`). Analyses of judged results live here too: a
judge's quality against gold, its position and length bias, rankings from pairwise games. What a
G-study (:func:`jevalkit.stats.variance_components`) implies for a design is here as well
(``reliability``, ``mean_error``, ``run_noise_floor``, ``choose_design``). Corrections with human
labels are :mod:`jevalkit.labels`; facts about results rows (scored, truncated, errors) are the results layer's
(:mod:`jevalkit.results`).

Example:
    >>> from jevalkit.metrics import pass_rate
    >>> round(float(pass_rate([True, False, True, True])["ci_low"][0]), 3)
    0.301
"""

from ._agreement import consistency, win_rate
from ._changes import case_changes
from ._compare import METRICS as COMPARE_METRICS
from ._compare import compare
from ._cost import cost
from ._design import DesignChoice, choose_design
from ._dstudy import MeanError, NoiseFloor, mean_error, reliability, run_noise_floor
from ._gate import GATE_METRICS, gate, gate_decision, release_gate
from ._judge_bias import length_bias, pairwise_preferences, position_bias
from ._judge_quality import quality, reliability_curve
from ._leaderboard import Leaderboard, RankSets, leaderboard, rank_sets
from ._pass_at_k import pass_at_k, pass_hat_k
from ._per_case import per_case
from ._race import Race
from ._race_standings import RaceOutcome
from ._rank import Ranking, baseline_win_rates, rank
from ._retest import judge_retest
from ._scores import mean_absolute_error, mean_score, pass_rate
from ._summary import run_summary, summarize

__all__ = [
    "COMPARE_METRICS",
    "GATE_METRICS",
    "DesignChoice",
    "Leaderboard",
    "MeanError",
    "NoiseFloor",
    "Race",
    "RaceOutcome",
    "RankSets",
    "Ranking",
    "baseline_win_rates",
    "case_changes",
    "choose_design",
    "compare",
    "consistency",
    "cost",
    "gate",
    "gate_decision",
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
    "position_bias",
    "quality",
    "rank",
    "rank_sets",
    "release_gate",
    "reliability",
    "reliability_curve",
    "run_noise_floor",
    "run_summary",
    "summarize",
    "win_rate",
]
