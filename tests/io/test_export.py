"""``jevalkit export RESULTS --to every-eval-ever``: the record validates against the schema the
``every-eval-ever`` package ships (0.3.0), and its numbers are jevalkit's metrics, with the
standard error, the interval and its method, and the units they are over."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pandas as pd
import pytest
from every_eval_ever.schema import get_schema_version, schema_json
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from jevalkit import io, metrics
from jevalkit._paths import data_dir
from jevalkit.cli import main
from jevalkit.errors import ImportFormatError
from jevalkit.results import read_results
from jevalkit.runner import RunResult

RUNS = data_dir() / "runs"
UNITS = RUNS / "unit-conversion__v2__local.jsonl"


def validate(record: dict) -> None:
    validator = jsonschema.Draft7Validator(schema_json())
    errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def by_id(record: dict) -> dict[str, dict]:
    return {r["evaluation_result_id"]: r for r in record["evaluation_results"]}


def test_the_record_validates_against_the_packages_schema():
    assert get_schema_version().startswith("0.3.")
    record = io.export(UNITS)
    validate(record)
    assert record["schema_version"] == get_schema_version()
    assert sorted(by_id(record)) == [
        "unit-conversion@2/T=0/mean_score",
        "unit-conversion@2/T=0/pass_rate",
        "unit-conversion@2/T=1/mean_score",
        "unit-conversion@2/T=1/pass_rate",
    ]


def test_the_numbers_are_the_metrics_pinned_to_statsmodels_and_scipy():
    record = by_id(io.export(UNITS))
    t0 = record["unit-conversion@2/T=0/pass_rate"]["score_details"]
    assert t0["score"] == 0.25  # 10 of 40 cases
    ci = t0["uncertainty"]["confidence_interval"]
    low, high = proportion_confint(10, 40, alpha=0.05, method="wilson")
    assert (round(ci["lower"], 6), round(ci["upper"], 6)) == (round(low, 6), round(high, 6))
    assert ci["confidence_level"] == 0.95 and ci["method"] == "Wilson"
    se = t0["uncertainty"]["standard_error"]
    assert se["value"] == pytest.approx(stats.sem([1] * 10 + [0] * 30))  # one value per case
    assert se["method"] == "analytic: sd / sqrt(n) over cases (probe+version+case_id)"
    assert t0["uncertainty"]["num_samples"] == 40
    # at T=1 each case has 3 repeats: the unit is still the case, the interval clustered
    t1 = record["unit-conversion@2/T=1/pass_rate"]["score_details"]
    df = read_results(UNITS)
    table = metrics.pass_rate(df[df["label"] == "T=1"])
    assert t1["score"] == pytest.approx(4 / 120)
    assert t1["uncertainty"]["confidence_interval"]["lower"] == pytest.approx(table["ci_low"][0])
    assert "case-clustered" in t1["uncertainty"]["confidence_interval"]["method"]
    assert t1["uncertainty"]["num_samples"] == 40 and t1["details"]["n_rows"] == "120"
    per_case = df[df["label"] == "T=1"].groupby("case_id")["passed"].mean()
    assert t1["uncertainty"]["standard_error"]["value"] == pytest.approx(stats.sem(per_case))
    config = record["unit-conversion@2/T=1/pass_rate"]["generation_config"]["generation_args"]
    assert config == {"temperature": 1.0, "max_tokens": 16}


def test_one_case_gives_no_standard_error_and_says_so(tmp_path):
    df = read_results(UNITS)
    one = df[(df["label"] == "T=0") & (df["case_id"] == "km-to-m-1")]
    record = io.export(one)
    validate(record)
    details = by_id(record)["unit-conversion@2/T=0/mean_score"]["score_details"]
    assert "standard_error" not in details["uncertainty"]  # never a 0 for "unknown"
    assert details["details"]["standard_error"].startswith("not estimable from 1 unit(s)")


def test_the_command_writes_the_record_and_refuses_several_models(tmp_path, capsys):
    out = tmp_path / "x.json"
    argv = ["export", str(UNITS), "--to", "every-eval-ever", "--out", str(out)]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == f"{out}: 4 result(s) of local (schema 0.3.0)"
    validate(json.loads(out.read_text()))
    two = tmp_path / "two.jsonl"
    rows = [json.loads(line) for line in UNITS.read_text().splitlines()[:3]]
    rows[2]["model"] = "openai/gpt-4o-mini"
    two.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert (
        main(["export", str(two), "--to", "every-eval-ever", "--out", str(tmp_path / "y.json")])
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the results hold 2 models (local, openai/gpt-4o-mini)" in err
    assert "export each with --model NAME" in err and not (tmp_path / "y.json").exists()
    chosen = ["--model", "openai/gpt-4o-mini"]
    assert main(["export", str(two), "--to", "every-eval-ever", "--out", str(out), *chosen]) == 0
    assert json.loads(out.read_text())["model_info"]["id"] == "openai/gpt-4o-mini"


def test_rows_that_all_failed_are_refused_not_exported_as_zero():
    df = read_results(UNITS).head(4).copy()
    df["score"], df["passed"] = np.nan, pd.NA
    df["error"] = [{"type": "timeout", "message": "x", "status": None}] * 4
    with pytest.raises(ImportFormatError, match=r"has no scored row .* re-run its errors"):
        io.export(df)


def test_an_unknown_format_or_a_folder_is_one_line(tmp_path):
    with pytest.raises(ImportFormatError, match="--to 'eee': export formats are every-eval-ever"):
        io.export(UNITS, to="eee")
    with pytest.raises(ImportFormatError, match="is a folder; give a file name"):
        io.export(UNITS, out=tmp_path)


def test_one_row_writes_no_nan_interval_and_the_mean_counts_rows_not_cases(tmp_path):
    # one row: no interval for the mean (NaN bounds are not JSON, and the EEE validator refuses
    # them); n_rows counts rows for both metrics (mean_score's n is its cases)
    df = read_results(UNITS)
    t0 = df[df["label"] == "T=0"]
    record = io.export(t0.head(1), out=tmp_path / "one.json")
    validate(record)
    text = (tmp_path / "one.json").read_text()
    assert "NaN" not in text
    mean = by_id(record)["unit-conversion@2/T=0/mean_score"]["score_details"]
    assert "confidence_interval" not in mean["uncertainty"]
    assert mean["details"]["confidence_interval"].startswith("not estimable (")
    whole = by_id(io.export(t0))
    for metric in ("pass_rate", "mean_score"):
        details = whole[f"unit-conversion@2/T=0/{metric}"]["score_details"]["details"]
        assert details["n_rows"] == str(len(t0))


def test_the_id_names_the_developer_not_the_route():
    rows = read_results(UNITS).head(4).copy()
    rows["model_sha256"] = None
    for model, base_url, identity in (
        (
            "openrouter/meta-llama/llama-3.1-8b-instruct",
            "https://openrouter.ai/api/v1",
            {"id": "meta-llama/llama-3.1-8b-instruct", "inference_platform": "openrouter"},
        ),
        (
            "openai/gpt-4o-mini",
            "https://api.openai.com/v1",
            {"id": "openai/gpt-4o-mini", "inference_platform": "openai"},
        ),
        ("openai/gpt-oss-20b", "http://127.0.0.1:8000/v1", {"id": "openai/gpt-oss-20b"}),
    ):
        rows["model"], rows["base_url"] = model, base_url
        info = io.export(rows)["model_info"]
        assert {k: info.get(k) for k in identity} == identity, model
        assert "developer" not in info
    local = io.export(read_results(UNITS))["model_info"]  # the embedded model: a flat id
    assert (local["id"], local["developer"]) == ("gemma-3-270m-q4_k_m", "google")


def test_a_run_result_is_exported_and_written_as_its_rows(tmp_path):
    # every reader takes a run's result (a RowsResult) where it takes a results frame; so do
    # the writers: export and write_results take its rows
    frame = read_results(UNITS)
    run = RunResult(frame, stopped="stopped at the budget")
    assert io.export(run)["evaluation_results"] == io.export(frame)["evaluation_results"]
    written = read_results(io.write_results(run, tmp_path / "r.jsonl"))
    assert written["score"].tolist() == frame["score"].tolist()
