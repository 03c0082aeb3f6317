"""The committed two-judge run of the embedded model (data/runs/cascade/, see its README): the
files are what they say, and the cascade calibrated on them is the one the raw rows imply."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from jevalkit._paths import runs_dir
from jevalkit.cli import main
from jevalkit.labels import calibrate_cascade, load_cascade, read_labels
from jevalkit.results import read_results

RUN = runs_dir() / "cascade"
STYLES = ("chat", "completion")
SHA = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


@pytest.fixture(scope="module")
def run():
    rows = {s: read_results(RUN / f"judge__security__local__{s}.jsonl") for s in STYLES}
    return rows, read_labels(RUN / "labels.jsonl")


def test_the_files_are_a_real_two_judge_run_over_every_labelled_answer(run):
    rows, labels = run
    answers = {json.loads(line)["id"] for line in (RUN / "answers.jsonl").read_text().splitlines()}
    assert set(labels["case_id"]) == answers and len(labels) == len(answers) == 85
    for style, df in rows.items():
        assert set(df["case_id"]) == answers and len(df) == 85
        assert (df["model_sha256"] == SHA).all() and df["error"].isna().all()
        assert {p["prompt_style"] for p in df["parameters"]} == {style}
    # the judges differ in cost: the completion judge was priced as an API judge
    assert rows["chat"]["cost_usd"].sum() == 0 < rows["completion"]["cost_usd"].min()
    assert rows["chat"]["prompt_tokens"].mean() < rows["completion"]["prompt_tokens"].mean()


def test_the_cascade_is_what_the_raw_rows_imply(run, tmp_path):
    """Recomputed from the rows: each judge's first test covers the 29 most confident
    verdicts (two judges, each at 95%: 0.9^29 = 0.047 is the first perfect run below 0.05,
    more than a fifth of the 85 labels), their agreement with the labels and the exact
    binomial p-value of that test; neither is certified."""
    rows, labels = run
    person = labels.set_index("case_id")["level"]
    judged = pd.concat(rows.values(), ignore_index=True)
    cascade = calibrate_cascade(judged, labels)  # ordered by cost: chat first
    assert cascade.judges == ("local[prompt_style=chat]", "local[prompt_style=completion]")
    assert cascade.n_calibration == 85 and cascade.n_labels_unused == 0
    for style, stage in zip(STYLES, cascade.stages.itertuples(), strict=True):
        df = rows[style]
        conf = df["probs"].map(max).to_numpy()
        agree = (df["verdict"] == df["case_id"].map(person)).to_numpy()
        first = max(math.ceil(85 / 5), next(m for m in range(1, 100) if 0.9**m <= 0.05))
        assert first == 29
        top = np.argsort(-conf, kind="stable")[:first]
        k = int(agree[top].sum())
        assert f"the 29 most confident (the first test) agree {k / 29:.1%} ({k}/29" in stage.method
        assert stats.binomtest(k, 29, 0.9, alternative="greater").pvalue > 1 - stage.level
        assert stage.threshold == np.inf and stage.n_decided == 0
    assert "every item goes to a person" in cascade.guarantee
    assert (cascade.apply(judged)["decided_by"] == "person").all()
    # the command line says the same and writes a cascade that loads
    out = tmp_path / "cascade.json"
    files = [str(RUN / f"judge__security__local__{s}.jsonl") for s in STYLES]
    assert (
        main(
            [
                "cascade",
                "calibrate",
                *files,
                "--labels",
                str(RUN / "labels.jsonl"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert load_cascade(out).thresholds == cascade.thresholds
