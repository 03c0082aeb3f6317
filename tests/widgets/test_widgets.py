"""Widget state (traitlets) after updates, and the static fallback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import traitlets

from jevalkit.judges import Judgment
from jevalkit.widgets import CompareView, LevelDistribution, ResultsBrowser


def test_level_distribution_marks_verdict_and_expected_level():
    w = LevelDistribution([0.02, 0.05, 0.13, 0.30, 0.50])
    assert w.verdict == "4" and w.expected_level == pytest.approx(3.21)
    w.probs = [0.6, 0.2, 0.1, 0.05, 0.05]
    assert w.verdict == "0" and w.expected_level == pytest.approx(0.75)
    assert "integer verdict <b>0</b>" in w.children[0].value
    with pytest.raises(traitlets.TraitError, match="sum to 1"):
        w.probs = [0.5, 0.6]


def test_level_distribution_uses_the_judges_expected_level_and_says_how_levels_are_numbered():
    """Issue 34: one expected level, the judge's (sum p_i x i, levels numbered 0.. as the judge
    file lists them; score = expected / top), in judgments, reports and this widget alike. Issue
    26.4's confusion (labels 1-5 beside a 0-based mean) is answered by saying the numbering."""
    probs, labels = [0.05, 0.05, 0.1, 0.5, 0.3], ["1", "2", "3", "4", "5"]
    w = LevelDistribution(probs, levels=labels)
    judgment = Judgment.from_probs(labels, probs, coverage=1.0, method="logprobs")
    assert w.verdict == "4" and w.expected_level == pytest.approx(judgment.expected_level)
    assert w.expected_level == pytest.approx(2.95)
    shown = w.children[0].value
    assert "integer verdict <b>4</b> · expected level 2.95 · score 0.74" in shown
    assert "levels numbered 0 = &#x27;1&#x27; ... 4 = &#x27;5&#x27;" in shown
    words = LevelDistribution([0.3, 0.7], levels=["safe", "unsafe"]).children[0].value
    assert "expected level 0.70 · score 0.70 (levels numbered 0 = &#x27;safe&#x27;" in words


def test_level_distribution_static_fallback():
    bundle = LevelDistribution([0.3, 0.7], levels=["safe", "unsafe"])._repr_mimebundle_()
    assert "text/html" in bundle and "unsafe" in bundle["text/html"] and "text/plain" in bundle


def test_results_browser_filters():
    df = pd.DataFrame(
        {
            "probe": ["p"] * 4,
            "model": ["a", "a", "b", "b"],
            "repeat": [0, 1, 0, 1],
            "passed": [True, False, False, False],
            "output": ["o1", "o2", "o3", "o4"],
            "score_errors": [[], ["$[9].id: bad"], [], []],
            "checks": [[], [{"id": "x", "text": "ids are integers", "passed": False}], [], []],
        }
    )
    b = ResultsBrowser(df)
    assert len(b.selection) == 4
    b.model.value = "a"
    b.passed_filter = "failed"
    assert b.selection["output"].tolist() == ["o2"]
    assert "ids are integers" in b.detail.value and "$[9].id: bad" in b.detail.value


def test_compare_view_difference():
    a = pd.DataFrame({"probe": "p", "repeat": range(4), "passed": [True] * 4, "score": [1.0] * 4})
    b = a.assign(passed=[True, False, False, False], score=[1.0, 0.0, 0.0, 0.0])
    v = CompareView(a, b, names=("x", "y"), case="probe")
    assert v.difference == pytest.approx(0.75) and "score difference x − y: +0.750" in v.value
    assert "one case: its repeats compared unpaired" in v.value


def test_compare_view_pairs_by_case_with_the_librarys_interval():
    """Issue 26.5: it paired by repeat (n = 12 for 4 cases) and gave a third interval."""
    from jevalkit.metrics import compare

    rng = np.random.default_rng(3)
    rows = [
        {"case_id": f"c{c}", "repeat": r, "score": float(rng.random()), "passed": True}
        for c in range(4)
        for r in range(3)
    ]
    a = pd.DataFrame(rows)
    b = a.assign(score=a["score"] * 0.7)
    v = CompareView(a, b, names=("x", "y"), case="case_id")
    both = pd.concat([a.assign(system="x"), b.assign(system="y")])
    row = compare(both, "y", by=None, case="case_id", metrics=["mean_score"]).iloc[0]
    assert v.n_cases == 4 == row["n_paired"]
    assert v.difference == pytest.approx(row["delta"])
    assert f"{row['ci_low']:+.3f} to {row['ci_high']:+.3f}, 4 case(s) both ran" in v.value
    assert "paired t interval over 4 cases" in v.value


def test_names_and_outputs_are_escaped_and_every_widget_has_a_static_fallback():
    evil = "<img src=x onerror=alert(1)>"
    a = pd.DataFrame(
        {
            "probe": "p",
            "repeat": range(3),
            "passed": [True, True, False],
            "score": [1.0, 1.0, 0.0],
            "model": evil,
            "output": evil,
        }
    )
    view = CompareView(a, a, names=(evil, "b"), case="probe")
    browser = ResultsBrowser(a)
    for bundle in (view._repr_mimebundle_(), browser._repr_mimebundle_()):
        assert "<img" not in bundle["text/html"] and "&lt;img" in bundle["text/html"]
    assert "<img" not in browser.detail.value


def test_labeler_takes_label_samples_output_directly(tmp_path):
    """Issue 26.10: label_sample's rows had no output, so the Labeler refused them."""
    from jevalkit.labels import label_sample, read_labels
    from jevalkit.widgets import Labeler

    judged = pd.DataFrame(
        {
            "system": "m",
            "probe": "tiny/includes",
            "case_id": [f"s/{i}" for i in range(6) for _ in range(2)],
            "repeat": [0, 1] * 6,
            "score": [0.2, 0.4] * 3 + [0.9, 0.7] * 3,
            "output": [f"<i>answer {i}.{r}</i>" for i in range(6) for r in range(2)],
            "error": None,
            "source": [
                {"input": f"question {i}", "target": "t"} for i in range(6) for _ in range(2)
            ],
        }
    )
    plan = label_sample(judged, 3, seed=1)
    lab = Labeler(plan, levels=["bad", "good"], out=tmp_path / "l.jsonl", labeller="ann")
    first = plan.iloc[0]["case_id"]
    i = first.split("/")[1]
    assert f"&lt;i&gt;answer {i}.0&lt;/i&gt;" in lab.card.value
    assert f"question {i}" in lab.card.value
    lab.press("2")
    labels = read_labels(tmp_path / "l.jsonl")
    assert labels["case_id"].tolist() == [first]
    assert labels["sampling_probability"].tolist() == [pytest.approx(0.5)]
