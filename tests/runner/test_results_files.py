"""Results files are never lost, cut or mixed up (issue 19.9, 19.12, 19.21)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import warnings

import pytest

from jevalkit.errors import ResultsError
from jevalkit.results import locked, read_results, repair_torn_tail
from jevalkit.runner import run


def run_here(server, path, **options):
    options.setdefault("progress", False)
    return run("schema-ten-records", "m", base_url=server.base_url, out=path, **options).rows


def test_a_complete_last_row_without_its_newline_is_kept(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    run_here(openai_server, path, repeats=3)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # written whole, newline lost
    assert len(read_results(path)) == 3
    assert repair_torn_tail(path) == 0 and path.read_bytes().endswith(b"}\n")
    run_here(openai_server, path, repeats=3)
    assert len(openai_server.requests) == 3 and len(read_results(path)) == 3


def test_a_torn_last_row_is_cut_and_fetched_again(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    run_here(openai_server, path, repeats=3)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    assert len(read_results(path)) == 2
    df = run_here(openai_server, path, repeats=3)
    assert df["cached"].sum() == 1  # the cut row's answer comes back from the cache
    assert len(read_results(path)) == 3


def test_a_second_run_on_the_same_file_refuses_while_the_first_holds_it(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    with locked(path), pytest.raises(ResultsError, match="is being written by another run"):
        run_here(openai_server, path)
    assert openai_server.requests == []
    run_here(openai_server, path)  # free again once the first is done
    assert len(openai_server.requests) == 1


def test_two_processes_on_one_file_never_duplicate_rows(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    openai_server.latency = 0.05
    cmd = [
        sys.executable,
        "-m",
        "jevalkit.cli",
        "run",
        "schema-ten-records",
        "--model",
        "m",
        "--base-url",
        openai_server.base_url,
        "--out",
        str(path),
        "--repeats",
        "20",
        "--concurrency",
        "2",
        "--no-cache",
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 20 and len(openai_server.requests) == 20
    if codes == [0, 2]:  # they overlapped: the second refused with one line
        err = next(e for p, (_, e) in zip(procs, results, strict=True) if p.returncode == 2)
        assert b"is being written by another run" in err and err.count(b"\n") == 1


def test_a_full_disk_stops_the_run_with_one_line_and_loses_nothing(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "jevalkit.cli",
        "run",
        "schema-ten-records",
        "--model",
        "m",
        "--base-url",
        openai_server.base_url,
        "--out",
        str(path),
        "--repeats",
        "20",
        "--concurrency",
        "1",
        "--no-cache",
    ]
    limit = 6000  # bytes: room for about three rows

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "JEVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run(cmd, capture_output=True, timeout=120, preexec_fn=small_disk, env=env)
    err = out.stderr.decode()
    assert out.returncode == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if "error:" in line] == [
        next(line for line in err.splitlines() if "error:" in line)
    ]
    assert "cannot write results (File too large)" in err and "re-run the same command" in err
    written = path.read_bytes()
    whole = [json.loads(line) for line in written.splitlines() if line.endswith(b"}")]
    assert 1 <= len(whole) < 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = run_here(openai_server, path, repeats=20, cache=False)  # the disk has room again
    assert len(df) == 20 and sorted(df["repeat"]) == list(range(20))
