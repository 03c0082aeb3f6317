"""Judge means corrected by human labels, checked against the published formulas computed here
independently (PPI: Angelopoulos et al. 2023; PPI++: Angelopoulos, Duchi & Zrnic 2023;
Rogan & Gladen 1978 with the delta method), with jevalkit's documented small-sample variance
floor, and against ppi-python (point estimates, lambda, and its interval once labels are many)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import ppi_py
import pytest
from scipy import stats

from jevalkit.errors import StatsError, UsageError
from jevalkit.labels import (
    corrected_difference,
    corrected_mean,
    label_budget,
    label_sample,
    read_labels,
)

Z = stats.norm.ppf(0.975)


def half_width(r, yhat_u, lam=1.0):
    """t_{n-1} sqrt(Var(lam Yhat_u) / N + S / (n (n + 1))), S the rectifier's squared deviations
    plus one pseudo-item split between +1 and -1 (the documented floor)."""
    n = r.size
    spread = np.sum((r - r.mean()) ** 2) + 0.5 * ((1 - r.mean()) ** 2 + (-1 - r.mean()) ** 2)
    judged = np.var(lam * yhat_u, ddof=1) / yhat_u.size if lam else 0.0
    return stats.t.ppf(0.975, n - 1) * math.sqrt(judged + spread / n / (n + 1))


def synthetic(n_items=500, n_labels=80, seed=0, systems=("m",)):
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for k, system in enumerate(systems):
        truth = rng.random(n_items) < 0.5 + 0.1 * k
        # a biased judge: passes 20% of the failures, misses 5% of the passes
        judged = np.where(truth, rng.random(n_items) > 0.05, rng.random(n_items) < 0.2)
        for i in range(n_items):
            rows.append({"system": system, "case_id": f"c{i}", "score": float(judged[i])})
        for i in range(n_labels):
            labels.append(
                {"system": system, "case_id": f"c{i}", "level": "pass" if truth[i] else "fail"}
            )
    return pd.DataFrame(rows), pd.DataFrame(labels), truth


def arrays(df, labels):
    y = (labels["level"] == "pass").astype(float).to_numpy()
    judged = df.set_index("case_id")["score"]
    yhat = judged.loc[labels["case_id"]].to_numpy(float)
    yhat_u = judged.drop(index=labels["case_id"]).to_numpy(float)
    return y, yhat, yhat_u


def test_ppi_agrees_with_the_published_formula_to_1e9():
    df, labels, _ = synthetic()
    y, yhat, yhat_u = arrays(df, labels)
    table = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator")
    theta = yhat_u.mean() + (y - yhat).mean()
    half = half_width(y - yhat, yhat_u)
    row = table.loc["PPI"]
    assert row["value"] == pytest.approx(theta, abs=1e-9)
    assert row["ci_low"] == pytest.approx(theta - half, abs=1e-9)
    assert row["ci_high"] == pytest.approx(theta + half, abs=1e-9)
    classical = table.loc["labels only"]
    assert classical["value"] == pytest.approx(y.mean(), abs=1e-12)
    assert classical["half_width"] == pytest.approx(half_width(y, yhat_u, lam=0.0), abs=1e-9)
    naive = table.loc["judge only"]
    allj = df["score"].to_numpy()
    t_half = stats.t.ppf(0.975, allj.size - 1) * allj.std(ddof=1) / math.sqrt(allj.size)
    assert naive["value"] == pytest.approx(allj.mean()) and naive["half_width"] == pytest.approx(
        t_half
    )


def test_power_tuned_lambda_matches_ppi_python_and_the_closed_form():
    df, labels, _ = synthetic(seed=3)
    y, yhat, yhat_u = arrays(df, labels)
    row = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator").loc["PPI++"]
    # the point ppi-python fits itself with lam=None, and the interval's formula at that lambda
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)
    assert row["value"] == pytest.approx(float(np.squeeze(point)), abs=1e-9)
    lam = row["lam"]
    assert row["half_width"] == pytest.approx(half_width(y - lam * yhat, yhat_u, lam), abs=1e-9)
    # the closed form: lambda = Cov(Y, Yhat) / ((1 + n/N) Var(Yhat over all))
    n, big_n = y.size, yhat_u.size
    cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    var = np.var(np.concatenate([yhat, yhat_u]), ddof=1)
    assert row["lam"] == pytest.approx(np.clip(cov / ((1 + n / big_n) * var), 0, 1), abs=1e-12)
    assert row["effective_labels"] > row["n_labelled"]  # the judge's scores were worth labels


def test_rogan_gladen_agrees_with_the_formula_and_its_delta_method_variance():
    df, labels, _ = synthetic(seed=5)
    y, yhat, _ = arrays(df, labels)
    row = (
        corrected_mean(df, labels, levels=["fail", "pass"])
        .set_index("estimator")
        .loc["Rogan-Gladen"]
    )
    se_ = np.mean(yhat[y == 1] == 1)
    sp_ = np.mean(yhat[y == 0] == 0)
    p = df["score"].mean()
    pi = (p + sp_ - 1) / (se_ + sp_ - 1)
    var = (
        p * (1 - p) / len(df)
        + pi**2 * se_ * (1 - se_) / (y == 1).sum()
        + (1 - pi) ** 2 * sp_ * (1 - sp_) / (y == 0).sum()
    ) / (se_ + sp_ - 1) ** 2
    assert row["value"] == pytest.approx(pi, abs=1e-12)
    assert row["half_width"] == pytest.approx(Z * math.sqrt(var), abs=1e-12)


def test_weights_from_sampling_probabilities_are_used():
    df, labels, _ = synthetic(seed=7)
    prob = np.where(np.arange(len(labels)) % 2 == 0, 0.1, 0.4)
    weighted = labels.assign(sampling_probability=prob)
    y, yhat, yhat_u = arrays(df, labels)
    row = corrected_mean(df, weighted, levels=["fail", "pass"]).set_index("estimator").loc["PPI"]
    w = 1 / prob
    # Hajek form (issue 23): the judge's mean over every judged item + the weighted rectifier
    everything = np.concatenate([yhat, yhat_u])
    hajek = everything.mean() + np.average(y - yhat, weights=w)
    assert row["value"] == pytest.approx(hajek, abs=1e-12)
    wn = w / w.sum() * w.size
    centre = np.average(y - yhat, weights=w)
    # the floor's pseudo-item weighs as much as a typical label (the mean of the squared
    # weights scaled to mean 1; it was the heaviest label's, 1.9 times this here); Kish's
    # effective n - 1 df
    floor = np.mean(wn**2) * 0.5 * ((1 - centre) ** 2 + (1 + centre) ** 2)
    spread = np.sum((wn * (y - yhat - centre)) ** 2) + floor
    var = spread / y.size / (y.size + 1) + np.var(everything, ddof=1) / everything.size
    t = stats.t.ppf(0.975, y.size**2 / np.sum(wn**2) - 1)
    # the labels' deviations from each candidate value (Fieller): the t interval shifted by
    # t^2 L / (n (n + 1)), L = sum w~^2 (r - r_w), and widened to sqrt(shift^2 + t^2 var)
    shift = t**2 * np.sum(wn**2 * (y - yhat - centre)) / y.size / (y.size + 1)
    half = math.sqrt(shift**2 + t**2 * var)
    assert shift != 0
    assert row["half_width"] == pytest.approx(half, abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (hajek - shift - half, hajek - shift + half), abs=1e-12
    )
    assert "Hajek form" in row["method"] and "weighted" in row["method"]


def test_with_many_labels_the_interval_is_ppi_pythons():
    df, labels, _ = synthetic(n_items=20000, n_labels=4000, seed=17)
    y, yhat, yhat_u = arrays(df, labels)
    row = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator").loc["PPI"]
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=1)
    assert row["half_width"] == pytest.approx((float(high[0]) - float(low[0])) / 2, rel=0.01)


def test_the_paired_difference_uses_labels_of_both_systems_on_the_same_cases():
    df, labels, _ = synthetic(systems=("a", "b"), seed=11)
    table = corrected_difference(df, labels, "a", "b", levels=["fail", "pass"]).set_index(
        "estimator"
    )
    wide = df.pivot(index="case_id", columns="system", values="score")
    lab = labels.assign(y=(labels["level"] == "pass").astype(float)).pivot(
        index="case_id", columns="system", values="y"
    )
    cases = lab.index
    y = (lab["b"] - lab["a"]).to_numpy()
    diff = wide["b"] - wide["a"]
    yhat, yhat_u = diff.loc[cases].to_numpy(), diff.drop(index=cases).to_numpy()
    theta = yhat_u.mean() + (y - yhat).mean()
    assert table.loc["PPI", "value"] == pytest.approx(theta, abs=1e-9)
    assert table.loc["PPI", "half_width"] == pytest.approx(half_width(y - yhat, yhat_u), abs=1e-9)
    assert table.loc["PPI", "system"] == "b - a"
    unpaired = labels[~((labels["system"] == "a") & labels["case_id"].isin(cases[:79]))]
    with pytest.raises(StatsError, match=r"1 case\(s\) have labels for both systems"):
        corrected_difference(df, unpaired, "a", "b", levels=["fail", "pass"])


def test_label_budget_predicts_the_width_the_labels_give():
    df, labels, _ = synthetic(n_items=2000, n_labels=40, seed=13)
    budget = label_budget(df, labels, 0.05, levels=["fail", "pass"]).iloc[0]
    now = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator").loc["PPI++"]
    assert budget["half_width_now"] == pytest.approx(now["half_width"], abs=1e-9)
    assert 40 < budget["labels_needed"] < budget["labels_needed_without_judge"]
    impossible = label_budget(df, labels, 0.001, levels=["fail", "pass"]).iloc[0]
    assert math.isnan(impossible["labels_needed"]) and "judge more items" in impossible["method"]


def test_bad_input_is_one_clear_error():
    df, labels, _ = synthetic()
    with pytest.raises(StatsError, match="cannot tell the label levels"):
        corrected_mean(df, labels)
    with pytest.raises(StatsError, match=r"label level\(s\) \['maybe'\]"):
        corrected_mean(df, labels.assign(level="maybe"), levels=["fail", "pass"])
    with pytest.raises(StatsError, match="were not judged"):
        corrected_mean(df, labels.assign(case_id="nope"), levels=["fail", "pass"])
    with pytest.raises(StatsError, match="at least 2"):
        corrected_mean(df, labels.head(1), levels=["fail", "pass"])
    chance = labels.assign(level=np.where(df["score"].head(80).to_numpy() > 0.5, "fail", "pass"))
    rg = corrected_mean(df, chance, levels=["fail", "pass"]).set_index("estimator")
    assert rg.loc["Rogan-Gladen", "method"].startswith("not estimable: the judge is no better")
    assert math.isnan(rg.loc["Rogan-Gladen", "value"])  # issue 23: a row, not an error


def test_label_samples_record_probabilities_that_match_the_draw():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "system": np.repeat(["a", "b"], 200),
            "case_id": np.tile([f"c{i}" for i in range(200)], 2),
            "score": np.tile(rng.random(200), 2),
        }
    )
    random_plan = label_sample(df, 20, strategy="random", seed=1)
    assert random_plan["case_id"].nunique() == 20 and len(random_plan) == 40  # both systems
    assert np.allclose(random_plan["sampling_probability"], 20 / 200)
    stratified = label_sample(df, 20, strategy="stratified", seed=1)
    passed = stratified.groupby("case_id")["judge_score"].first() >= 0.5
    assert passed.sum() == 10  # equal numbers from each verdict
    # the recorded probabilities are the inclusion probabilities: over many draws, the share of
    # plans holding a case matches its probability
    hits = pd.Series(0.0, index=[f"c{i}" for i in range(200)])
    probs = None
    for seed in range(400):
        plan = label_sample(df, 20, strategy="uncertain", seed=seed)
        hits[plan["case_id"].unique()] += 1
        probs = plan.groupby("case_id")["sampling_probability"].first() if probs is None else probs
    for case, p in probs.items():
        assert abs(hits[case] / 400 - p) < 4 * math.sqrt(p * (1 - p) / 400) + 1e-9


def test_labels_file_round_trip_and_errors(tmp_path):
    from jevalkit.errors import UsageError
    from jevalkit.labels import append_label, label_record

    path = tmp_path / "labels.jsonl"
    append_label(path, label_record("m", "c1", "pass", "ann", 0.5))
    append_label(path, label_record("m", "c2", None, "ann", 0.5))
    append_label(path, label_record("m", "c1", "fail", "ann", 0.5))
    got = read_labels(path)
    assert got[["case_id", "level"]].values.tolist() == [["c1", "fail"]]
    assert len(read_labels(path, include_skipped=True)) == 2
    with open(path, "a") as fh:
        fh.write(
            '{"case_id": "c3", "labeller": "ann", "level": "pass", "sampling_probability": 3}\n'
        )
    with pytest.raises(
        UsageError, match=r"labels.jsonl: line 4: sampling_probability must be in \(0, 1\]"
    ):
        read_labels(path)


def test_corrected_difference_refuses_labels_with_and_without_sampling_probability():
    # corrected_mean refused this mix; corrected_difference silently dropped the weights of the
    # half that recorded them and answered as if every label were a simple random draw
    rng = np.random.default_rng(1)
    truth = {s: rng.random(300) < p for s, p in (("a", 0.5), ("b", 0.7))}
    rows = [
        {"system": s, "case_id": f"c{i}", "score": float(t[i] ^ (rng.random() < 0.1))}
        for s, t in truth.items()
        for i in range(300)
    ]
    labels = pd.DataFrame(
        [
            {
                "system": s,
                "case_id": f"c{i}",
                "level": str(int(t[i])),
                "sampling_probability": 0.1 if i % 2 else None,
            }
            for s, t in truth.items()
            for i in range(80)
        ]
    )
    with pytest.raises(StatsError, match="some labels record a sampling_probability"):
        corrected_difference(pd.DataFrame(rows), labels, "a", "b", levels=["0", "1"])


@pytest.mark.parametrize("bad", [0.0, -0.5, 2.0, math.inf, "abc", True])
def test_a_labels_frame_with_a_sampling_probability_outside_0_1_is_refused(bad):
    """read_labels refuses a file's sampling_probability outside (0, 1], but a labels frame
    passed straight to corrected_mean was used as it stood: 0 made its weight infinite and
    every corrected row NaN, -0.5 a negative weight (numbers printed as if valid), 2.0 or inf
    a weight below 1 or 0, and "abc" a bare ValueError."""
    rng = np.random.default_rng(0)
    truth = rng.random(100) < 0.6
    df = pd.DataFrame(
        {"system": "m", "case_id": [f"c{i}" for i in range(100)], "score": truth.astype(float)}
    )
    labels = pd.DataFrame(
        {
            "system": "m",
            "case_id": [f"c{i}" for i in range(10)],
            "level": np.where(truth[:10], "pass", "fail"),
            "sampling_probability": [0.1] * 9 + [bad],
        }
    )
    with pytest.raises(UsageError, match=r"sampling_probability must be in \(0, 1\]"):
        corrected_mean(df, labels, levels=["fail", "pass"])
    # an integer column of ones (every label certain) is a valid one
    ok = labels.assign(sampling_probability=1)
    assert corrected_mean(df, ok, levels=["fail", "pass"])["value"].notna().all()
