"""The judge_cascade notebook, and judge_quality's level sets, rendered through the report
machinery; their headline numbers are the library's."""

from __future__ import annotations

import math

import pytest

from jevalkit import io
from jevalkit._paths import data_dir
from jevalkit.labels import calibrate_cascade, judged_level_sets, read_labels
from jevalkit.reports import run_report

EXAMPLES = data_dir() / "examples"


@pytest.fixture(scope="module")
def example():
    df = io.read_source(EXAMPLES / "cascade_judged.jsonl")
    return df, read_labels(EXAMPLES / "cascade_labels.jsonl")


def test_the_notebook_on_the_bundled_example_says_what_the_library_says(tmp_path, example):
    report = run_report("judge_cascade", out=tmp_path)
    numbers = report.numbers()
    df, lab = example
    cascade = calibrate_cascade(df, lab)  # ordered by cost: small-judge, then large-judge
    assert numbers["cascade"]["judges"] == "small-judge, large-judge"
    assert numbers["cascade"]["guarantee"] == cascade.guarantee
    assert numbers["cascade"]["coverage_calibration"] == pytest.approx(
        cascade.scalars()["coverage_calibration"]
    )
    # JSON has no inf: a judge certified for nothing is null in the headline
    got = [math.inf if s["threshold"] is None else s["threshold"] for s in numbers["stages"]]
    assert got == pytest.approx(list(cascade.thresholds))
    people = cascade.summary(df, label_cost_usd=0.5).set_index("stage").loc["person", "share"]
    assert numbers["people_share"] == pytest.approx(people)
    band = cascade.oracle_band()
    assert [b["oracle"] for b in numbers["oracle_band"]] == pytest.approx(band["oracle"].tolist())
    total = numbers["summary"][-1]
    summary = cascade.summary(df, label_cost_usd=0.5).iloc[-1]
    assert total["cost_usd"] == pytest.approx(summary["cost_usd"])
    # the small judge is certified for nothing here, so it is not asked: the large judge on every
    # item, and people for what it leaves
    assert total["cost_judges"] <= total["cost_last_judge"] < total["cost_people"] == 0.5
    people = int((cascade.apply(df)["decided_by"] == "person").sum())
    assert numbers["queue"]["n_items"] == people
    html = report.html.read_text()
    assert "data:image/png" in html and "Labeler" in html


def test_parameters_reach_the_calibration(tmp_path, example):
    report = run_report(
        "judge_cascade",
        parameters={"target": 0.8, "confidence": 0.8, "judges": ["large-judge"]},
        out=tmp_path,
    )
    numbers = report.numbers()
    df, lab = example
    cascade = calibrate_cascade(
        df, lab, judges=["large-judge"], target_agreement=0.8, confidence_level=0.8
    )
    assert numbers["cascade"]["judges"] == "large-judge"
    assert [s["threshold"] for s in numbers["stages"]] == pytest.approx(list(cascade.thresholds))


def test_the_judge_report_shows_level_sets_when_labels_are_given(tmp_path, example):
    report = run_report(
        "judge_quality",
        results=EXAMPLES / "cascade_judged.jsonl",
        parameters={"labels": str(EXAMPLES / "cascade_labels.jsonl"), "coverage": 0.8},
        out=tmp_path,
    )
    df, lab = example
    shown = {s["judge"]: s for s in report.numbers()["level_sets"]}
    for judge in ("small-judge", "large-judge"):
        expected = judged_level_sets(df, lab, judge=judge, coverage=0.8).scalars()
        assert shown[judge]["mean_size"] == pytest.approx(expected["mean_size"])
        assert shown[judge]["n_calibration"] == 400
    assert "80% level set" in report.html.read_text()
    plain = run_report("judge_quality", out=tmp_path / "plain")  # no labels: no sets
    assert "level_sets" not in plain.numbers()
    assert not math.isnan(plain.numbers()["quality"][0]["mae"])


def test_hostile_case_ids_and_judge_names_are_escaped_in_the_level_sets(tmp_path):
    import json

    evil = '<img src=x onerror="alert(1)">'
    judged, labels = tmp_path / "judged.jsonl", tmp_path / "labels.jsonl"
    for name, path in (("cascade_judged.jsonl", judged), ("cascade_labels.jsonl", labels)):
        rows = [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines()]
        for row in rows:
            row["case_id"] = evil + row["case_id"]
            if "model" in row:
                row["model"] = evil + row["model"]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = run_report(
        "judge_quality", results=judged, parameters={"labels": str(labels)}, out=tmp_path / "r"
    )
    html = report.html.read_text()
    assert "level set" in html and evil not in html


def test_the_notebook_renders_the_embedded_two_judge_run(tmp_path):
    """The committed run of data/runs/cascade/: no judge is certified, so the queue is every
    answer, with the answers from the case file; the cost comparison still stands."""
    from jevalkit._paths import runs_dir

    run = runs_dir() / "cascade"
    files = [str(run / f"judge__security__local__{s}.jsonl") for s in ("chat", "completion")]
    report = run_report(
        "judge_cascade",
        parameters={
            "results": files,
            "labels": str(run / "labels.jsonl"),
            "cases": str(run / "answers.jsonl"),
        },
        out=tmp_path,
    )
    numbers = report.numbers()
    assert "every item goes to a person" in numbers["cascade"]["guarantee"]
    assert numbers["queue"]["n_items"] == 85
    total = numbers["summary"][-1]
    assert total["cost_judges"] == 0 < total["cost_last_judge"] < total["cost_people"]
    html = report.html.read_text()
    assert "my_list.reverse()" in html  # the answers people label are in the queue
