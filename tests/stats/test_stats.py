"""Statistics pinned against scipy, statsmodels and published values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.miscmodels.ordinal_model import OrderedModel
from statsmodels.stats.proportion import proportion_confint

from jevalkit.errors import StatsError
from jevalkit.stats import (
    bimodality,
    bootstrap_ci,
    fleiss_kappa,
    krippendorff_alpha,
    margin_of_error_n,
    ordinal_spacing,
    paired_difference,
    repeats_needed,
    sample_size,
    standard_error,
    wilson_ci,
)

NAN = np.nan
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (57, 200), (1, 1)])
def test_wilson_matches_statsmodels(k, n):
    assert wilson_ci(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"))


def test_wilson_edge_cases():
    assert all(np.isnan(wilson_ci(0, 0)))
    with pytest.raises(StatsError, match="0 <= k <= n"):
        wilson_ci(5, 3)


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_bootstrap_agrees_with_scipy(method):
    x = np.random.default_rng(42).exponential(size=300)
    ours = bootstrap_ci(x, method=method, n_resamples=20000, seed=1)
    ref = stats.bootstrap((x,), np.mean, method=method, n_resamples=20000, random_state=2)
    ci = ref.confidence_interval
    width = ci.high - ci.low
    assert ours.low == pytest.approx(ci.low, abs=0.03 * width)
    assert ours.high == pytest.approx(ci.high, abs=0.03 * width)
    assert ours.se == pytest.approx(ref.standard_error, rel=0.03)


def test_bootstrap_generic_statistic_agrees_with_scipy():
    x = np.random.default_rng(7).normal(size=120)
    ours = bootstrap_ci(x, np.median, method="bca", n_resamples=5000, seed=1)
    ref = stats.bootstrap((x,), np.median, method="BCa", n_resamples=5000, random_state=1)
    ci = ref.confidence_interval
    width = ci.high - ci.low
    assert ours.low == pytest.approx(ci.low, abs=0.1 * width)
    assert ours.high == pytest.approx(ci.high, abs=0.1 * width)


def test_cluster_bootstrap_is_wider_for_clustered_data():
    rng = np.random.default_rng(0)
    case_effect = np.repeat(rng.normal(size=40), 5)
    x = case_effect + 0.1 * rng.normal(size=200)
    clusters = np.repeat(np.arange(40), 5)
    plain = bootstrap_ci(x, method="percentile", seed=1)
    clustered = bootstrap_ci(x, method="percentile", cluster=clusters, seed=1)
    assert (clustered.high - clustered.low) > 1.8 * (plain.high - plain.low)
    # the clustered bootstrap SE matches the analytic clustered SE
    assert clustered.se == pytest.approx(standard_error(x, clusters), rel=0.08)


def test_bootstrap_edge_cases():
    one = bootstrap_ci([0.7])
    assert one.estimate == 0.7 and np.isnan(one.low)
    same = bootstrap_ci([1.0] * 10)  # a degenerate resampling distribution separates nothing
    assert np.isnan(same.low) and np.isnan(same.high) and "same value" in same.note
    with pytest.raises(StatsError, match="NaN"):
        bootstrap_ci([1.0, NAN])
    with pytest.raises(StatsError, match="at least 1"):
        bootstrap_ci([])
    assert np.isnan(bootstrap_ci([1, 2, 3], cluster=["a", "a", "a"]).low)  # one cluster


def test_clt_standard_error_is_scipy_sem():
    x = np.random.default_rng(3).uniform(size=50)
    assert standard_error(x) == pytest.approx(stats.sem(x))


def test_clustered_standard_error_matches_statsmodels_cluster_robust_ols():
    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(30), 4)
    y = np.repeat(rng.normal(size=30), 4) + rng.normal(size=120)
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    ours = standard_error(y, clusters, small_sample_correction=True)
    assert ours == pytest.approx(float(fit.bse[0]), rel=1e-9)
    uncorrected = standard_error(y, clusters)
    assert uncorrected == pytest.approx(ours * np.sqrt(29 / 30))


def test_standard_error_edge_cases():
    with pytest.raises(StatsError, match="at least 2"):
        standard_error([1.0])
    with pytest.raises(StatsError, match="2 clusters"):
        standard_error([1.0, 0.0], cluster=["a", "a"])
    assert standard_error([0.5] * 5) == 0.0


def test_paired_difference_matches_a_paired_test():
    rng = np.random.default_rng(11)
    a = rng.normal(0.6, 0.2, size=400)
    b = a - 0.02 + rng.normal(0, 0.05, size=400)
    row = paired_difference(a, b).iloc[0]
    assert row["se"] == pytest.approx(stats.sem(a - b))
    t = stats.ttest_rel(a, b)
    assert row["p_value"] == pytest.approx(t.pvalue, rel=0.05)
    assert row["ci_low"] < row["value"] < row["ci_high"] and row["corr"] > 0.9


def test_paired_difference_needs_the_same_questions():
    with pytest.raises(StatsError, match="same questions"):
        paired_difference([1, 2, 3], [1, 2])


def test_miller_power_example():
    assert sample_size(0.03, omega2=1 / 9) == 969
    assert sample_size(0.03, between_var=1 / 18, within_var=1 / 9, repeats=2) == 969
    with pytest.raises(StatsError):
        sample_size(0.0, omega2=0.1)


def test_margin_of_error_forms():
    z = stats.norm.ppf(0.975)
    assert margin_of_error_n(proportion=0.5, margin=0.05) == int(np.ceil(z**2 * 0.25 / 0.0025))
    assert margin_of_error_n(sigma=1.0, margin=0.1) == int(np.ceil((z / 0.1) ** 2))


def test_the_repeats_curve_recovers_a_known_split():
    rng = np.random.default_rng(8)
    n_cases, k = 2000, 4
    truth = rng.normal(0, np.sqrt(0.04), size=n_cases)  # between-case variance 0.04
    x = np.repeat(truth, k) + rng.normal(0, np.sqrt(0.09), size=n_cases * k)  # within 0.09
    # normal scores read on (-2, 2): the components on [0, 1] are the truth over 4^2
    result = repeats_needed(x, np.repeat(np.arange(n_cases), k), max_repeats=40, scale=(-2, 2))
    assert result.between * 16 == pytest.approx(0.04, rel=0.15)
    assert result.within * 16 == pytest.approx(0.09, rel=0.05)
    # within / (0.1 * between) = 0.09 / 0.004 = 22.5
    assert 17 <= result.recommended_repeats <= 30
    curve = result.table()
    assert curve["se"].iloc[0] * 4 == pytest.approx(np.sqrt((0.04 + 0.09) / n_cases), rel=0.1)
    assert (curve["se"] >= curve["se_infinite"]).all()


def test_repeats_needed_needs_repeats():
    with pytest.raises(StatsError, match="at least 2 repeats"):
        repeats_needed([1, 0, 1], ["a", "b", "c"])


def test_krippendorff_2011_example():
    layout = "raters x units"
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "nominal", layout=layout), 3) == 0.743
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "ordinal", layout=layout), 3) == 0.815
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "interval", layout=layout), 3) == 0.849
    transposed = np.asarray(KRIPPENDORFF_2011).T
    assert round(krippendorff_alpha(transposed, "nominal", layout="units x raters"), 3) == 0.743


def test_krippendorff_undefined_cases():
    with pytest.raises(StatsError, match="undefined"):
        krippendorff_alpha([[1, 1, 1], [1, 1, 1]], layout="raters x units")
    with pytest.raises(StatsError, match="two ratings"):
        krippendorff_alpha([[1, NAN], [NAN, 2]], layout="raters x units")


def test_fleiss_kappa_wikipedia_example():
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert round(fleiss_kappa(table), 3) == 0.210
    with pytest.raises(StatsError, match="same number"):
        fleiss_kappa([[1, 2], [3, 3]])


def test_bimodality_flags_a_split_and_not_a_bell():
    rng = np.random.default_rng(1)
    split = np.concatenate([rng.normal(0.1, 0.05, 100), rng.normal(0.9, 0.05, 100)])
    assert bool(bimodality(split)["bimodal"][0])
    assert not bool(bimodality(rng.normal(0.5, 0.1, 200))["bimodal"][0])
    small = bimodality([0.0, 1.0])
    assert not bool(small["bimodal"][0]) and np.isnan(small["p_value"][0])


def test_ordinal_thresholds_match_a_direct_statsmodels_fit():
    rng = np.random.default_rng(4)
    levels = np.digitize(rng.logistic(size=2000), [-2, -0.7, 0.4, 1.9])
    result = ordinal_spacing(levels)
    endog = pd.Series(pd.Categorical(levels, ordered=True))
    model = OrderedModel(endog, np.zeros((2000, 0)), distr="logit")
    fit = model.fit(method="bfgs", disp=False)
    direct = model.transform_threshold_params(fit.params)[1:-1]
    assert result.thresholds["flexible"].to_numpy() == pytest.approx(direct, abs=1e-4)
    assert result.thresholds["flexible"].to_numpy() == pytest.approx([-2, -0.7, 0.4, 1.9], abs=0.2)


def test_ordinal_spacing_verdicts():
    rng = np.random.default_rng(0)
    latent = rng.logistic(size=4000)
    even = ordinal_spacing(np.digitize(latent, [-1.5, -0.5, 0.5, 1.5]))
    assert even.equal_spacing_plausible and "fair summary" in even.verdict and even.df == 2
    uneven = ordinal_spacing(np.digitize(latent, [-3.0, -2.7, 0.0, 2.5]))
    assert not uneven.equal_spacing_plausible and uneven.p_value < 1e-6
    assert "unevenly spaced" in uneven.verdict and uneven.gap_ratio > 5


def test_ordinal_spacing_with_groups_separates_group_shift_from_spacing():
    rng = np.random.default_rng(2)
    groups = np.repeat(["a", "b"], 2000)
    latent = rng.logistic(size=4000) + np.where(groups == "b", 1.0, 0.0)
    levels = np.digitize(latent, [-1.5, -0.5, 0.5, 1.5])
    assert ordinal_spacing(levels, groups).equal_spacing_plausible


def test_ordinal_spacing_input_errors():
    with pytest.raises(StatsError, match="not in categories"):
        ordinal_spacing([0, 1, 3, 9], categories=range(5))
    with pytest.raises(StatsError, match="from 4 levels"):
        ordinal_spacing([0, 1, 2, 0, 1, 2])


def test_planning_formulas_refuse_a_pilot_without_spread_instead_of_answering_zero_cases():
    """Issue 34: a pilot that did not vary planned 0 cases (sigma 0, p = 1, omega^2 = 0)."""
    from jevalkit.stats import minimum_detectable_effect

    for call in (
        lambda: margin_of_error_n(sigma=0.0),
        lambda: margin_of_error_n(proportion=1.0),
        lambda: sample_size(0.05, 0.0),
    ):
        with pytest.raises(StatsError, match="a pilot without spread"):
            call()
    with pytest.raises(StatsError, match=r"proportion 1.5 is outside \[0, 1\]"):
        margin_of_error_n(proportion=1.5)
    assert np.isnan(minimum_detectable_effect(50, 0.0))  # nothing to power against, not 0
    assert margin_of_error_n(proportion=0.3, margin=0.05) == 323  # z^2 p q / E^2, unchanged


def test_agreement_needs_two_units_and_two_categories():
    with pytest.raises(StatsError, match="two or more units"):
        krippendorff_alpha([[1, np.nan], [2, np.nan]], layout="raters x units")
    with pytest.raises(StatsError, match="one subject"):
        fleiss_kappa([[2, 1]])
    with pytest.raises(StatsError, match="undefined"):
        fleiss_kappa([[3, 0], [3, 0]])
    long = pd.DataFrame(
        {"u": [1, 1, 2, 2, 1], "r": ["a", "b", "a", "b", "a"], "v": [1, 2, 2, 2, 1.0]}
    )
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        krippendorff_alpha(long, measurement="interval", unit="u", rater="r", value="v")
    mixed = long.iloc[:4].assign(u=[1, 1, "2", 2])
    with pytest.raises(StatsError, match=r"never pair|two cases or one"):
        krippendorff_alpha(mixed, measurement="interval", unit="u", rater="r", value="v")


def test_paired_difference_reads_a_frame_through_the_input_step():
    frame = pd.DataFrame(
        {
            "case_id": ["a", "a", "b", "b", "c", "c"] * 2,
            "system": ["x"] * 6 + ["y"] * 6,
            "repeat": [0, 1] * 6,
            "score": [1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1.0],
            "error": [None] * 11 + ["timeout"],
        }
    )
    row = paired_difference(frame, systems=("x", "y"), case="case_id").iloc[0]
    # repeats averaged within a case; the errored row is not scored (c for y is its one repeat)
    assert row["n"] == 3 and row["value"] == pytest.approx(np.mean([0.5 - 1, 1 - 0.5, 0 - 1]))
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        paired_difference(pd.concat([frame, frame.iloc[:1]]), systems=("x", "y"), case="case_id")
