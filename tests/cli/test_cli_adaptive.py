"""``jevalkit run --dry-run``, ``--repeats auto``, budgets and ``gate --repeats auto`` as a
subprocess against the loopback server (the default answer passes with probability 0.6)."""

from __future__ import annotations

import subprocess
import sys

from jevalkit.results import read_results


def cli(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_dry_run_prints_the_plan_and_sends_nothing(openai_server, tmp_path):
    r = cli(
        "run",
        "schema-ten-records",
        "--model",
        "openai/gpt-4o-mini",
        "--base-url",
        openai_server.base_url,
        "--repeats",
        "4",
        "--max-tokens",
        "250",
        "--out",
        tmp_path / "r.jsonl",
        "--dry-run",
        "--budget-usd",
        "0.0001",
    )
    assert r.returncode == 0, r.stderr
    assert "dry run: nothing was sent" in r.stdout and "1000" in r.stdout
    assert "may exceed the $0.0001 budget" in r.stdout
    # no earlier rows: the expected tokens and cost are said unknown, not printed as NaN
    assert "NaN" not in r.stdout and "unknown" in r.stdout.splitlines()[1]
    assert openai_server.requests == [] and not (tmp_path / "r.jsonl").exists()


def test_adaptive_run_reports_its_interval_and_stop_reason(openai_server, tmp_path):
    r = cli(
        "run",
        "schema-ten-records",
        "--model",
        "m",
        "--base-url",
        openai_server.base_url,
        "--repeats",
        "auto",
        "--target-half-width",
        "0.15",
        "--max-repeats",
        "200",
        "--temperature",
        "1",
        "--seed",
        "1",
        "--out",
        tmp_path / "r.jsonl",
    )
    assert r.returncode == 0, r.stderr
    assert "adaptive repeats: pass_rate" in r.stdout and "stopped: target met" in r.stdout
    assert len(read_results(tmp_path / "r.jsonl")) == len(openai_server.requests)


def test_bad_adaptive_and_budget_input_is_one_line_and_exit_2(openai_server, tmp_path):
    for extra, message in [
        (["--repeats", "lots"], "expected a whole number or 'auto'"),
        (
            ["--repeats", "auto", "--target-half-width", "0.01"],
            "cannot be met within max_repeats=20",
        ),
        (["--budget-usd", "-3"], "--budget-usd must be a number of dollars of 0 or more"),
        (["--budget-usd", "1"], "--budget-usd needs a price for 'm'"),
        (["--price-in", "1"], "give both --price-in and --price-out"),
        # fixed repeats have no stop for a target to set: it was ignored and every case sent
        (["--target-half-width", "0.05"], "--target-half-width stops --repeats auto"),
        (["--target-half-width", "-1", "--repeats", "3"], "--target-half-width stops"),
    ]:
        r = cli(
            "run",
            "schema-ten-records",
            "--model",
            "m",
            "--base-url",
            openai_server.base_url,
            "--out",
            tmp_path / "r.jsonl",
            *extra,
        )
        assert r.returncode == 2, (extra, r.stderr)
        assert message in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) <= 2, r.stderr
    assert openai_server.requests == []


def test_adaptive_gate_passes_fails_and_says_undecided(openai_server, tmp_path):
    def gate(out, bar, *extra):
        return cli(
            "gate",
            out,
            "--repeats",
            "auto",
            "--probe",
            "schema-ten-records",
            "--model",
            "m",
            "--base-url",
            openai_server.base_url,
            "--min",
            bar,
            "--temperature",
            "1",
            "--seed",
            "1",
            "--max-repeats",
            "400",
            *extra,
        )

    passed = gate(tmp_path / "a.jsonl", 0.3)
    assert passed.returncode == 0 and passed.stdout.startswith("PASS"), (
        passed.stdout + passed.stderr
    )
    failed = gate(tmp_path / "b.jsonl", 0.85)
    assert failed.returncode == 1 and failed.stdout.startswith("FAIL"), failed.stdout
    undecided = gate(tmp_path / "c.jsonl", 0.6, "--budget-requests", "30", "--no-cache")
    assert undecided.returncode == 2 and undecided.stdout.startswith("UNDECIDED"), undecided.stdout
    assert "stopped: budget" in undecided.stdout and len(read_results(tmp_path / "c.jsonl")) == 30
