"""``jevalkit metrics`` and ``jevalkit gate`` on results written by the real runner."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jevalkit.runner import run


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *args], capture_output=True, timeout=120
    )


@pytest.fixture
def results_file(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    # temperature 1: the test server answers correctly ~60% of the time, seeded per repeat
    run(
        "schema-ten-records",
        "m",
        base_url=openai_server.base_url,
        repeats=20,
        temperature=1.0,
        seed=0,
        out=path,
        progress=False,
    )
    return path


def test_metrics_table_and_json(results_file):
    out = cli("metrics", str(results_file), "--by", "model")
    assert out.returncode == 0
    text = out.stdout.decode()
    assert "pass_rate" in text and "mean_score" in text and "consistency" in text
    records = json.loads(cli("metrics", str(results_file), "--json").stdout)
    rate = next(r for r in records if r["metric"] == "pass_rate")
    assert rate["n"] == 20 and rate["ci_low"] < rate["value"] < rate["ci_high"]


def test_gate_decides_on_the_whole_interval(results_file):
    passing = cli("gate", str(results_file), "--min", "0.1", "--max-flip-rate", "1")
    assert passing.returncode == 0 and b"PASS" in passing.stdout and b"n = 20" in passing.stdout
    straddling = cli("gate", str(results_file), "--min", "0.5", "--max-flip-rate", "1")
    # the point estimate is about 0.6, but the interval's lower bound is below 0.5: the same
    # rule as the adaptive gate (metrics.gate_decision) calls it undecided, exit 2
    assert (
        straddling.returncode == 2
        and straddling.stdout.startswith(b"UNDECIDED")
        and b"is below 0.5 and its upper bound" in straddling.stdout
    )
    failing = cli("gate", str(results_file), "--min", "0.99", "--max-flip-rate", "1")
    assert failing.returncode == 1 and failing.stdout.startswith(b"FAIL"), failing.stdout
    assert b"upper bound 0." in failing.stdout and b"is below 0.99" in failing.stdout


def test_gate_refuses_a_flaky_evaluator(results_file):
    out = cli("gate", str(results_file), "--min", "0.1")
    assert (
        out.returncode == 2 and b"REFUSED" in out.stdout and b"flip between repeats" in out.stdout
    )


def test_gate_on_a_missing_file_exits_2():
    out = cli("gate", "/no/such.jsonl", "--min", "0.5")
    assert out.returncode == 2 and b"no such results file" in out.stderr
