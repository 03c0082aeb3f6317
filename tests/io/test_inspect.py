"""inspect_ai logs made in the test by running inspect_ai itself (a tiny task, 3 epochs, two
scorers) against the loopback server through its OpenAI-compatible provider."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jevalkit import io
from jevalkit.errors import ImportFormatError
from jevalkit.metrics import consistency, pass_rate

TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate


@task
def tiny():
    return Task(
        dataset=[Sample(input=f"Question {i}", target="User 10", id=f"s{i}") for i in range(4)],
        solver=generate(),
        scorer=[match(location="any"), includes()],
        epochs=3,
    )
"""


def inspect_eval(server, tmp_path: Path, *extra: str) -> Path:
    (tmp_path / "task.py").write_text(TASK)
    logs = tmp_path / "logs"
    env = {
        **os.environ,
        "LOCAL_BASE_URL": server.base_url,
        "LOCAL_API_KEY": "x",
        "INSPECT_LOG_DIR": str(logs),
        "INSPECT_DISPLAY": "none",
    }
    cmd = [
        sys.executable,
        "-m",
        "inspect_ai",
        "eval",
        "task.py",
        "--model",
        "openai-api/local/m",
        "--temperature",
        "1",
        *extra,
    ]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    (log,) = [p for p in logs.iterdir() if p.suffix in (".eval", ".json")]
    return log


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from openai_server import OpenAIServer

    with OpenAIServer() as server:
        eval_log = inspect_eval(server, tmp_path_factory.mktemp("eval"))
        json_log = inspect_eval(server, tmp_path_factory.mktemp("json"), "--log-format", "json")
    return eval_log, json_log


def test_one_row_per_sample_epoch_and_scorer(logs):
    eval_log, _ = logs
    df = io.read(eval_log)
    assert io.detect_format(eval_log) == "inspect"
    assert len(df) == 4 * 3 * 2 and sorted(df["repeat"].unique()) == [0, 1, 2]
    assert set(df["probe"]) == {"tiny/match", "tiny/includes"}
    assert set(df["model"]) == {"openai-api/local/m"} and set(df["model_resolved"]) == {"m-2026-01"}
    assert df["score"].isin([0.0, 1.0]).all() and (df["passed"] == (df["score"] == 1.0)).all()
    assert {s["scorer"] for s in df["source"]} == {"match", "includes"}
    assert set(df["case_id"]) == {"s0", "s1", "s2", "s3"} and (df["gold"] == "User 10").all()
    assert df["output"].str.startswith("[").all()


def test_each_row_keeps_its_samples_input_and_target(logs):
    """Issue 26.8: compare pages and reports show what the sample asked and expected."""
    df = io.read(logs[0])
    inputs = df["source"].map(lambda s: s["input"])
    assert (inputs == "Question " + df["case_id"].str[1:]).all()
    assert (df["source"].map(lambda s: s["target"]) == "User 10").all()


def test_the_builtin_reader_agrees_with_inspects_own(logs):
    eval_log, json_log = logs
    key = ["probe", "case_id", "repeat"]
    ours = io.read(eval_log, engine="builtin").sort_values(key).reset_index(drop=True)
    theirs = io.read(eval_log, engine="inspect").sort_values(key).reset_index(drop=True)
    for column in ["score", "passed", "output", "gold", "model", "model_resolved"]:
        assert ours[column].tolist() == theirs[column].tolist(), column
    from_json = io.read(json_log, engine="builtin")
    assert len(from_json) == 24 and io.detect_format(json_log) == "inspect"


def test_statistics_inspect_does_not_give(logs):
    df = io.read(logs[0])
    rates = pass_rate(df, by="probe").set_index("probe")
    # epochs are repeats of a case: clustered, never pooled as if 12 independent samples
    assert rates.loc["tiny/match", "n_cases"] == 4 and rates.loc["tiny/match", "n"] == 12
    agreement = consistency(df, by="probe", level=None).set_index("probe")
    assert agreement.loc["tiny/match", "k"] == 3


def test_a_damaged_archive_is_one_line(logs, tmp_path):
    data = logs[0].read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImportFormatError, match=r"cut.eval"):
        io.read(cut, format="inspect")
    with pytest.raises(ImportFormatError, match=r"cut.eval"):
        io.read(cut, format="inspect", engine="builtin")


def test_a_score_of_an_unknown_type_is_refused_naming_the_sample(tmp_path):
    import json

    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "m"},
        "samples": [{"id": "x1", "epoch": 1, "scores": {"judge": {"value": [1, 2]}}}],
    }
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(log))
    with pytest.raises(
        ImportFormatError,
        match=r"odd.json: sample 'x1' epoch 1 scorer 'judge': score value \[1, 2\]",
    ):
        io.read(path, format="inspect", engine="builtin")
    log["samples"][0]["scores"] = {"judge": {"value": {"f1": 0.5, "exact": 1}}}
    path.write_text(json.dumps(log))
    df = io.read(path, format="inspect", engine="builtin")
    assert sorted(df["probe"]) == ["t/judge/exact", "t/judge/f1"]
    assert np.allclose(sorted(df["score"]), [0.5, 1.0])
