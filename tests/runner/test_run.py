"""The runner against a real loopback server: repeats, retries, faults, cache, resume, secrets."""

from __future__ import annotations

import json
import time
import warnings

import pandas as pd
import pytest

import jevalkit.runner as runner
from jevalkit.results import COLUMNS, read_results
from jevalkit.runner import run


def run_here(server, tmp_path, **options):
    options.setdefault("progress", False)
    options.setdefault("out", tmp_path / "results.jsonl")
    options.setdefault("base_url", server.base_url)
    return run("schema-ten-records", options.pop("model", "test/model"), **options).rows


def test_rows_have_every_documented_column_and_score(openai_server, tmp_path):
    df = run_here(openai_server, tmp_path, repeats=3)
    assert list(df.columns) == [*COLUMNS, "system"]
    assert len(df) == 3 and sorted(df["repeat"]) == [0, 1, 2]
    row = df.iloc[0]
    assert row["probe"] == "schema-ten-records" and row["version"] == 4  # the latest
    assert row["variant"] is None and row["case_id"] is None and row["subset"] is None
    assert row["model"] == "test/model" and row["model_resolved"] == "test/model-2026-01"
    assert row["system_fingerprint"] == "fp_test_1"
    assert row["passed"] and row["score"] == 1.0 and len(row["checks"]) == 7
    assert row["parameters"] == {"max_tokens": 1700, "temperature": 0}
    assert row["error"] is None and row["attempts"] == 1
    assert row["jevalkit_version"] and row["started_at"] <= row["finished_at"]


def test_exact_messages_and_parameters_are_sent(openai_server, tmp_path):
    import jevalkit

    probe = jevalkit.load_probe("schema-ten-records@2")
    run_here(openai_server, tmp_path, temperature=0.7, max_tokens=300, seed=5, top_p=0.9)
    body = openai_server.requests[0]["body"]
    assert body["messages"] == probe.chat_messages()
    assert body["temperature"] == 0.7 and body["max_tokens"] == 300
    assert body["seed"] == 5 and body["top_p"] == 0.9
    assert "Authorization" not in openai_server.requests[0]["headers"]


def test_repeats_are_independent_requests_with_distinct_seeds(openai_server, tmp_path):
    df = run_here(openai_server, tmp_path, repeats=5, temperature=1.0, seed=100)
    seeds = sorted(r["body"]["seed"] for r in openai_server.requests)
    assert seeds == [100, 101, 102, 103, 104]
    assert [p["seed"] for p in df.sort_values("repeat")["parameters"]] == seeds
    assert df["params_hash"].nunique() == 1


def test_cache_keeps_repeats_apart_and_parameters_distinct(openai_server, tmp_path):
    run_here(openai_server, tmp_path, repeats=3, out=tmp_path / "a.jsonl")
    assert len(openai_server.requests) == 3  # three repeats, never collapsed into one
    df = run_here(openai_server, tmp_path, repeats=3, out=tmp_path / "b.jsonl")
    assert len(openai_server.requests) == 3 and df["cached"].all()
    run_here(openai_server, tmp_path, repeats=3, out=tmp_path / "c.jsonl", temperature=0.5)
    assert len(openai_server.requests) == 6  # a temperature change never reuses answers
    run_here(openai_server, tmp_path, repeats=1, out=tmp_path / "d.jsonl", cache=False)
    assert len(openai_server.requests) == 7


def test_corrupt_cache_entry_is_fetched_again(openai_server, tmp_path):
    cache_dir = tmp_path / "cache"
    run_here(openai_server, tmp_path, out=tmp_path / "a.jsonl", cache_dir=cache_dir)
    (entry,) = [p for p in cache_dir.rglob("*.json")]
    entry.write_text(entry.read_text()[:-20])
    df = run_here(openai_server, tmp_path, out=tmp_path / "b.jsonl", cache_dir=cache_dir)
    assert len(openai_server.requests) == 2 and not df["cached"].any() and df["passed"].all()


@pytest.mark.parametrize("fault", ["500", "503", "drop"])
def test_transient_faults_are_retried(openai_server, tmp_path, fault):
    openai_server.faults["test/model"] = [fault, fault]
    df = run_here(openai_server, tmp_path)
    assert df.loc[0, "error"] is None and df.loc[0, "attempts"] == 3 and df.loc[0, "passed"]


def test_429_honours_retry_after(openai_server, tmp_path):
    openai_server.faults["test/model"] = ["429"]
    openai_server.retry_after = "1"
    started = time.monotonic()
    df = run_here(openai_server, tmp_path)
    assert time.monotonic() - started >= 1.0
    assert df.loc[0, "attempts"] == 2 and df.loc[0, "passed"]


def test_hang_past_the_timeout_becomes_an_error_row_after_max_retries(openai_server, tmp_path):
    openai_server.hang_s = 3.0
    openai_server.faults["test/model"] = ["hang", "hang"]
    df = run_here(openai_server, tmp_path, timeout=0.5, max_retries=1)
    error = df.loc[0, "error"]
    assert error["type"] == "timeout" and df.loc[0, "attempts"] == 2
    assert df.loc[0, "output"] is None and pd.isna(df.loc[0, "passed"])


@pytest.mark.parametrize(
    ("fault", "kind", "text"),
    [
        ("malformed", "invalid_response", 'body is not JSON: {"choices": [ this is not json'),
        ("no_choices", "invalid_response", "no choices"),
        ("error_object", "api_error", "model overloaded"),
    ],
)
def test_unusable_bodies_become_error_rows_and_the_run_goes_on(
    openai_server, tmp_path, fault, kind, text
):
    openai_server.faults["test/model"] = [fault]
    df = run_here(openai_server, tmp_path, repeats=3, concurrency=1)
    errors = df["error"].dropna().tolist()
    assert len(errors) == 1 and errors[0]["type"] == kind and text in errors[0]["message"]
    assert errors[0]["status"] == 200
    assert df["passed"].sum() == 2


def test_permanent_http_errors_are_not_retried(openai_server, tmp_path):
    openai_server.faults["test/model"] = ["500"] * 10
    df = run_here(openai_server, tmp_path, max_retries=2)
    assert df.loc[0, "error"]["status"] == 500 and df.loc[0, "attempts"] == 3
    assert "HTTP 500" in df.loc[0, "error"]["message"]


def test_retry_errors_reruns_only_error_rows_and_keeps_one_row_per_key(openai_server, tmp_path):
    openai_server.faults["test/model"] = ["500", "500"]
    df = run_here(openai_server, tmp_path, repeats=3, max_retries=0, concurrency=1)
    assert df["error"].notna().sum() == 2
    n = len(openai_server.requests)
    df = run_here(openai_server, tmp_path, repeats=3)
    assert len(openai_server.requests) == n  # plain re-run: everything is complete, nothing sent
    df = run_here(openai_server, tmp_path, repeats=3, retry_errors=True)
    assert len(openai_server.requests) == n + 2
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and df["error"].isna().all()


def test_resume_skips_complete_rows(openai_server, tmp_path):
    run_here(openai_server, tmp_path, repeats=2)
    run_here(openai_server, tmp_path, repeats=5)
    assert len(openai_server.requests) == 5
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 5


def test_torn_last_line_is_repaired_not_parsed(openai_server, tmp_path):
    path = tmp_path / "results.jsonl"
    run_here(openai_server, tmp_path, repeats=2)
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # a crash mid-write
    assert len(read_results(path)) == 1
    df = run_here(openai_server, tmp_path, repeats=2)
    assert len(df) == 2 and all(json.loads(x) for x in path.read_text().splitlines())


def test_model_drift_warns_and_names_rows(openai_server, tmp_path):
    run_here(openai_server, tmp_path, repeats=3)
    openai_server.identity["test/model"] = ("test/model-2026-02", "fp_test_2")
    with pytest.warns(UserWarning, match=r"model drift: test/model .* rows 3"):
        run_here(openai_server, tmp_path, repeats=4)
    drift = runner.model_drift(read_results(tmp_path / "results.jsonl"))
    assert set(drift["field"]) == {"model_resolved", "system_fingerprint"}


def test_no_warning_without_drift(openai_server, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_here(openai_server, tmp_path, repeats=2)


def test_the_api_key_never_leaves_the_request(openai_server, tmp_path, monkeypatch, capfd):
    secret = "sk-jk-SECRET-0123456789abcdef"
    monkeypatch.setenv("JEVALKIT_API_KEY", secret)  # the key for a custom base URL
    cache_dir = tmp_path / "cache"
    openai_server.reply = lambda body: f"I was called with {secret}"  # an endpoint echoing it back
    openai_server.faults["test/model"] = ["error_object", "500"]
    run_here(openai_server, tmp_path, repeats=3, cache_dir=cache_dir, max_retries=0, progress=True)
    assert openai_server.requests[0]["headers"]["Authorization"] == f"Bearer {secret}"
    captured = capfd.readouterr()
    artifacts = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    for text in [captured.out, captured.err, *artifacts]:
        assert secret not in text


def test_run_inside_a_running_event_loop(openai_server, tmp_path):
    import asyncio

    async def in_notebook():
        return run_here(openai_server, tmp_path, repeats=2)

    df = asyncio.run(in_notebook())
    assert len(df) == 2


def test_arun_is_awaitable(openai_server, tmp_path):
    import asyncio

    df = asyncio.run(
        runner.arun(
            "schema-ten-records",
            "m",
            base_url=openai_server.base_url,
            out=tmp_path / "r.jsonl",
            progress=False,
        )
    ).rows
    assert df.loc[0, "passed"]


def test_concurrency_limit_is_respected(openai_server, tmp_path):
    openai_server.latency = 0.2
    started = time.monotonic()
    run_here(openai_server, tmp_path, repeats=8, concurrency=4, cache=False)
    elapsed = time.monotonic() - started
    assert elapsed >= 0.4  # 8 requests, at most 4 at a time, 0.2 s each


def test_each_case_of_a_seeded_run_gets_its_own_seed(openai_server, tmp_path):
    """Cases sharing ``seed + r`` would share every random draw of the sampler (common random
    numbers), so their outcomes would be correlated and a case-level interval too narrow."""
    from jevalkit.client import request_seed

    df = run(
        "unit-conversion",
        "test/model",
        repeats=2,
        temperature=1.0,
        seed=7,
        progress=False,
        out=tmp_path / "results.jsonl",
        base_url=openai_server.base_url,
    ).rows
    sent = [r["body"]["seed"] for r in openai_server.requests]
    assert len(sent) == len(df) == 80 and len(set(sent)) == 80
    for row in df.itertuples():
        assert row.parameters["seed"] == request_seed(7, row.repeat, row.case_id, None)
        assert 0 <= row.parameters["seed"] < 2**32
    assert df["params_hash"].nunique() == 1  # one configuration, as before
