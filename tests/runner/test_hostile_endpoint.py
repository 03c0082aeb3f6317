"""Whatever an endpoint sends becomes a row; nothing it sends stops the run or blocks a resume.

Each test reproduces a defect found by a hostile review (issue 19) against the loopback server.
"""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest

import jevalkit
from jevalkit.metrics import mean_score, pass_rate
from jevalkit.runner import run

ODD = [
    "usage_list",
    "tokens_text",
    "tokens_nan",
    "tokens_inf",
    "model_dict",
    "surrogate",
    "deep",
    "bigint",
]


def run_here(server, tmp_path, **options):
    options.setdefault("progress", False)
    options.setdefault("out", tmp_path / "results.jsonl")
    options.setdefault("base_url", server.base_url)
    options.setdefault("cache_dir", tmp_path / "cache")
    return run("schema-ten-records", options.pop("model", "m"), **options).rows


@pytest.mark.parametrize("fault", ODD)
def test_an_odd_answer_among_good_ones_becomes_a_row_and_the_file_stays_usable(
    openai_server, tmp_path, fault
):
    openai_server.faults["m"] = ["ok", fault, "ok", "ok"]
    df = run_here(openai_server, tmp_path, repeats=4, concurrency=1)
    assert len(df) == 4 and df["repeat"].tolist() == [0, 1, 2, 3]
    odd = df[df["repeat"] == 1].iloc[0]
    if fault == "deep":
        assert odd["error"]["type"] == "invalid_response"
    elif fault == "bigint":
        assert not odd["passed"] and odd["score"] == 0.0  # scored, not raised
    elif fault == "surrogate":
        assert "\ud800" in odd["output"] and not odd["passed"]
    else:
        assert odd["error"] is None and odd["passed"]
    if fault.startswith("tokens"):
        assert pd.isna(odd["prompt_tokens"])  # an invalid number is stored as null
    if fault == "model_dict":
        assert pd.isna(odd["model_resolved"])
    # the file reads back, metrics work on it, and a resume sends nothing and does not crash
    lines = (tmp_path / "results.jsonl").read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)
    assert pass_rate(df).loc[0, "n"] >= 3 and mean_score(df).loc[0, "value"] <= 1
    sent = len(openai_server.requests)
    again = run_here(openai_server, tmp_path, repeats=4, concurrency=1)
    assert len(openai_server.requests) == sent and len(again) == 4


def test_odd_answers_are_cached_only_once_parsed_and_resume_from_the_cache(openai_server, tmp_path):
    openai_server.faults["m"] = ["surrogate", "bigint", "tokens_nan"]
    run_here(openai_server, tmp_path, repeats=3, concurrency=1, out=tmp_path / "a.jsonl")
    df = run_here(openai_server, tmp_path, repeats=3, concurrency=1, out=tmp_path / "b.jsonl")
    assert df["cached"].all() and len(openai_server.requests) == 3
    assert df["error"].isna().all()


def test_a_large_wrong_answer_keeps_a_bounded_list_of_violations(openai_server, tmp_path):
    openai_server.huge_bytes = 2 * 1024 * 1024  # a million ones: a million violations
    openai_server.faults["m"] = ["huge"]
    df = run_here(openai_server, tmp_path)
    errors = df.loc[0, "score_errors"]
    assert not df.loc[0, "passed"] and len(errors) <= 51
    assert errors[-1].startswith("... and ") and "more violation" in errors[-1]
    assert len(json.dumps(errors)) < 20_000  # the output is kept whole; its report is bounded


@pytest.mark.parametrize("fault", ["huge", "gzip_bomb"])
def test_a_body_over_the_size_cap_is_an_error_row(openai_server, tmp_path, fault):
    openai_server.huge_bytes = 3 * 1024 * 1024
    openai_server.faults["m"] = [fault]
    df = run_here(openai_server, tmp_path, max_response_bytes=1024 * 1024)
    assert df.loc[0, "error"]["type"] == "too_large"
    assert "larger than 1,048,576 bytes" in df.loc[0, "error"]["message"]


def test_timeout_bounds_the_whole_request_not_each_read(openai_server, tmp_path):
    openai_server.drip_s = 0.2  # a valid answer, one byte every 0.2 s: minutes in total
    openai_server.faults["m"] = ["drip"]
    started = time.monotonic()
    df = run_here(openai_server, tmp_path, timeout=1.5, max_retries=0)
    # a per-read timeout would wait out the whole drip (about 2 minutes); a generous bound
    # that a busy machine cannot break still tells the two apart
    assert time.monotonic() - started < 60
    assert df.loc[0, "error"]["type"] == "timeout"


def test_resume_refuses_a_file_written_against_another_endpoint(tmp_path):
    from openai_server import OpenAIServer

    with OpenAIServer() as first, OpenAIServer() as second:
        run_here(first, tmp_path, repeats=3)
        with pytest.raises(
            jevalkit.ResultsError, match=r"written against http://127\.0\.0\.1:\d+/v1"
        ):
            run_here(second, tmp_path, repeats=3)
        assert len(second.requests) == 0
        # the default results file names the endpoint, so the same command does not collide
        a = jevalkit.runner.default_results_path("p", "m", first.base_url)
        b = jevalkit.runner.default_results_path("p", "m", second.base_url)
        assert a != b


def test_a_nan_label_matches_its_own_rows_in_the_summary(openai_server, tmp_path):
    run_here(openai_server, tmp_path, repeats=2, label="T=0")
    df = run_here(openai_server, tmp_path, repeats=2)  # unlabelled rows beside labelled ones
    assert len(df) == 2 and df["label"].isna().all()
    from jevalkit.metrics import run_summary

    assert run_summary(df)["n"].tolist() == [2]


def test_a_cache_that_cannot_be_written_is_dropped_with_one_warning(openai_server, tmp_path):
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="response cache at .* failed") as caught:
        df = run_here(openai_server, tmp_path, repeats=5, cache_dir=blocker)
    assert len(df) == 5 and df["error"].isna().all()
    assert sum("response cache" in str(w.message) for w in caught) == 1
