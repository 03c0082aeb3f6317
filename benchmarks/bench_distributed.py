"""The runner on Dask against the runner in one process, in the same run (issue 28).

1. Coordination overhead: N requests (default 4,000) at 50 ms latency against the loopback server
   at the same total concurrency (32): a 2-worker LocalCluster's wall time over the single
   process's. Target: at most 1.15. The cluster is started, and jevalkit imported on its workers
   (about 3 s), before the clock starts (printed on its own line).
2. A CPU-bound grid: M requests (default 5,000) whose answers are large (400 records each, so
   parsing, scoring and writing dominate), no latency: one process's wall time over the 2-worker
   cluster's. Target: at least 1.6 (it needs two idle cores).

Run: ``.venv/bin/python benchmarks/bench_distributed.py [--requests 4000] [--cpu-requests 5000]``.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from jevalkit.runner import dask_client, run

LATENCY, CONCURRENCY, ITEMS = 0.05, 32, 400
SERVER = Path(__file__).resolve().parents[1] / "tests" / "openai_server.py"


def start_server(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--fast", *args], stdout=subprocess.PIPE, text=True
    )
    base_url = proc.stdout.readline().strip()
    for _ in range(100):
        try:
            httpx.get(base_url + "/models", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    return proc, base_url


def timed(base_url: str, n: int, folder: str, name: str, **options) -> float:
    started = time.perf_counter()
    df = run(
        "schema-ten-records",
        "bench",
        base_url=base_url,
        repeats=n,
        seed=0,
        temperature=1.0,
        concurrency=CONCURRENCY,
        cache=False,
        progress=False,
        out=Path(folder) / f"{name}.jsonl",
        **options,
    )
    elapsed = time.perf_counter() - started
    assert len(df) == n and df["error"].isna().all(), name
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--cpu-requests", type=int, default=5000)
    args = parser.parse_args()
    started = time.perf_counter()
    with dask_client(workers=2) as client:
        client.run(importlib.import_module, "jevalkit.runner")  # workers import jevalkit once
        print(
            f"2-worker LocalCluster started and jevalkit imported on it in "
            f"{time.perf_counter() - started:.1f} s (not in the times below)"
        )
        proc, base_url = start_server("--latency", str(LATENCY))
        try:
            with tempfile.TemporaryDirectory() as tmp:
                one = timed(base_url, args.requests, tmp, "one")
                two = timed(base_url, args.requests, tmp, "two", cluster=client)
        finally:
            proc.kill()
        print(
            f"{args.requests} requests at {LATENCY * 1000:.0f} ms, concurrency {CONCURRENCY}: "
            f"one process {one:.2f} s, 2 Dask workers {two:.2f} s; "
            f"overhead ratio {two / one:.2f} (target <= 1.15)"
        )
        proc, base_url = start_server("--reply-items", str(ITEMS))
        try:
            with tempfile.TemporaryDirectory() as tmp:
                one = timed(base_url, args.cpu_requests, tmp, "one")
                two = timed(base_url, args.cpu_requests, tmp, "two", cluster=client)
        finally:
            proc.kill()
        print(
            f"{args.cpu_requests} large answers ({ITEMS} records each) scored: one process "
            f"{one:.2f} s, 2 Dask workers {two:.2f} s; speed-up {one / two:.2f}x (target >= 1.6)"
        )


if __name__ == "__main__":
    main()
