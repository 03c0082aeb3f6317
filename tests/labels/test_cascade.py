"""Judge cascades (Trust or Escalate's cascaded selective evaluation) over judged rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from jevalkit.errors import JudgeError, StatsError
from jevalkit.labels import calibrate_cascade, load_cascade, read_labels
from jevalkit.stats import risk_controlled_threshold, selective_threshold
from jevalkit.widgets import Labeler


def judged_rows(seed=0, n=600, floors=(("cheap", 0.2), ("strong", 0.6))):
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.5
    rows = []
    for judge, floor in floors:
        sure = rng.uniform(0.5, 1.0, n)
        right = rng.random(n) < floor + (0.99 - floor) * (sure - 0.5) / 0.5
        called = np.where(right, truth, ~truth)
        p = np.where(called, sure, 1 - sure)
        for i in range(n):
            rows.append(
                {
                    "kind": "judge",
                    "probe": "security",
                    "version": 1,
                    "model": judge,
                    "label": "assistant",
                    "case_id": f"c{i:03d}",
                    "repeat": 0,
                    "probs": [1 - p[i], p[i]],
                    "output": f"answer {i}",
                    "cost_usd": 0.0 if judge == "cheap" else 0.001,
                }
            )
    labels = pd.DataFrame(
        {
            "system": "assistant",
            "case_id": [f"c{i:03d}" for i in range(300)],
            "level": np.where(truth[:300], "unsafe", "safe"),
            "sampling_probability": 0.5,
        }
    )
    return pd.DataFrame(rows), labels, truth


def stage_inputs(judged, truth, cascade):
    """Per stage, recomputed by hand from the rows: its threshold, and the confidence and
    agreement of the 300 labelled items that reach it."""
    person = np.where(truth[:300], "unsafe", "safe")
    remaining = np.arange(300)
    for judge, threshold in zip(cascade.judges, cascade.thresholds, strict=True):
        rows = judged[(judged["model"] == judge)].set_index("case_id")
        probs = np.array(rows.loc[[f"c{i:03d}" for i in remaining], "probs"].tolist())
        verdict = np.where(probs[:, 1] > probs[:, 0], "unsafe", "safe")
        conf = probs.max(axis=1)
        yield threshold, conf, verdict == person[remaining]
        remaining = remaining[conf < threshold]


def test_each_stage_is_selective_threshold_on_the_items_that_reach_it():
    judged, labels, truth = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    assert cascade.levels == ("safe", "unsafe")  # read from data/judges/security
    level = 1 - 0.1 / 2
    for threshold, conf, agree in stage_inputs(judged, truth, cascade):
        expected = selective_threshold(conf, agree, target_agreement=0.8, confidence_level=level)
        assert threshold == expected.threshold
    assert "union bound" in cascade.method and "90%" in cascade.guarantee


def test_apply_decides_lazily_and_escalates_the_rest():
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    out = cascade.apply(judged)
    assert set(out["decided_by"]) == {"cheap", "strong", "person"}
    cheap = out[out["decided_by"] == "cheap"]
    assert (cheap["confidence"] >= cascade.thresholds[0]).all()
    assert out.loc[out["decided_by"] == "person", "verdict"].isna().all()
    only_cheap = cascade.apply(judged[judged["model"] == "cheap"])
    waiting = only_cheap["decided_by"] == "pending: strong"
    assert waiting.sum() == len(out) - len(cheap)  # the strong judge is asked only for these
    summary = cascade.summary(judged, label_cost_usd=0.25)
    total = summary.iloc[-1]
    assert summary["n_items"].iloc[:-1].sum() == len(out)
    assert total["cost_judges"] == pytest.approx(0.001 * (1 - len(cheap) / len(out)))
    assert total["cost_usd"] < total["cost_people"] == 0.25


def test_the_people_queue_goes_into_the_labeler(tmp_path):
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    cases = [{"id": f"c{i:03d}", "output": f"the answer {i}"} for i in range(600)]
    plan = cascade.for_people(judged, cases=cases)
    assert len(plan) == int((cascade.apply(judged)["decided_by"] == "person").sum())
    assert (plan["sampling_probability"] == 1.0).all()
    # the labeller reads the judged answer, never the judge row's output (its verdict)
    assert (plan["output"] == "the answer " + plan["case_id"].str[1:].astype(int).astype(str)).all()
    with pytest.raises(StatsError, match="pass cases="):
        cascade.for_people(judged)
    widget = Labeler(plan, levels=list(cascade.levels), out=tmp_path / "labels.jsonl")
    assert len(widget.items) == len(plan)


def test_a_cascade_saves_and_loads(tmp_path):
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    again = load_cascade(cascade.save(tmp_path / "cascade.json"))
    assert again.thresholds == cascade.thresholds and again.levels == cascade.levels
    pd.testing.assert_frame_equal(again.apply(judged), cascade.apply(judged))
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(StatsError, match="not a cascade file"):
        load_cascade(tmp_path / "bad.json")


def test_a_hand_edited_or_unwritable_cascade_file_is_one_line(tmp_path):
    # found by a hostile review: these were tracebacks (KeyError, TypeError, FileNotFoundError)
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    (tmp_path / "a-file").write_text("")  # a missing folder is made; a file in the way is not
    with pytest.raises(StatsError, match="a-file is a file, not a folder"):
        cascade.save(tmp_path / "a-file" / "folder" / "c.json")
    record = json.loads(cascade.save(tmp_path / "c.json").read_text())
    emptied = {**record, "stages": [{}, {}]}  # stages are not in the digest
    (tmp_path / "stages.json").write_text(json.dumps(emptied))
    with pytest.raises(StatsError, match=r"stages\[0\] lacks judge"):
        load_cascade(tmp_path / "stages.json")
    bad_params = {
        **record,
        "steps": [{**record["steps"][0], "parameters": [1]}, record["steps"][1]],
    }
    (tmp_path / "params.json").write_text(json.dumps(bad_params))
    with pytest.raises(StatsError, match=r"steps\[0\].parameters: must be an object"):
        load_cascade(tmp_path / "params.json")


def test_a_declared_score_outside_zero_one_saves_and_loads(tmp_path):
    # a confidence column on its own scale (here 1-10) gives thresholds above 1
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(
        judged.assign(
            score10=judged["probs"].map(max) * 9 + 1,
            verdict=judged["probs"].map(lambda p: "unsafe" if p[1] > p[0] else "safe"),
        ),
        labels,
        judges=["cheap", "strong"],
        target_agreement=0.8,
        confidence_column="score10",
    )
    again = load_cascade(cascade.save(tmp_path / "c.json"))
    assert again.thresholds == cascade.thresholds
    assert any(1 < t < math.inf for t in cascade.thresholds)


def test_apply_refuses_rows_the_guarantee_does_not_cover():
    # found by a hostile review: another judge prompt, or more judgments per item than calibrated
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    with pytest.raises(StatsError, match="another judge prompt"):
        cascade.apply(judged.assign(probe="toxicity", version=3))
    again = pd.concat([judged, judged.assign(repeat=1)], ignore_index=True)
    with pytest.raises(StatsError, match=r"with 2 call.*calibrated on 1 per item"):
        cascade.apply(again)


def test_an_uninformative_judge_escalates_everything():
    judged, labels, _ = judged_rows(floors=(("cheap", 0.8), ("strong", 0.8)))
    judged = judged.copy()
    rng = np.random.default_rng(1)
    flat = rng.uniform(0.5, 1.0, len(judged))  # confidence unrelated to being right
    judged["probs"] = [
        [1 - f, f] if p[1] > 0.5 else [f, 1 - f] for f, p in zip(flat, judged["probs"], strict=True)
    ]
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.95)
    assert all(math.isinf(t) for t in cascade.thresholds)
    assert (cascade.apply(judged)["decided_by"] == "person").all()
    assert "cannot certify" in cascade.stages["method"].iloc[0]


def test_labels_that_cannot_calibrate_are_refused_in_one_line():
    judged, labels, _ = judged_rows()
    stratified = labels.assign(sampling_probability=np.where(labels.index < 100, 0.2, 0.8))
    with pytest.raises(StatsError, match="unequal probabilities"):
        calibrate_cascade(judged, stratified, judges=["cheap"])
    with pytest.raises(
        StatsError, match=r"judge 'gpt' has no rows; the judge rows hold \['cheap', 'strong'\]"
    ):
        calibrate_cascade(judged, labels, judges=["cheap", "gpt"])
    with pytest.raises(StatsError, match="once each"):
        calibrate_cascade(judged, labels, judges=["cheap", "cheap"])
    with pytest.raises(StatsError, match="levels"):
        calibrate_cascade(judged, labels.assign(level="maybe"), judges=["cheap"])
    twice = pd.concat(
        [
            labels.iloc[:1],
            labels.iloc[:1].assign(level="unsafe" if labels["level"].iloc[0] == "safe" else "safe"),
        ]
    )
    with pytest.raises(StatsError, match="disagree evenly"):
        calibrate_cascade(judged, pd.concat([twice, labels.iloc[1:]]), judges=["cheap"])
    with pytest.raises(StatsError, match="no labelled item"):
        calibrate_cascade(judged, labels.assign(case_id="x" + labels["case_id"]), judges=["cheap"])


def test_a_judge_always_confident_and_wrong_decides_nothing_and_the_next_one_still_works():
    judged, labels, truth = judged_rows()
    liar = judged["model"] == "cheap"
    person_says_unsafe = np.tile(truth, 2)[liar.to_numpy()]
    judged.loc[liar, "probs"] = pd.Series(
        [[0.0, 1.0] if not u else [1.0, 0.0] for u in person_says_unsafe],  # sure, always wrong
        index=judged.index[liar],
    )
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"])
    alone = calibrate_cascade(judged, labels, judges=["strong"])
    assert math.isinf(cascade.thresholds[0]) and "agree 0.0%" in cascade.stages["method"].iloc[0]
    # the liar passes everything on: the strong judge is calibrated on every labelled item,
    # at the union bound's level (so no lower than the strong judge alone)
    assert cascade.stages["n_reaching"].tolist() == [300, 300]
    assert cascade.thresholds[1] >= alone.thresholds[0]
    decided = cascade.apply(judged)["decided_by"]
    assert "cheap" not in set(decided) and not decided.str.startswith("pending").any()
    total = cascade.summary(judged, label_cost_usd=0.5).iloc[-1]
    assert total["cost_judges"] == pytest.approx(0.001)  # the strong judge on every item


def test_too_few_labels_or_labels_for_items_no_judge_saw():
    judged, labels, _ = judged_rows()
    few = calibrate_cascade(judged, labels.head(12), judges=["cheap", "strong"])
    assert all(math.isinf(t) for t in few.thresholds)
    assert "every item goes to a person" in few.guarantee
    # two judges, each at 95%: even 12 of 12 agreeing give p = 0.9^12 = 0.28 > 0.05
    assert "even if all 12 agreed" in few.stages["method"].iloc[0]
    assert "label at least 29 (more if some disagree)" in few.stages["method"].iloc[0]
    elsewhere = labels.head(40).assign(case_id=lambda d: "other-" + d["case_id"])
    mixed = calibrate_cascade(judged, pd.concat([labels, elsewhere]), judges=["cheap", "strong"])
    plain = calibrate_cascade(judged, labels, judges=["cheap", "strong"])
    assert mixed.n_labels_unused == 40 and mixed.n_calibration == 300
    assert mixed.thresholds == plain.thresholds and "40 label(s)" in mixed.method


def labelled_queue(tmp_path, judged, cascade):
    """The cascade's person queue labelled in the Labeler (each click writes a record)."""
    cases = [{"id": f"c{i:03d}", "output": f"the answer {i}"} for i in range(600)]
    plan = cascade.for_people(judged, cases=cases)
    widget = Labeler(plan, levels=list(cascade.levels), out=tmp_path / "queue-labels.jsonl")
    for _ in range(len(plan)):
        widget.label("safe")
    return plan, read_labels(tmp_path / "queue-labels.jsonl")


def test_the_cascades_own_person_queue_fed_back_as_labels_is_refused(tmp_path):
    # issue 39 review: the queue holds the items the judges were least sure of, labelled with
    # probability 1 each: "uniform", so only sampling_probability let it through
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    plan, queue = labelled_queue(tmp_path, judged, cascade)
    assert (queue["sampling_probability"] == 1.0).all() and (queue["strategy"] == "cascade").all()
    for fed in (queue, plan.assign(level="safe")):  # the labels file, or the plan itself
        with pytest.raises(StatsError) as caught:
            calibrate_cascade(judged, fed, judges=["cheap", "strong"])
        message = str(caught.value)
        assert "strategy 'cascade'" in message and "person queue" in message, message
        assert "strategy='random'" in message and "\n" not in message, message


@pytest.mark.parametrize("strategy", ["uncertain", "active", "stratified"])
def test_labels_of_items_chosen_by_the_judges_confidence_are_refused(strategy):
    judged, labels, _ = judged_rows()
    with pytest.raises(StatsError, match=f"strategy {strategy!r}.*strategy='random'"):
        calibrate_cascade(judged, labels.assign(strategy=strategy), judges=["cheap", "strong"])
    # labels drawn at random say so and are taken
    calibrate_cascade(judged, labels.assign(strategy="random"), judges=["cheap", "strong"])


def test_hand_picked_labels_of_the_least_confident_items_are_refused():
    # no provenance recorded (a labels file written by hand), but the labelled items are the
    # judge's least confident ones: a rank test against the unlabelled items refuses them
    judged, _, truth = judged_rows()
    cheap = judged[judged["model"] == "cheap"]
    unsure = cheap.assign(c=cheap["probs"].map(max)).nsmallest(200, "c")["case_id"]
    picked = pd.DataFrame(
        {
            "system": "assistant",
            "case_id": unsure.tolist(),
            "level": ["unsafe" if truth[int(c[1:])] else "safe" for c in unsure],
        }
    )
    with pytest.raises(StatsError, match="not a random sample of the judged items") as caught:
        calibrate_cascade(judged, picked, judges=["cheap", "strong"])
    assert "rank test" in str(caught.value) and "\n" not in str(caught.value)


def test_a_verdict_outside_the_levels_under_a_confidence_column_is_refused():
    judged, labels, _ = judged_rows()
    judged = judged.assign(
        score10=judged["probs"].map(max) * 9 + 1,
        verdict=judged["probs"].map(lambda p: "unsafe" if p[1] > p[0] else "safe"),
    )
    judged.loc[5, "verdict"] = "maybe"
    with pytest.raises(JudgeError) as caught:
        calibrate_cascade(judged, labels, judges=["cheap", "strong"], confidence_column="score10")
    message = str(caught.value)
    assert "'maybe'" in message and "['safe', 'unsafe']" in message, message


# the second kind of guarantee, conformal risk control (issue 51, item 4)


def expected(judged, labels, risk=0.06):
    return calibrate_cascade(
        judged, labels, judges=["cheap", "strong"], guarantee="expected", risk=risk
    )


def test_each_stage_is_risk_control_over_all_items_at_an_even_share_of_the_risk():
    judged, labels, truth = judged_rows()
    cascade = expected(judged, labels)
    for threshold, conf, agree in stage_inputs(judged, truth, cascade):
        want = risk_controlled_threshold(conf, agree, risk=0.03, n_calibration=300)
        assert threshold == want.threshold
    stages = cascade.stages
    assert stages["p_value"].isna().all() and stages["level"].isna().all()
    assert cascade.guarantee_kind == "expected" and cascade.risk == 0.06
    words = cascade.guarantee
    assert "in expectation over the calibration draw" in words and "NOT the agreement" in words
    assert "conformal risk control" in cascade.method


def test_the_default_kind_is_unchanged_and_says_so():
    judged, labels, _ = judged_rows()
    default = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    named = calibrate_cascade(
        judged,
        labels,
        judges=["cheap", "strong"],
        target_agreement=0.8,
        guarantee="high-probability",
    )
    assert default.thresholds == named.thresholds and default.digest == named.digest
    assert default.guarantee_kind == "high-probability" and default.risk is None


def test_the_kind_is_in_the_file_and_the_digest_and_old_files_read_as_the_default(tmp_path):
    judged, labels, _ = judged_rows()
    cascade = expected(judged, labels)
    again = load_cascade(cascade.save(tmp_path / "e.json"))
    assert again.guarantee_kind == "expected" and again.risk == 0.06
    assert again.thresholds == cascade.thresholds and again.guarantee == cascade.guarantee
    record = json.loads((tmp_path / "e.json").read_text())
    for edit in ({"guarantee_kind": "high-probability", "risk": None}, {"risk": 0.2}):
        (tmp_path / "edited.json").write_text(json.dumps({**record, **edit}))
        with pytest.raises(StatsError, match="edited after calibration"):
            load_cascade(tmp_path / "edited.json")
    (tmp_path / "odd.json").write_text(json.dumps({**record, "guarantee_kind": "typical"}))
    with pytest.raises(StatsError, match="guarantee_kind must be one of"):
        load_cascade(tmp_path / "odd.json")
    # a file written before the second kind (no guarantee_kind, no risk) is the default kind
    default = calibrate_cascade(judged, labels, judges=["cheap", "strong"], target_agreement=0.8)
    old = json.loads(default.save(tmp_path / "d.json").read_text())
    del old["guarantee_kind"], old["risk"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    read = load_cascade(tmp_path / "old.json")
    assert read.guarantee_kind == "high-probability" and read.digest == default.digest
    (tmp_path / "flipped.json").write_text(
        json.dumps({**old, "guarantee_kind": "expected", "risk": 0.1})
    )
    with pytest.raises(StatsError, match="edited after calibration"):
        load_cascade(tmp_path / "flipped.json")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"guarantee": "expected"}, "guarantee='expected' needs risk"),
        ({"risk": 0.05}, r"risk \(--risk\) is the 'expected' guarantee's"),
        ({"guarantee": "typical"}, "guarantee must be 'high-probability'"),
        ({"guarantee": "expected", "risk": 1.5}, "risk must lie strictly between 0 and 1"),
        (
            {"guarantee": "expected", "risk": 0.05, "target_agreement": 0.95},
            "takes risk alone",
        ),
    ],
)
def test_arguments_of_the_other_kind_are_refused_in_one_line(kwargs, message):
    judged, labels, _ = judged_rows()
    with pytest.raises(StatsError, match=message):
        calibrate_cascade(judged, labels, judges=["cheap", "strong"], **kwargs)


def test_too_few_labels_for_the_risk_sends_everything_to_people_and_says_how_many():
    judged, labels, _ = judged_rows()
    cascade = calibrate_cascade(
        judged, labels.head(30), judges=["cheap", "strong"], guarantee="expected", risk=0.05
    )
    assert cascade.thresholds == (np.inf, np.inf)
    assert "label at least 39 items" in cascade.stages["method"].iloc[0]
    assert cascade.guarantee.startswith("no judge could keep the expected share")
