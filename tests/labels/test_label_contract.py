"""Issue 23 for labels: weighted plans, scales, and Rogan-Gladen when it is undefined."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jevalkit.errors import StatsError
from jevalkit.labels import corrected_mean, label_sample


def population(rng, n_items=1000, rate=0.6, system="m"):
    truth = rng.random(n_items) < rate
    # a judge that passes 45% of failures and misses 5% of passes: most items judged pass
    judged = np.where(truth, rng.random(n_items) > 0.05, rng.random(n_items) < 0.45)
    df = pd.DataFrame(
        {"system": system, "case_id": [f"c{i}" for i in range(n_items)], "score": judged * 1.0}
    )
    return df, truth


def labels_for(plan, truth):
    index = plan["case_id"].str[1:].astype(int).to_numpy()
    return plan.assign(level=np.where(truth[index], "pass", "fail"))


# 1. a stratified (unequal-probability) plan: the Hajek form is unbiased and covers
def test_stratified_label_samples_give_an_unbiased_covering_corrected_mean():
    rng = np.random.default_rng(23)
    errors, covered = [], []
    for rep in range(120):
        df, truth = population(rng)
        plan = label_sample(df, 100, strategy="stratified", seed=rep)
        assert plan["sampling_probability"].nunique() == 2
        row = corrected_mean(df, labels_for(plan, truth), levels=["fail", "pass"])
        ppi = row.set_index("estimator").loc["PPI"]
        errors.append(ppi["value"] - 0.6)
        covered.append(ppi["ci_low"] <= 0.6 <= ppi["ci_high"])
    z = np.mean(errors) / (np.std(errors, ddof=1) / np.sqrt(len(errors)))
    assert abs(z) < 3.5, z  # before the fix: the judge's mean over unlabelled items only, z << -3
    assert np.mean(covered) >= 0.88  # nominal 0.95; 120 draws (the benchmark runs more)


# 8. judge scores and label scores on one scale
def test_corrected_mean_and_label_sample_refuse_scores_outside_the_unit_scale():
    rng = np.random.default_rng(0)
    df, truth = population(rng, n_items=50)
    grades = df.assign(score=1 + 9 * df["score"])
    labels = labels_for(label_sample(df, 10, seed=0), truth)
    with pytest.raises(StatsError, match=r"score range from 1 to 10, outside \[0, 1\]: pass scale"):
        corrected_mean(grades, labels, levels=["fail", "pass"])
    with pytest.raises(StatsError, match="outside"):
        label_sample(grades, 10, strategy="uncertain")
    # raw grades with their scale read as the normalised scores
    pd.testing.assert_frame_equal(
        corrected_mean(grades, labels, levels=["fail", "pass"], scale=(1, 10)),
        corrected_mean(df, labels, levels=["fail", "pass"]),
    )
    with pytest.raises(StatsError, match=r"label_scores .* outside \[0, 1\]"):
        corrected_mean(df, labels, label_scores={"fail": 0, "pass": 2})


# 10. Rogan-Gladen undefined for one system: that row says so, the others stand
def test_rogan_gladen_undefined_for_one_system_does_not_sink_the_others():
    rng = np.random.default_rng(4)
    good, truth = population(rng, n_items=200, system="good")
    labels = [labels_for(label_sample(good, 40, seed=1), truth)]
    chance = good.assign(system="chance", score=rng.random(200) < 0.5)
    chance["score"] = chance["score"].astype(float)
    labels.append(
        labels_for(label_sample(chance, 40, seed=2), ~chance["score"].astype(bool).to_numpy())
    )
    table = corrected_mean(pd.concat([good, chance]), pd.concat(labels), levels=["fail", "pass"])
    rg = table[table["estimator"] == "Rogan-Gladen"].set_index("system")
    assert np.isfinite(rg.loc["good", "value"])
    assert np.isnan(rg.loc["chance", "value"])
    assert rg.loc["chance", "method"].startswith(
        "not estimable: the judge is no better than chance"
    )
    ppi = table[table["estimator"] == "PPI"].set_index("system")
    assert np.isfinite(ppi.loc["chance", "value"])


def test_rogan_gladen_below_zero_is_clipped_and_says_so():
    rng = np.random.default_rng(5)
    n = 300
    truth = np.zeros(n, dtype=bool)
    truth[:6] = True
    # a judge that fails most items, including the true passes it sees in the labels
    judged = np.where(rng.random(n) < 0.04, 1.0, 0.0)
    judged[:3] = 1.0
    df = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(n)], "score": judged})
    labels = pd.DataFrame(
        {
            "system": "m",
            "case_id": [f"c{i}" for i in range(0, 300, 3)],
            "level": np.where(truth[::3], "pass", "fail"),
        }
    )
    row = (
        corrected_mean(df, labels, levels=["fail", "pass"])
        .set_index("estimator")
        .loc["Rogan-Gladen"]
    )
    assert 0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1
    if "clipped" in row["method"]:
        assert "unclipped estimate -" in row["method"] or "unclipped estimate 0" in row["method"]


def test_a_stratified_plan_with_a_tiny_stratum_still_covers():
    # 300 items, the judge passes 2% of them: a stratified plan of 10 labels takes 5 from the
    # ~6 judged passes and 5 from the ~294 judged failures, whose labels then carry ~50 times
    # the weight. The interval used n - 1 degrees of freedom and a pseudo-item of weight 1
    # next to them: it covered 83% (nominal 95%)
    rng = np.random.default_rng(5)
    hits = []
    for _ in range(120):
        judge = rng.random(300) < 0.02
        truth = np.where(judge, rng.random(300) < 0.7, rng.random(300) < 0.3)
        df = pd.DataFrame(
            {"system": "m", "case_id": [f"c{i}" for i in range(300)], "score": judge * 1.0}
        )
        plan = label_sample(df, 10, strategy="stratified", seed=int(rng.integers(1 << 30)))
        row = (
            corrected_mean(df, labels_for(plan, truth), levels=["fail", "pass"])
            .set_index("estimator")
            .loc["PPI"]
        )
        hits.append(row["ci_low"] <= truth.mean() <= row["ci_high"])
    assert np.mean(hits) >= 0.9
