"""The runner on Dask against the runner in one process, in the same run (issue 28).

1. Coordination overhead: N requests (default 4,000) at 50 ms latency against the loopback server
   at the same total concurrency (32): a 2-worker LocalCluster's wall time over the single
   process's. Target: at most 1.15. The cluster is started, and jevalkit imported on its workers
   (about 3 s), before the clock starts (printed on its own line).
2. A CPU-bound grid: M requests (default 5,000) whose answers are large (400 records each, so
   parsing, scoring and writing dominate), no latency: one process's wall time over the 2-worker
   cluster's. Target: at least 1.6 (it needs two idle cores).

   The loopback server renders its one large answer once and sends the same bytes every time
   (``tests/openai_server.py --fast --reply-items``), so it costs little CPU and the benchmark
   measures jevalkit, not the server. What bounds the speed-up is printed: the CPU seconds of
   the server, the driver (in the single-process run, the whole runner) and the workers, and
   the best speed-up those CPU seconds allow on this machine's cores. On 2 cores the server,
   the driver and both workers share the two cores, and two processes' CPU time per row grows
   when both cores are busy (measured: about 15% more for two plain single-process runs side
   by side): on 2 cores 1.6 is at the edge of what the CPU seconds allow (the printed bound).

   The machine's speed drifts between runs (the one-process time of the CPU-bound grid ranged
   from 12.6 to 18.9 s within one hour here), so each measurement is taken ``--rounds`` times,
   one process and the cluster side by side each round, and the median ratio is the result
   (each round's ratio is printed too).

Run: ``.venv/bin/python benchmarks/bench_distributed.py [--requests 4000] [--cpu-requests 5000]
[--rounds 3]`` (``--smoke``: 64 and 40 requests, one round).
"""

from __future__ import annotations

import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
from sizes import parser, size

from jevalkit.cluster import dask_client
from jevalkit.runner import run

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


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes ``pids`` have used so far."""
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


class CpuSplit:
    """CPU seconds used between :meth:`start` and :meth:`stop` by the server, this process
    (the driver, or the whole run in one process) and the Dask worker processes."""

    def __init__(self, server: int, workers: list[int]) -> None:
        self.groups = {"server": [server], "driver": [os.getpid()], "workers": workers}

    def start(self) -> None:
        self.before = {k: cpu_seconds(v) for k, v in self.groups.items()}
        self.busy = busy_seconds()

    def stop(self) -> dict[str, float]:
        used = {k: cpu_seconds(v) - self.before[k] for k, v in self.groups.items()}
        # the machine's busy CPU seconds besides ours: another program sharing the cores
        used["other processes"] = max(0.0, busy_seconds() - self.busy - sum(used.values()))
        return used


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (not idle, not waiting on the disk)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def split_text(cpu: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in cpu.items() if v >= 0.05) + " CPU s"


def timed(
    base_url: str, n: int, folder: str, name: str, cpu: CpuSplit, **options
) -> tuple[float, dict[str, float]]:
    cpu.start()
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
    ).rows
    elapsed = time.perf_counter() - started
    used = cpu.stop()
    assert len(df) == n and df["error"].isna().all(), name
    return elapsed, used


def one_and_two(client, workers: list[int], n: int, *server_args) -> tuple[tuple, tuple]:
    """(wall time, CPU split) of n requests in one process, then on the 2-worker cluster,
    against a fresh loopback server started with ``server_args``."""
    proc, base_url = start_server(*(str(a) for a in server_args))
    cpu = CpuSplit(proc.pid, workers)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            one = timed(base_url, n, tmp, "one", cpu)
            two = timed(base_url, n, tmp, "two", cpu, cluster=client)
    finally:
        proc.kill()
    return one, two


def rounds(client, workers: list[int], n: int, count: int, *server_args) -> list[tuple]:
    """:func:`one_and_two` ``count`` times: the measurement of each round."""
    return [one_and_two(client, workers, n, *server_args) for _ in range(count)]


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--requests", type=int, default=size(4000, 64))
    options.add_argument("--cpu-requests", type=int, default=size(5000, 40))
    options.add_argument("--rounds", type=int, default=size(3, 1))
    args = options.parse_args()
    started = time.perf_counter()
    with dask_client(workers=2) as client:
        client.run(importlib.import_module, "jevalkit.runner")  # workers import jevalkit once
        workers = list(client.run(os.getpid).values())
        print(
            f"2-worker LocalCluster started and jevalkit imported on it in "
            f"{time.perf_counter() - started:.1f} s (not in the times below); "
            f"{os.cpu_count()} CPUs; median of {args.rounds} rounds"
        )
        measured = rounds(client, workers, args.requests, args.rounds, "--latency", LATENCY)
        ratios = [two / one for (one, _), (two, _) in measured]
        times = ", ".join(f"{one:.2f}/{two:.2f}" for (one, _), (two, _) in measured)
        print(
            f"{args.requests} requests at {LATENCY * 1000:.0f} ms, concurrency {CONCURRENCY}: "
            f"one process / 2 Dask workers {times} s; overhead ratio "
            f"{statistics.median(ratios):.2f} (rounds {', '.join(f'{r:.2f}' for r in ratios)}; "
            "target <= 1.15)"
        )
        measured = rounds(client, workers, args.cpu_requests, args.rounds, "--reply-items", ITEMS)
        speedups = [one / two for (one, _), (two, _) in measured]
        times = ", ".join(f"{one:.2f}/{two:.2f}" for (one, _), (two, _) in measured)
        print(
            f"{args.cpu_requests} large answers ({ITEMS} records each) scored: one process / "
            f"2 Dask workers {times} s; speed-up {statistics.median(speedups):.2f}x (rounds "
            f"{', '.join(f'{r:.2f}' for r in speedups)}; target >= 1.6)"
        )
        (one, one_cpu), (_, two_cpu) = measured[speedups.index(statistics.median_low(speedups))]
        total = sum(v for k, v in two_cpu.items() if k != "other processes")
        print(
            f"  CPU of the median round, one process: {split_text(one_cpu)}; 2 Dask workers: "
            f"{split_text(two_cpu)}\n"
            f"  bound: {os.cpu_count()} CPUs for {total:.1f} CPU s is at least "
            f"{total / (os.cpu_count() or 1):.2f} s of wall time (the one process needs "
            f"{max(one_cpu['server'], one_cpu['driver']):.2f} s for its busiest process), so at most "
            f"{one / (total / (os.cpu_count() or 1)):.2f}x here"
        )


if __name__ == "__main__":
    main()
