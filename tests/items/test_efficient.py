"""Anchors and full-benchmark estimates: strata, design-based intervals that cover in
leave-systems-out, refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from scipy.special import expit
from statsmodels.stats.proportion import proportion_confint

from jevalkit.errors import StatsError
from jevalkit.items import estimate, fit_irt, leave_systems_out, select, simulate_2pl


@pytest.fixture(scope="module")
def setup():
    df = simulate_2pl(n_systems=31, n_items=200, seed=6).rows
    past, new = df[df["system"] != "sys30"], df[df["system"] == "sys30"]
    return fit_irt(past, case="case_id"), new


@pytest.mark.parametrize("method", ["irt", "stratified", "random"])
def test_select_draws_k_distinct_items_with_their_strata(setup, method):
    fit, _ = setup
    anchors = select(fit, 20, method=method, seed=1)
    assert len(anchors) == 20 and anchors["case"].is_unique
    assert set(anchors["case"]) <= set(fit.items["case_id"])
    sizes = anchors.drop_duplicates("stratum")["stratum_size"].sum()
    assert sizes == 200  # the strata partition the benchmark
    assert select(fit, 20, method=method, seed=1).equals(anchors)


def test_the_sample_estimate_is_the_stratified_mean_with_its_textbook_variance(setup):
    fit, new = setup
    anchors = select(fit, 10, method="random", seed=2)
    row = estimate(fit, anchors, new, method="sample").iloc[0]
    y = new.set_index("case_id").loc[anchors["case"], "score"].to_numpy()
    var = (1 - 10 / 200) * y.var(ddof=1) / 10
    # pass/fail anchors (issue 36 item 4): the Wilson interval at the Korn-Graubard effective
    # n, n / (fpc * deff), deff = the variance over the Bernoulli one (floored at 0.5), its z
    # the t quantile on 9 df; statsmodels computes the Wilson interval
    srs = y.mean() * (1 - y.mean()) * (1 - 10 / 200) / 10
    n_eff = 10 / ((1 - 10 / 200) * max(var / srs, 0.5))
    z = sps.t.ppf(0.975, 9)
    low, high = proportion_confint(
        y.mean() * n_eff, n_eff, alpha=2 * sps.norm.sf(z), method="wilson"
    )
    assert row["value"] == pytest.approx(y.mean())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    assert row["n_items"] == 10 and "finite-population" in row["method"]
    assert "Korn-Graubard" in row["method"]
    # scores that are not 0/1 keep the textbook t interval
    part = new.assign(score=0.25 + 0.5 * new["score"])
    row = estimate(fit, anchors, part, method="sample").iloc[0]
    half = sps.t.ppf(0.975, 9) * np.sqrt((1 - 10 / 200) * (0.5 * y).var(ddof=1) / 10)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (0.25 + 0.5 * y.mean() - half, 0.25 + 0.5 * y.mean() + half)
    )
    assert "t interval on 9 df" in row["method"]


def test_pass_fail_anchors_cover_on_a_skewed_benchmark_with_no_zero_width_interval():
    # issue 36 item 4, seeded and small (benchmarks/bench_items.py --anchors prints the full
    # size): most systems lose most items, as against AlpacaEval's baseline, so strata of
    # anchors that agree are common; the t interval covered 78% on such data
    rng = np.random.default_rng(3)
    theta, b = rng.normal(-1.0, 1.0, 30), rng.normal(0.3, 1.5, 200)
    y = (rng.random((30, 200)) < expit(1.4 * (theta[:, None] - b))).astype(float)
    s, j = np.indices(y.shape).reshape(2, -1)
    df = pd.DataFrame({"system": s, "case_id": j, "score": y.ravel()})
    covered, widths = [], []
    for held in range(8):
        fit = fit_irt(df[df["system"] != held], case="case_id", model="1pl")
        new = df[df["system"] == held]
        for draw in range(6):
            for chosen, how in (("stratified", "sample"), ("random", "sample"), ("irt", "irt")):
                anchors = select(fit, 25, method=chosen, seed=100 * draw + held)
                row = estimate(fit, anchors, new, method=how).iloc[0]
                covered.append(row["ci_low"] <= new["score"].mean() <= row["ci_high"])
                widths.append(row["ci_high"] - row["ci_low"])
                assert "Korn-Graubard" in row["method"]
    assert min(widths) > 0.02
    assert 0.9 <= np.mean(covered) <= 1.0


def test_irt_estimate_is_model_assisted_and_tighter_than_nothing(setup):
    fit, new = setup
    anchors = select(fit, 30, method="irt", seed=3)
    row = estimate(fit, anchors, new).iloc[0]
    assert row["method"].startswith("model-assisted: 2PL")
    assert row["ci_low"] <= new["score"].mean() <= row["ci_high"]


def test_leave_systems_out_error_and_coverage_are_in_range():
    # seeded and small; benchmarks/bench_items.py prints the full-size figures
    df = simulate_2pl(n_systems=30, n_items=200, seed=9).rows
    table = leave_systems_out(df, [30], case="case_id", model="1pl", seed=0)
    assert table["n_systems"].eq(30).all()
    assert (table["mae"] < 0.12).all()
    assert (table["coverage"] >= 0.8).all()


def test_refusals(setup):
    fit, new = setup
    with pytest.raises(StatsError, match="not fewer than the benchmark's 200 items"):
        select(fit, 200)
    with pytest.raises(StatsError, match="method must be one of"):
        select(fit, 10, method="best")
    anchors = select(fit, 10, method="random")
    renamed = new.assign(case_id=new["case_id"].str.replace("q", "Q"))
    with pytest.raises(StatsError, match="score none of the anchors"):
        estimate(fit, anchors, renamed)
    foreign = anchors.assign(case=["zz"] * 10)
    with pytest.raises(StatsError, match="not an item of the fitted benchmark"):
        estimate(fit, foreign, new)
    one = new[new["case_id"].isin(anchors["case"][:1])]
    with pytest.raises(StatsError, match="a stratified variance needs 2"):
        estimate(fit, anchors, one, method="sample")
    holes = simulate_2pl(n_systems=12, n_items=30, seed=0).rows
    own = holes["system"].str[3:].astype(int) == holes["case_id"].str[1:].astype(int)
    holes = holes[~own]  # system i misses item i
    with pytest.raises(StatsError, match="no system is"):
        leave_systems_out(holes, [10], case="case_id")


@pytest.mark.parametrize("method", ["irt", "sample"])
def test_a_new_system_that_solves_every_anchor_gets_a_score_in_range_and_a_real_interval(
    setup, method
):
    """Issue 34: the model-assisted estimate came out above 1 (1.045, its interval ending at 1),
    and anchors without spread within the strata gave a zero-width interval."""
    fit, new = setup
    anchors = select(fit, 10, method="stratified", seed=2)
    row = estimate(fit, anchors, new.assign(score=1.0), method=method).iloc[0]
    assert 0 <= row["ci_low"] < row["ci_high"] <= 1 and row["ci_low"] <= row["value"] <= 1
    if method == "sample":  # Wilson at n / fpc (design effect 1), z = t on 5 df
        assert "no spread within the strata" in row["method"]
        z = sps.t.ppf(0.975, 5)
        n = 10 / (1 - 10 / 200)
        expected = proportion_confint(n, n, alpha=2 * sps.norm.sf(z), method="wilson")
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected)


def test_leave_systems_out_estimates_each_select_method_as_documented():
    """The stratified and random anchors are estimated by the stratified mean, the irt ones
    by the model (every method was estimated by the model before)."""
    df = simulate_2pl(n_systems=14, n_items=80, seed=3).rows
    fit = fit_irt(df[df["system"] != "sys00"], case="case_id")
    anchors = select(fit, 10, method="stratified", seed=0)
    new = df[df["system"] == "sys00"]
    full = new["score"].mean()
    plain = estimate(fit, anchors, new, method="sample").iloc[0]
    first = leave_systems_out(df, [10], methods=["stratified"], case="case_id", max_systems=1)
    assert first["mae"].iloc[0] == pytest.approx(abs(plain["value"] - full))


def test_a_stratum_with_one_scored_anchor_is_merged_with_its_neighbour(setup):
    # issue 36 item 11: a stratum holding one scored anchor refused the whole system
    fit, new = setup
    anchors = select(fit, 20, method="stratified", seed=1)
    first = anchors["stratum"].min()
    keep = anchors[anchors["stratum"] == first]["case"].iloc[1:]
    partial = new[~new["case_id"].isin(keep)]  # the first stratum keeps one scored anchor
    row = estimate(fit, anchors, partial, method="sample").iloc[0]
    assert "merged with its neighbour" in row["method"]
    assert row["ci_low"] < row["value"] < row["ci_high"]
    # the merged stratum is one stratum: its share of the items, its anchors pooled
    strata = anchors["stratum"].to_numpy()
    second = sorted(set(strata))[1]
    y = new.set_index("case_id")["score"]
    sizes = anchors.drop_duplicates("stratum").set_index("stratum")["stratum_size"]
    scored = anchors[~anchors["case"].isin(keep)]
    value = 0.0
    for h in sorted(set(strata)):
        if h == second:
            continue
        members = [first, second] if h == first else [h]
        cases = scored[scored["stratum"].isin(members)]["case"]
        value += sizes[members].sum() / 200 * y.loc[cases].mean()
    assert row["value"] == pytest.approx(value)


def test_results_with_no_scored_anchor_row_are_refused_saying_so(setup):
    # issue 36 item 4: an empty frame (or anchors all unscored) said "no scored rows"
    fit, new = setup
    anchors = select(fit, 10, method="stratified", seed=1)
    for frame in (new.iloc[:0], new.assign(score=np.nan)):
        with pytest.raises(StatsError, match="score none of the anchors"):
            estimate(fit, anchors, frame)


def test_a_frame_without_the_anchor_items_is_refused_saying_so_with_several_case_columns():
    # issue 36 item 4: with the default case columns (probe, version, case_id) a frame with
    # none of the anchors said "no scored rows: every row has an error or a missing score"
    df = simulate_2pl(n_systems=21, n_items=60, seed=2).rows.assign(probe="p", version=1)
    fit = fit_irt(df[df["system"] != "sys20"])
    anchors = select(fit, 10, method="stratified", seed=0)
    chosen = {case for _, _, case in anchors["case"]}
    new = df[df["system"] == "sys20"]
    for frame in (new[~new["case_id"].isin(chosen)], new.iloc[:0], new.assign(score=np.nan)):
        with pytest.raises(StatsError, match="score none of the anchors"):
            estimate(fit, anchors, frame)
    assert estimate(fit, anchors, new, method="sample").iloc[0]["n_items"] == 10


def test_two_anchors_on_one_df_get_the_wilson_interval_at_t_and_too_many_say_so(setup):
    """Two anchors (one stratum, 1 df, t = 12.7): 2 Phi(t) - 1 rounded to 1 and the estimate
    was refused with "confidence must be between 0 and 1, got 1.0". And irt anchors beyond
    what the calibrated items can fill were refused as "too few"."""
    fit, new = setup
    for method in ("stratified", "random"):
        row = estimate(fit, select(fit, 2, method=method, seed=0), new, method="sample").iloc[0]
        z = sps.t.ppf(0.975, 1)
        n_eff = float(row["method"].split("effective n ")[1].split(" ")[0])
        low, high = proportion_confint(
            row["value"] * n_eff, n_eff, alpha=2 * sps.norm.sf(z), method="wilson"
        )
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-3)
        assert row["ci_high"] - row["ci_low"] > 0.9  # two anchors tell little
    df = simulate_2pl(n_systems=31, n_items=200, seed=6).rows
    dead = df["case_id"].isin(sorted(df["case_id"].unique())[:40])
    fit = fit_irt(df.assign(score=df["score"].where(~dead, 1.0)), case="case_id")
    pool = int(fit.items["status"].eq("ok").sum())
    assert pool < 190  # the solved-by-all items are not calibrated
    with pytest.raises(StatsError, match=r"too many anchors .*use k <= \d+"):
        select(fit, pool + 5, method="irt")


def test_irt_anchors_of_a_system_above_every_past_one_fall_back_to_the_stratified_mean(setup):
    """Issue 52: with 29 of 30 anchors solved, method="irt" returned 1.0 [0.886, 1.0] (its
    estimate clipped from above 1). Anchors that put the system beyond the fitted systems'
    range (the model extrapolates there), or a model-assisted estimate outside [0, 1], give the
    stratified mean of the anchors, said in ``method`` and ``outside_range``."""
    fit, new = setup
    anchors = select(fit, 30, method="irt", seed=3)
    hardest = anchors.loc[
        anchors["case"].map(fit.items.set_index("case_id")["difficulty"]).idxmax(), "case"
    ]
    strong = new.assign(score=np.where(new["case_id"] == hardest, 0.0, 1.0))
    row = estimate(fit, anchors, strong, method="irt").iloc[0]
    plain = estimate(fit, anchors, strong, method="sample").iloc[0]
    assert row["outside_range"] and "above the fitted systems' range" in row["method"]
    assert (row["value"], row["ci_low"], row["ci_high"]) == (
        plain["value"],
        plain["ci_low"],
        plain["ci_high"],
    )
    assert 0.9 < row["value"] < 1 and row["ci_low"] < row["value"] < row["ci_high"] <= 1
    assert not plain["outside_range"]
    # a system inside the range keeps the model-assisted estimate, unflagged
    row = estimate(fit, anchors, new, method="irt").iloc[0]
    assert not row["outside_range"] and row["method"].startswith("model-assisted")


def test_irt_anchors_all_lost_reach_0():
    """The AlpacaEval reference system (it wins none of its instructions) was not covered by
    irt anchors: the model-assisted estimate of anchors that all lost is its predictions, above
    0, and its Wilson interval stopped short of 0. A benchmark scoring 0 everywhere gives only
    such anchors, so the interval reaches 0."""
    rng = np.random.default_rng(3)
    theta, b = rng.normal(-1.0, 1.0, 30), rng.normal(0.3, 1.5, 200)
    y = (rng.random((30, 200)) < expit(1.4 * (theta[:, None] - b))).astype(float)
    y[0] = 0.0  # the reference: loses everything
    s, j = np.indices(y.shape).reshape(2, -1)
    df = pd.DataFrame({"system": s, "case_id": j, "score": y.ravel()})
    fit = fit_irt(df[df["system"] != 0], case="case_id")
    new = df[df["system"] == 0]
    for seed in range(5):
        for k in (25, 50):
            row = estimate(fit, select(fit, k, method="irt", seed=seed), new).iloc[0]
            assert row["ci_low"] == 0.0 < row["ci_high"], row["method"]
