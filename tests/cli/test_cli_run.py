"""``jevalkit run`` as a subprocess: summary output, SIGKILL mid-run and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from jevalkit.client import request_seed
from jevalkit.results import row_key


def start_run(base_url, out, *extra, env=None):
    cmd = [
        sys.executable,
        "-m",
        "jevalkit.cli",
        "run",
        "schema-ten-records",
        "--model",
        "test/m",
        "--base-url",
        base_url,
        "--out",
        str(out),
        *extra,
    ]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )


def test_run_prints_a_summary_with_n(openai_server, tmp_path):
    proc = start_run(openai_server.base_url, tmp_path / "r.jsonl", "--repeats", "4")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = out.decode().splitlines()
    header = ["probe", "system", "n", "n_cases", "passed", "errors", "truncated", "pass_rate"]
    assert lines[0].split() == [*header, "ci_low", "ci_high"]
    # one probe is one case: four repeats of it, all passing
    assert lines[1].split()[:8] == [
        "schema-ten-records@4",
        "test/m",
        "4",
        "1",
        "4",
        "0",
        "0",
        "1.000",
    ]
    assert b"requests" in err  # the progress bar


def test_a_run_where_every_request_fails_says_why_and_exits_1(openai_server, tmp_path):
    """Issue 26.3: it exited 0 and the error messages were printed nowhere."""
    out = tmp_path / "r.jsonl"
    openai_server.faults["test/m"] = ["500"] * 6
    proc = start_run(openai_server.base_url, out, "--repeats", "2", "--max-retries", "0")
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "2 request(s) failed with http_status 500: " in stdout.decode()
    assert "none of 2 request(s) was scored" in err.decode()
    # --retry-errors that fixes nothing is the same failure, said the same way
    proc = start_run(
        openai_server.base_url, out, "--repeats", "2", "--max-retries", "0", "--retry-errors"
    )
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "failed with http_status 500" in stdout.decode()
    # and once the endpoint answers, the same command succeeds
    proc = start_run(openai_server.base_url, out, "--repeats", "2", "--retry-errors")
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "failed with" not in stdout.decode()


def test_an_unreachable_endpoint_exits_1_naming_the_connection_error(tmp_path):
    from browser_lab import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    proc = start_run(url, tmp_path / "r.jsonl", "--max-retries", "0")
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "1 request(s) failed with connection" in stdout.decode()
    assert b"Traceback" not in err


def test_answers_cut_off_at_max_tokens_are_counted_and_named(openai_server, tmp_path):
    openai_server.faults["test/m"] = ["length", "length"]
    proc = start_run(openai_server.base_url, tmp_path / "r.jsonl", "--repeats", "3")
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = stdout.decode().splitlines()
    assert lines[0].split()[5:7] == ["errors", "truncated"]
    assert lines[1].split()[5:7] == ["0", "2"]
    assert "2 answer(s) cut off at max_tokens (finish_reason 'length')" in stdout.decode()


def test_unknown_probe_and_bad_url_exit_2(openai_server, tmp_path):
    proc = start_run("ftp://nowhere", tmp_path / "r.jsonl")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and b"is not an http(s) URL" in err and b"Traceback" not in err


def test_remote_endpoint_without_a_key_is_a_clear_error(tmp_path):
    proc = start_run("https://api.example.com/v1", tmp_path / "r.jsonl")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and b"set $JEVALKIT_API_KEY in the environment" in err


@pytest.mark.parametrize("kills", [1, 3])
def test_sigkill_mid_run_then_resume_gives_exactly_one_row_per_key(openai_server, tmp_path, kills):
    openai_server.latency = 0.05
    out = tmp_path / "r.jsonl"
    repeats = 40
    args = ("--repeats", str(repeats), "--concurrency", "2", "--temperature", "1", "--seed", "7")
    for i in range(kills):
        proc = start_run(openai_server.base_url, out, *args)
        deadline = time.monotonic() + 60
        target = 4 + 8 * i
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= target:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = out.read_bytes().count(b"\n")
    assert 0 < before < repeats
    proc = start_run(openai_server.base_url, out, *args)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    raw = out.read_text().splitlines()
    rows = [json.loads(line) for line in raw]  # every line is whole JSON: nothing torn
    keys = [row_key(r) for r in rows]
    assert len(rows) == repeats and len(set(keys)) == repeats
    assert sorted(r["repeat"] for r in rows) == list(range(repeats))
    assert all(r["parameters"]["seed"] == 7 + r["repeat"] for r in rows)
    assert all(r["error"] is None and r["score"] in (0.0, 1.0) for r in rows)


def test_sigkill_mid_run_of_a_probe_with_cases_resumes_each_case_and_repeat_once(
    openai_server, tmp_path
):
    from probe_folders import write_probe

    root = tmp_path / "probes"
    write_probe(root)  # 30 cases; a user folder found through $JEVALKIT_PROBES
    openai_server.latency = 0.02
    out = tmp_path / "r.jsonl"
    env = {"JEVALKIT_PROBES": str(root)}
    cmd = ["double", "--repeats", "3", "--concurrency", "2", "--temperature", "1", "--seed", "3"]

    def start():
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jevalkit.cli",
                "run",
                *cmd,
                "--model",
                "test/m",
                "--base-url",
                openai_server.base_url,
                "--out",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )

    proc = start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= 10:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < out.read_bytes().count(b"\n") < 90
    proc = start()
    stdout, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    pairs = [(r["case_id"], r["repeat"]) for r in rows]
    assert len(rows) == 90 and len(set(pairs)) == 90
    assert set(pairs) == {(f"c{i:02d}", k) for i in range(1, 31) for k in range(3)}
    assert all(
        r["parameters"]["seed"] == request_seed(3, r["repeat"], r["case_id"], None) for r in rows
    )
    assert len({r["parameters"]["seed"] for r in rows}) == 90  # no two cases share draws
    assert b"double@1" in stdout and b"30" in stdout  # the summary counts 30 cases
