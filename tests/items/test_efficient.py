"""Anchors and full-benchmark estimates: strata, design-based intervals that cover in
leave-systems-out, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from jevalkit.errors import StatsError
from jevalkit.items import estimate, fit_irt, leave_systems_out, select, simulate_2pl


@pytest.fixture(scope="module")
def setup():
    df = simulate_2pl(n_systems=31, n_items=200, seed=6)
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
    se = np.sqrt((1 - 10 / 200) * y.var(ddof=1) / 10)
    half = sps.t.ppf(0.975, 9) * se
    assert row["value"] == pytest.approx(y.mean())
    assert row["ci_high"] == pytest.approx(min(y.mean() + half, 1.0))
    assert row["n_items"] == 10 and "finite-population" in row["method"]


def test_irt_estimate_is_model_assisted_and_tighter_than_nothing(setup):
    fit, new = setup
    anchors = select(fit, 30, method="irt", seed=3)
    row = estimate(fit, anchors, new).iloc[0]
    assert row["method"].startswith("model-assisted: 2PL")
    assert row["ci_low"] <= new["score"].mean() <= row["ci_high"]


def test_leave_systems_out_error_and_coverage_are_in_range():
    # seeded and small; benchmarks/bench_items.py prints the full-size figures
    df = simulate_2pl(n_systems=30, n_items=200, seed=9)
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
    with pytest.raises(StatsError, match="its variance needs 2"):
        estimate(fit, anchors, one, method="sample")
    holes = simulate_2pl(n_systems=12, n_items=30, seed=0)
    own = holes["system"].str[3:].astype(int) == holes["case_id"].str[1:].astype(int)
    holes = holes[~own]  # system i misses item i
    with pytest.raises(StatsError, match="no system is"):
        leave_systems_out(holes, [10], case="case_id")
