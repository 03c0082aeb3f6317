"""Issue 51: a cascade whose stages start where a test can pass, whose judges' confidence is the
mean over k calls (k recorded and checked), and which checks that new items are like the
calibration items where it is used."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from jevalkit.errors import StatsError
from jevalkit.labels import calibrate_cascade, load_cascade


def rows_of(model, case_ids, probs, **extra):
    return pd.DataFrame(
        {"model": model, "system": "m", "case_id": case_ids, "probs": list(probs), **extra}
    )


def labels_for(case_ids, levels):
    return pd.DataFrame({"system": "m", "case_id": case_ids, "level": levels})


@pytest.mark.parametrize("n_judges", [1, 2, 3, 4])
@pytest.mark.parametrize("level", [0.8, 0.85, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("target", [0.8, 0.9, 0.95])
def test_every_number_of_judges_and_level_certifies_a_perfect_judge(n_judges, level, target):
    """A first judge that always agrees with people decides every labelled item once there are
    as many labels as a perfect run needs to pass at its stage's level, 1 - (1 - level) / judges
    (the fewest n with target ** n <= 1 - that level); with one label fewer, it decides nothing
    and says how many it would take."""
    stage_level = 1 - (1 - level) / n_judges
    need = next(n for n in range(1, 1000) if target**n <= 1 - stage_level)
    rng = np.random.default_rng(n_judges)
    truth = rng.random(need) < 0.5
    ids = [f"c{i}" for i in range(need)]
    sure = rng.uniform(0.6, 1.0, need)
    p_yes = np.where(truth, sure, 1 - sure)
    others = [rng.random(need) for _ in range(n_judges - 1)]
    judged = pd.concat(
        [rows_of("perfect", ids, np.c_[1 - p_yes, p_yes])]
        + [rows_of(f"other{j}", ids, np.c_[1 - r, r]) for j, r in enumerate(others)]
    )
    judges = ["perfect"] + [f"other{j}" for j in range(n_judges - 1)]
    labels = labels_for(ids, np.where(truth, "yes", "no"))
    kw = {"judges": judges, "levels": ["no", "yes"], "target_agreement": target}
    cascade = calibrate_cascade(judged, labels, confidence_level=level, **kw)
    assert not math.isinf(cascade.thresholds[0])
    assert cascade.stages["n_decided"].iloc[0] == need
    fewer = calibrate_cascade(judged, labels.iloc[:-1], confidence_level=level, **kw)
    assert all(math.isinf(t) for t in fewer.thresholds)
    assert f"even if all {need - 1} agreed" in fewer.stages["method"].iloc[0]
    assert f"label at least {need} (more if some disagree)" in fewer.stages["method"].iloc[0]


def test_three_judges_at_ninety_percent_certify_with_enough_labels():
    """The issue's case: three judges at 90% confidence, target 90%, 1,000 labels; the first
    judge is calibrated; the first test covers a fifth of the labels (not 30: 30 of 30 gave
    p = 0.042 > 0.1 / 3), and the first judge decides most of what it alone would."""
    rng = np.random.default_rng(5)
    n = 1000
    truth = rng.random(n) < 0.5
    ids = [f"c{i}" for i in range(n)]
    frames = []
    for judge, floor in (("a", 0.7), ("b", 0.8), ("c", 0.9)):
        sure = rng.uniform(0.5, 1.0, n)
        right = rng.random(n) < floor + (1 - floor) * (sure - 0.5) / 0.5
        p_yes = np.where(right == truth, sure, 1 - sure)
        frames.append(rows_of(judge, ids, np.c_[1 - p_yes, p_yes]))
    judged = pd.concat(frames)
    labels = labels_for(ids, np.where(truth, "yes", "no"))
    kw = {"levels": ["no", "yes"], "target_agreement": 0.9, "confidence_level": 0.9}
    cascade = calibrate_cascade(judged, labels, judges=["a", "b", "c"], **kw)
    alone = calibrate_cascade(judged, labels, judges=["a"], **kw)
    assert cascade.stages["first_test"].iloc[0] >= 200
    decided, alone_decided = cascade.stages["n_decided"].iloc[0], alone.stages["n_decided"].iloc[0]
    assert alone_decided > 300 and decided > 0.8 * alone_decided


def fewer_judges_case():
    # 25 labels: a perfect run passes at 90% (22 items) but not at 1 - 0.1 / 2 (29 items)
    ids = [f"c{i}" for i in range(25)]
    probs = np.c_[np.zeros(25), np.linspace(0.7, 1.0, 25)]
    probs[:, 0] = 1 - probs[:, 1]
    judged = pd.concat([rows_of("a", ids, probs), rows_of("b", ids, probs)])
    return judged, labels_for(ids, ["yes"] * 25)


def test_the_refusal_says_fewer_judges_would_help_only_when_it_would():
    judged, labels = fewer_judges_case()
    kw = {"levels": ["no", "yes"], "target_agreement": 0.9, "confidence_level": 0.9}
    two = calibrate_cascade(judged, labels, judges=["a", "b"], **kw)
    message = two.stages["method"].iloc[0]
    assert "even if all 25 agreed" in message and "with 1 judge(s) instead of 2" in message
    one = calibrate_cascade(judged, labels, judges=["a"], **kw)  # the advice, followed
    assert one.stages["n_decided"].iloc[0] == 25
    # 20 labels: no number of judges helps (a perfect run needs 22 even alone): not said
    few = calibrate_cascade(
        judged[judged["case_id"].isin(labels["case_id"][:20])],
        labels.iloc[:20],
        judges=["a", "b"],
        **kw,
    )
    assert "instead of" not in few.stages["method"].iloc[0]


# ---- k calls per item --------------------------------------------------------------------


def called(n=400, calls=2, seed=0):
    """Two judges over n items; the cheap one (the simulated judge of issue 51: right with
    probability expit(2 + 1.5 z) on an item of ease z, surer on easier items) asked `calls`
    times per item, its confidence varying from call to call; the strong one asked once;
    labels for half the items."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.5
    ids = np.array([f"c{i:03d}" for i in range(n)])
    ease = rng.normal(size=n)
    says_yes = truth == (rng.random(n) < 1 / (1 + np.exp(-(2 + 1.5 * ease))))  # right or not
    frames = []
    for r in range(calls):
        sure = 0.5 + 0.5 / (1 + np.exp(-2 * (ease + rng.normal(0, 0.6, n))))
        p_yes = np.where(says_yes, sure, 1 - sure)
        frames.append(rows_of("cheap", ids, np.c_[1 - p_yes, p_yes], repeat=r, cost_usd=0.0))
    sure = rng.uniform(0.6, 1.0, n)
    right = rng.random(n) < 0.7 + 0.3 * (sure - 0.6) / 0.4  # right more often when surer
    p_yes = np.where(right == truth, sure, 1 - sure)
    frames.append(rows_of("strong", ids, np.c_[1 - p_yes, p_yes], repeat=0, cost_usd=0.01))
    judged = pd.concat(frames, ignore_index=True)
    return judged, labels_for(ids[: n // 2], np.where(truth[: n // 2], "yes", "no"))


KW = {"judges": ["cheap", "strong"], "levels": ["no", "yes"], "target_agreement": 0.85}


def test_the_confidence_is_the_mean_of_k_calls_and_k_is_recorded(tmp_path):
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    assert cascade.calls == (2, 1) and cascade.stages["calls"].tolist() == [2, 1]
    assert cascade.steps[0].repeats == 2
    # the first stage's threshold is selective_threshold of the mean of the two calls
    cheap = judged[judged["model"] == "cheap"]
    mean_yes = cheap.assign(y=cheap["probs"].map(lambda p: p[1])).groupby("case_id")["y"].mean()
    conf = np.maximum(mean_yes, 1 - mean_yes)
    assert cascade.references[0] == tuple(
        float(f"{v:.8g}") for v in np.sort(conf[labels["case_id"]].to_numpy())
    )
    again = load_cascade(cascade.save(tmp_path / "c.json"))
    assert again.calls == (2, 1) and again.references == cascade.references
    record = json.loads((tmp_path / "c.json").read_text())
    assert [s["calls"] for s in record["steps"]] == [2, 1]
    pd.testing.assert_frame_equal(again.apply(judged), cascade.apply(judged))


def test_rows_with_another_number_of_calls_are_refused():
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    one_call = judged[~((judged["model"] == "cheap") & (judged["repeat"] == 1))]
    with pytest.raises(StatsError, match=r"with 1 call\(s\).*calibrated on 2 per item") as e:
        cascade.apply(one_call)
    assert "\n" not in str(e.value)
    extra = judged[judged["model"] == "cheap"].query("repeat == 0").assign(repeat=2)
    with pytest.raises(StatsError, match=r"with 3 call\(s\)"):
        cascade.apply(pd.concat([judged, extra]))
    # calibration refuses a judge whose items have different numbers of calls
    ragged = judged.drop(index=judged.index[(judged["model"] == "cheap")][:3])
    with pytest.raises(StatsError, match="has 1 to 2 calls per item"):
        calibrate_cascade(ragged, labels, **KW)


def test_an_item_with_a_failed_call_is_not_decided_by_that_judge():
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    before = cascade.apply(judged).set_index("case_id")
    sure = before.index[before["decided_by"] == "cheap"][0]
    failed = judged.copy()
    hit = (failed["model"] == "cheap") & (failed["case_id"] == sure) & (failed["repeat"] == 1)
    failed.loc[hit, "probs"] = None
    failed["error"] = np.where(hit, "timeout", None)
    after = cascade.apply(failed).set_index("case_id")
    assert after.loc[sure, "decided_by"] != "cheap"  # the mean of one call is not calibrated
    assert (after.drop(sure)["decided_by"] == before.drop(sure)["decided_by"]).all()


def test_a_pairwise_judges_two_orders_are_two_calls():
    """The anchor's simulated annotators: a pairwise judge's verdicts in both orders (mapped
    back to the systems) are averaged, k = 2 per repeat."""
    rng = np.random.default_rng(2)
    n = 300
    a_better = rng.random(n) < 0.5
    ids = [f"q{i}" for i in range(n)]
    ease = rng.normal(size=n)
    games = []
    for position in ("a_first", "b_first"):
        sure = 0.5 + 0.5 / (1 + np.exp(-2 * (ease + rng.normal(0, 0.6, n))))
        p_a = np.where(a_better, sure, 1 - sure)
        games.append(
            rows_of(
                "judge",
                ids,
                np.c_[1 - p_a, p_a],
                repeat=0,
                position=position,
                system_a="x",
                system_b="y",
            )
        )
    judged = pd.concat(games, ignore_index=True)
    labels = labels_for(ids[:200], np.where(a_better[:200], "a>b", "b>a"))
    cascade = calibrate_cascade(
        judged, labels, judges=["judge"], levels=["b>a", "a>b"], target_agreement=0.85
    )
    assert cascade.calls == (2,) and cascade.steps[0].repeats == 1
    with pytest.raises(StatsError, match=r"with 1 call\(s\).*calibrated on 2"):
        cascade.apply(judged[judged["position"] == "a_first"])


# ---- the shift check ---------------------------------------------------------------------


def shifted(judged, model, by):
    """The same rows with `model`'s confidence pulled toward 0.5 by `by` (a harder kind of
    item: the judge is less sure)."""
    out = judged.copy()
    mine = out["model"] == model
    out.loc[mine, "probs"] = out.loc[mine, "probs"].map(
        lambda p: [0.5 + (p[0] - 0.5) * by, 0.5 + (p[1] - 0.5) * by]
    )
    return out


def test_new_items_unlike_the_calibration_items_go_to_people():
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    assert cascade.shift(judged)["shifted"].tolist() == [False, False]
    harder = shifted(judged, "cheap", 0.6)
    table = cascade.shift(harder)
    assert table["shifted"].tolist() == [True, False]
    cheap = table.iloc[0]
    # pinned to scipy's two-sample Kolmogorov-Smirnov test on the same confidences
    new = cascade._verdicts(harder)[0]["confidence"]
    ref = stats.ks_2samp(cascade.references[0], new)
    assert cheap["statistic"] == pytest.approx(ref.statistic)
    assert cheap["p_value"] == pytest.approx(ref.pvalue) and cheap["level"] == 0.0005
    out = cascade.apply(harder)
    assert (out["decided_by"] == "person").all() and out["verdict"].isna().all()
    message = out["shift"].iloc[0]
    assert "stage 'cheap'" in message and "Kolmogorov-Smirnov" in message
    assert "median" in message and "every item goes to a person" in message
    assert "\n" not in message
    accepted = cascade.apply(harder, accept_shift=True)
    assert accepted["shift"].iloc[0].startswith("accepted: stage 'cheap'")
    assert (accepted["decided_by"] == "cheap").any()
    summary = cascade.summary(harder, label_cost_usd=0.5)
    assert summary.iloc[-1]["shift"] == message
    assert summary.set_index("stage").loc["person", "share"] == 1.0
    assert summary["shift_p_value"].iloc[0] < 0.0005
    assert len(cascade.for_people(harder, cases=[{"id": c} for c in judged["case_id"]])) == 400


def test_the_later_stage_is_checked_on_the_items_that_reach_it():
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    table = cascade.shift(shifted(judged, "strong", 0.5))
    assert table["shifted"].tolist() == [False, True]
    routed = cascade.apply(judged)
    assert table["n_new"].iloc[1] == int((routed["decided_by"] != "cheap").sum())


def test_items_like_the_labelled_ones_are_rarely_refused():
    """Fresh draws from the calibration's population: at 0.001 over two stages, none of 40
    fresh sets is refused (each is, at most, with probability 0.001)."""
    judged, labels = called(seed=1)
    cascade = calibrate_cascade(judged, labels, **KW)
    refused = sum(cascade.shift(called(seed=100 + i)[0])["shifted"].any() for i in range(40))
    assert refused == 0


def test_the_file_keeps_the_reference_small_and_refuses_edits_and_old_files(tmp_path):
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    path = cascade.save(tmp_path / "c.json")
    record = json.loads(path.read_text())
    kept = [json.dumps(step["calibration_confidence"]) for step in record["steps"]]
    n_kept = [len(step["calibration_confidence"]) for step in record["steps"]]
    assert n_kept == cascade.stages["n_judged"].tolist()  # every labelled item reaching it
    assert sum(len(text) for text in kept) < 13 * sum(n_kept)  # 8 digits and a separator
    record["steps"][0]["calibration_confidence"][0] = 0.999
    (tmp_path / "edited.json").write_text(json.dumps(record))
    with pytest.raises(StatsError, match="edited after calibration"):
        load_cascade(tmp_path / "edited.json")
    (tmp_path / "old.json").write_text(json.dumps({**record, "format": "jevalkit-cascade/1"}))
    with pytest.raises(StatsError, match=r"older jevalkit.*calibrate again"):
        load_cascade(tmp_path / "old.json")
    del record["steps"][0]["calls"]
    (tmp_path / "nocalls.json").write_text(json.dumps(record))
    with pytest.raises(StatsError, match=r"steps\[0\].calls: must be a whole number"):
        load_cascade(tmp_path / "nocalls.json")
    with pytest.raises(StatsError, match="accept_shift must be True or False"):
        cascade.apply(judged, accept_shift="yes")


def test_the_oracle_band_is_read_off_the_curve_with_exact_intervals():
    """Pinned to statsmodels' Clopper-Pearson interval ('beta') on each point of the curve."""
    judged, labels = called()
    cascade = calibrate_cascade(judged, labels, **KW)
    band = cascade.oracle_band().set_index("judge")
    for judge in cascade.judges:
        curve = cascade.curves[cascade.curves["judge"] == judge]
        k = np.round(curve["agreement"] * curve["n"]).astype(int)
        low, high = proportion_confint(k, curve["n"], alpha=0.1, method="beta")
        cov = curve["coverage"]
        assert band.loc[judge, "oracle_low"] == pytest.approx(cov[low >= 0.85].max())
        assert band.loc[judge, "oracle_high"] == pytest.approx(cov[high >= 0.85].max())
        assert band.loc[judge, "oracle"] == pytest.approx(cov[curve["agreement"] >= 0.85].max())
        assert band.loc[judge, "certified"] == pytest.approx(cov[curve["chosen"]].max())
    assert band.loc["cheap", "certified"] <= band.loc["cheap", "oracle"]
