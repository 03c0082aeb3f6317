"""The estimator contract: what every public statistic promises, and the registry that holds
each one to it (``tests/metrics/test_contract.py`` runs every registered estimator through the
same adversarial frames; ``benchmarks/calibration.py`` simulates every interval method).

The promises:

- **invariance**: permuting rows, or renaming systems and cases (keeping their order), changes
  no number;
- **unit, pairing and scale checked**: values outside the declared scale, verdicts that are not
  0/1, case keys of different types in the two systems, and duplicated rows without a repeat
  index are refused with one line naming the fix;
- **identification**: what the data cannot determine (one case, no variation, a disconnected
  or separated comparison graph, positions that never vary, one run where two are needed) is
  refused, or reported as not estimable (NaN, ``method`` saying why), never as a number;
- **honest intervals**: no interval narrower than the exact (Wilson) bound for bounded data, so
  never zero width; a gate never passes on a missing or zero-width interval;
- **named**: ``method`` names the estimand and the interval.

How to join (one line per estimator): add a ``register(...)`` call below naming the public
function (its dotted path, so this module imports nothing it registers), the frames it runs on
(``data``, one of :data:`DATA_KINDS`), the keyword arguments the contract test passes
(``call``), the estimand and the interval in a few words, which adversarial checks apply
(``checks``, a subset of :data:`CHECKS`; leave one out only with the reason in ``note``), and
the name of its simulation in ``benchmarks/calibration.py`` (``calibration``) when it has an
interval. A public function or class of ``metrics``, ``labels``, ``stats`` (or ``items``) that is neither
registered nor listed in :data:`HELPERS` fails ``test_every_public_statistic_is_registered``.

Example:
    >>> CONTRACT["jevalkit.metrics.mean_score"].data
    'results'
    >>> "one_case" in CONTRACT["jevalkit.metrics.compare"].checks
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

DATA_KINDS = ("results", "two_runs", "games", "labels", "arrays")
CHECKS = (
    "order",  # shuffled rows: the same numbers
    "rename",  # systems and cases renamed (order kept): the same numbers
    "scale",  # values outside [0, 1] / verdicts not 0/1: refused in one line
    "keys",  # int case ids in one system, str in the other: refused
    "duplicates",  # the same case, system and repeat twice: refused
    "one_case",  # a single case: no interval (NaN) or refused, never a number with a CI
    "no_spread",  # no variation: an interval of positive width, or none (never zero width)
    "gate",  # a decision never passes on a missing or zero-width interval
    "graph",  # games: disconnected refused, separation reported as unbounded
    "one_order",  # games shown in one order: position effects refused
    "method",  # ``method`` names the estimand and the interval
)


@dataclass(frozen=True)
class Estimator:
    """One public statistic and the contract checks it is held to."""

    name: str
    data: str
    estimand: str
    interval: str
    call: Mapping[str, Any] = field(default_factory=dict)
    checks: tuple[str, ...] = ()
    calibration: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.data not in DATA_KINDS:
            raise ValueError(f"{self.name}: data must be one of {DATA_KINDS}, got {self.data!r}")
        unknown = set(self.checks) - set(CHECKS)
        if unknown:
            raise ValueError(f"{self.name}: unknown checks {sorted(unknown)}; see CHECKS")


_REGISTRY: dict[str, Estimator] = {}
CONTRACT = MappingProxyType(_REGISTRY)


def register(name: str, data: str, estimand: str, interval: str, **options: Any) -> Estimator:
    """Add a public estimator to the contract (see the module docstring).

    Example:
        >>> register("jevalkit.metrics.mean_score", "results", "x", "y")
        Traceback (most recent call last):
        ...
        ValueError: jevalkit.metrics.mean_score is registered twice
    """
    if name in _REGISTRY:
        raise ValueError(f"{name} is registered twice")
    entry = Estimator(name, data, estimand, interval, **options)
    _REGISTRY[name] = entry
    return entry


ALL = ("order", "rename", "method")
M = "jevalkit.metrics."
L = "jevalkit.labels."
S = "jevalkit.stats."
IT = "jevalkit.items."
SYS = {"by": "system", "case": "case_id"}

# fmt: off
register(M + "mean_score", "results", "mean of case means (repeats averaged within a case)", "t over cases; Wilson floor without spread", call=SYS, checks=(*ALL, "scale", "one_case", "no_spread"), calibration="mean_score")
register(M + "pass_rate", "results", "share of passing runs", "Wilson, case-clustered by design effect", call=SYS, checks=(*ALL, "scale", "no_spread"), calibration="pass_rate", note="one case: the Wilson interval over its repeats, said in method")
register(M + "mean_absolute_error", "results", "mean |prediction - gold| over cases", "BCa bootstrap over cases; none without spread", call=SYS, checks=(*ALL, "one_case", "no_spread"), calibration="mean_absolute_error")
register(M + "win_rate", "results", "(wins + ties / 2) / paired cases", "percentile bootstrap over cases; Wilson floor", call={"baseline": "A", "case": "case_id"}, checks=(*ALL, "keys", "duplicates", "one_case", "no_spread"), calibration="win_rate")
register(M + "consistency", "results", "modal verdict share per case, averaged", "percentile bootstrap over cases; Wilson floor", call={"by": "system", "case": "case_id", "level": None}, checks=(*ALL, "duplicates", "one_case", "no_spread"), calibration="consistency")
register(M + "compare", "results", "paired difference of case means (system - baseline)", "Newcombe paired (0/1) or BCa over paired cases", call={"baseline": "A", "by": None, "case": "case_id"}, checks=(*ALL, "scale", "keys", "duplicates", "one_case", "no_spread"), calibration="compare")
register(M + "case_changes", "results", "cases whose modal verdict changed", "none (a list of cases)", call={"a": "A", "b": "B", "case": "case_id"}, checks=("order", "rename", "keys"))
register(M + "gate", "results", "is the lower interval end at or above the minimum", "that of pass_rate / mean_score", call={"minimum": 0.5, "by": "system", "case": "case_id"}, checks=("order", "rename", "one_case", "gate"))
register(M + "release_gate", "two_runs", "non-inferiority of the candidate (drop < max_drop)", "that of compare", call={"max_drop": 0.1, "case": "case_id"}, checks=("order", "rename", "scale", "keys", "duplicates", "one_case", "gate"))
register(M + "rank", "games", "Bradley-Terry strengths (verdicts counted, or preference strength)", "percentile bootstrap over cases", call={"anchor": "A", "n_resamples": 200}, checks=(*ALL, "graph"), calibration="rank")
register(M + "baseline_win_rates", "games", "win rate against the baseline (verdicts or preference)", "t with a case-clustered SE (or percentile bootstrap); Wilson floor", call={"baseline": "A", "n_resamples": 500}, checks=(*ALL, "one_case", "no_spread"), calibration="baseline_win_rates")
register(M + "position_bias", "games", "share of decisive games won by the answer shown first", "Wilson; paired t for the level shift", checks=(*ALL, "one_order"), calibration="position_bias")
register(M + "length_bias", "games", "share of decisive games won by the longer answer", "Wilson; logistic-model Wald interval", checks=("order", "rename", "method"), note="needs recorded lengths: the games frame carries them")
register(L + "corrected_mean", "labels", "mean human score (PPI, PPI++, Rogan-Gladen; Hajek form when weighted)", "t with a small-sample floor; delta method", call={"levels": ["fail", "pass"]}, checks=(*ALL, "scale", "one_case"), calibration="corrected_mean")
register(L + "corrected_difference", "labels", "paired difference in mean human score", "t with a small-sample floor", call={"baseline": "A", "candidate": "B", "levels": ["fail", "pass"]}, checks=ALL, calibration="corrected_mean")
register(L + "label_budget", "labels", "labels needed for a target half-width", "none (a planning number)", call={"target_half_width": 0.1, "levels": ["fail", "pass"]}, checks=ALL)
register(M + "quality", "arrays", "a judge's agreement with gold labels", "Wilson / bootstrap per measure", note="judge-specific frames (a judge prompt file); pinned in tests/metrics/test_judge_quality.py")
register(M + "reliability_curve", "arrays", "observed rate per bin of predicted probability", "Wilson per bin", note="judge-specific frames; pinned in tests/metrics/test_judge_quality.py")
register(M + "pairwise_preferences", "arrays", "one preference per case: the mean of its games", "none (a per-case table)", note="a per-case table, no estimate across cases")
register(L + "label_agreement", "arrays", "agreement between labellers (Krippendorff's alpha)", "bootstrap over items", note="labeller frames; pinned in tests/labels")
register(S + "wilson_ci", "arrays", "a proportion", "Wilson score", calibration="pass_rate")
register(S + "no_spread_ci", "arrays", "a bounded mean whose sample shows no spread", "Wilson at the same mean", calibration="no_spread_ci")
register(S + "paired_proportion_ci", "arrays", "a difference of paired proportions", "Newcombe square-and-add", calibration="compare")
register(S + "bootstrap_ci", "arrays", "a statistic of a sample", "BCa / percentile bootstrap", calibration="mean_absolute_error")
register(S + "standard_error", "arrays", "the standard error of a mean, cluster-aware", "normal / t", calibration="pass_rate")
register(S + "paired_difference", "arrays", "a paired mean difference", "t over pairs", calibration="compare")
register(S + "confidence_sequence", "arrays", "a running mean, valid at every look", "anytime-valid confidence sequence", note="calibrated by benchmarks/bench_adaptive.py")
register(S + "SweepSequence", "arrays", "the mean over cases of each case's expected score, at every sweep", "anytime-valid confidence sequence (betting)", note="the adaptive runner's stopping rule; calibrated by benchmarks/bench_adaptive.py")
register(S + "ppi_interval", "arrays", "a prediction-powered mean (Hajek form when weighted)", "t with a small-sample floor", calibration="corrected_mean")
register(S + "rogan_gladen_interval", "arrays", "a prevalence corrected for Se and Sp", "delta method", calibration="rogan_gladen")
register(S + "bimodality", "arrays", "is a distribution split in two", "a test: sequential parametric bootstrap / dip", calibration="bimodality")
register(S + "bimodality_groups", "arrays", "bimodality of several samples", "as bimodality", calibration="bimodality")
register(S + "fleiss_kappa", "arrays", "chance-corrected agreement of raters", "none (a point statistic)", note="a point statistic (no interval); pinned to statsmodels in tests/stats")
register(S + "krippendorff_alpha", "arrays", "chance-corrected agreement, any level of measurement", "none (a point statistic)", note="a point statistic (no interval); pinned to the krippendorff package in tests/stats")
register(S + "ordinal_spacing", "arrays", "the spacing of ordinal levels", "none", note="a descriptive fit; pinned in tests/stats")
register(S + "variance_components", "arrays", "between- and within-case variance", "none (inputs to repeats_needed)", note="moment estimates feeding repeats_needed; pinned in tests/stats")
register(S + "repeats_needed", "arrays", "standard error against repeats per case", "none (a planning curve)", note="a planning curve; pinned in tests/stats")
register(M + "leaderboard", "results", "mean case score per system; its rank among all systems", "mean_score's; simultaneous rank intervals (max-t bootstrap over pairs, step-down)", call={"case": "case_id", "n_resamples": 200}, checks=(*ALL, "scale", "keys", "duplicates", "one_case", "no_spread"), note="rank coverage simulated in benchmarks/bench_items.py (99.5% of 200 leaderboards); kind='pairwise' goes through rank (graph checks there)")
register(M + "rank_sets", "arrays", "each system's rank, all systems at once", "max-t bootstrap over pairwise differences, step-down", note="the core of leaderboard; simulated in benchmarks/bench_items.py")
register(IT + "analysis", "results", "per item: mean score, corrected item-total r; Cronbach's alpha", "Feldt F interval for alpha (attrs); t-test p for r", call={"case": "case_id"}, checks=(*ALL, "scale", "keys", "duplicates", "one_case", "no_spread"), note="pinned to pingouin.cronbach_alpha and scipy.stats.pearsonr in tests/items")
register(IT + "cronbach_alpha", "arrays", "Cronbach's alpha of a systems x items matrix", "Feldt F interval", note="pinned to pingouin in tests/items")
register(IT + "fit_irt", "results", "1PL/2PL item parameters; EAP abilities", "posterior SD of each ability", note="returns an IrtFit, not a table; parameter recovery and girth's fit in tests/items/test_irt.py, refusals there")
register(IT + "estimate", "arrays", "a new system's full-benchmark score from anchor items", "design-based stratified t (model-assisted or plain)", note="needs a fit and anchors; leave-systems-out coverage in benchmarks/bench_items.py (93-100%)")
register(IT + "leave_systems_out", "results", "error and coverage of estimate per k", "none (it measures other intervals)", note="a validation loop over fit_irt, select and estimate")
register(M + "variance_components", "results", "variance of the score over random facets (a G-study)", "Satterthwaite chi-square per component (ANOVA), chi-square on levels (REML)", call={"facets": ("case", "system"), "case": "case_id"}, checks=(*ALL, "keys", "duplicates", "one_case", "no_spread"), note="any numeric score (no scale); pinned to Brennan (2001) and statsmodels MixedLM in tests/stats/test_gstudy.py")
register(M + "judge_retest", "results", "ICC of a judge's repeated judgments (absolute agreement, consistency)", "none (point coefficients)", call={"case": "case_id"}, checks=(*ALL, "keys", "duplicates", "one_case"), note="pinned to pingouin.intraclass_corr in tests/metrics/test_facets.py")
register(M + "reliability", "arrays", "G and Phi coefficients of a design", "none (D-study coefficients)", note="takes variance components, not a frame; pinned to Brennan (2001) in tests/stats/test_gstudy.py")
register(M + "mean_error", "arrays", "predicted standard error of the grand mean of a design", "t at the Satterthwaite df (a predicted half-width)", note="takes variance components; the planner's prediction checked by simulation in tests/metrics/test_facets.py and benchmarks/bench_total_error.py")
register(M + "run_noise_floor", "arrays", "smallest difference of two single runs beyond their joint noise", "none (a threshold from the components)", note="takes variance components; pinned in tests/stats/test_gstudy.py")
register(M + "plan_design", "arrays", "the cheapest design reaching a target half-width", "none (a planning table)", note="takes variance components; its predicted half-width simulated in tests/metrics/test_facets.py and benchmarks/bench_total_error.py")
register(S + "g_study", "arrays", "variance components of crossed and nested random facets", "Satterthwaite chi-square per component", note="returns a GStudy; pinned to Brennan (2001) synthetic data and statsmodels MixedLM in tests/stats/test_gstudy.py")
register(S + "design_error", "arrays", "error variance of the grand mean of a design", "Satterthwaite df", note="D-study arithmetic; pinned in tests/stats/test_gstudy.py")
register(S + "g_coefficients", "arrays", "G and Phi coefficients", "none (D-study coefficients)", note="pinned to Brennan (2001) in tests/stats/test_gstudy.py")
register(S + "noise_floor", "arrays", "the noise floor of two runs", "none (a threshold)", note="pinned in tests/stats/test_gstudy.py")
register(S + "GStudy", "arrays", "a fitted G-study", "none (a container with components)", note="g_study's result; tests/stats/test_gstudy.py")
# fmt: on

HELPERS = MappingProxyType(
    {
        M + "by_groups": "applies a metric per group",
        M + "error_summary": "counts of error types: no estimate",
        M + "present_facets": "which facets vary in a frame",
        M + "scored": "how many rows carry a verdict or score",
        M + "truncated": "which rows hit max_tokens",
        M + "Estimator": "a registry entry",
        M + "ScoreColumns": "the column keywords of the item statistics",
        M + "ScoreMatrix": "the system x item matrix (a container)",
        S + "BootstrapResult": "bootstrap_ci's result (a container)",
        S + "OrdinalSpacing": "ordinal_spacing's result (a container)",
        S + "RoganGladen": "rogan_gladen_interval's result (a container)",
        IT + "IrtFit": "fit_irt's result (a container)",
        M + "columns_of": "column names of a spec",
        M + "group_codes": "integer codes of groups",
        M + "require": "column check",
        M + "system_names": "the system column",
        M + "has_repeats": "does a frame hold repeats",
        M + "games_of": "the usable games of a frame",
        M + "judge_kind": "reads a judge file",
        M + "separability": "share of non-overlapping intervals of a rank table",
        M + "summarize": "composes mean_score, pass_rate and consistency",
        M + "run_summary": "composes pass_rate",
        M + "cost": "token and cost totals: no sampling estimate",
        M + "error_share": "counts error rows (the gates' error rule)",
        M + "per_case": "each case's repeats described, worst first: no sampling estimate",
        M + "gate_decision": "the decision rule of the gates, on a given interval",
        M + "combine_runs": "two runs as one frame",
        M + "register": "this registry",
        M + "present_facets": "which facet columns vary: no estimate",
        M + "error_summary": "counts request errors by type: no sampling estimate",
        M + "scored": "counts rows with a verdict or score: no sampling estimate",
        M + "truncated": "flags rows cut off at max_tokens: no sampling estimate",
        M + "score_matrix": "the system x item matrix of the item statistics",
        M + "require_connected": "refuses systems that share no items",
        M + "require_systems": "refuses too few systems",
        IT + "select": "draws anchor items",
        IT + "simulate_2pl": "simulated data for tests and benchmarks",
        L + "append_label": "writes a label",
        L + "check_sampling_probability": "input check",
        L + "judged_items": "one row per judged item",
        L + "label_plan": "draws items to label",
        L + "label_record": "builds a label record",
        L + "label_scores_for": "the score of each label level",
        L + "read_labels": "reads a labels file",
        S + "as_clean_array": "input check",
        S + "as_labels": "input check",
        S + "least_favourable_null": "part of the bimodality test",
        S + "unimodal_fit": "part of the bimodality test",
        S + "margin_of_error_n": "sample size planning",
        S + "minimum_detectable_effect": "power planning",
        S + "sample_size": "power planning",
        S + "ppi_lambda": "PPI++'s tuning weight",
        S + "sequence_method": "describes a confidence sequence",
    }
)
