"""Runner throughput: 2,000 requests to a loopback server with 50 ms latency at concurrency 32.

Prints wall time as a ratio of the ideal (2000 / 32 x 0.05 s) and against the official openai
SDK's AsyncOpenAI driven with the same concurrency, in the same run, against the same server.
Target: at least 85% of ideal, and no slower than the SDK.

Cases: 10,000 (case, repeat) jobs (2,000 cases x 5 repeats of a probe with cases) against the
same request count of a single-prompt probe (10,000 repeats), both exact_match, on a server with
no latency, so planning (filling templates, keys) and writing rows dominate. Target: the case
run's planning and its whole run within 10% of the single-prompt run's.
Run: ``.venv/bin/python benchmarks/bench_runner.py [--cases-only] [--jobs N]`` (needs the
`bench` extra for `openai`; ``--smoke``: 64 requests, 200 jobs).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml
from sizes import parser, size

import jevalkit
from jevalkit.probes import load_probe, publish_probes
from jevalkit.runner import jobs_of, run

N, CONCURRENCY, LATENCY = size(2000, 64), 32, 0.05
SERVER = Path(__file__).resolve().parents[1] / "tests" / "openai_server.py"


def start_server(latency: float = LATENCY) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--fast", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    base_url = proc.stdout.readline().strip()
    for _ in range(100):
        try:
            httpx.get(base_url + "/models", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    return proc, base_url


async def sdk_baseline(base_url: str) -> float:
    from openai import AsyncOpenAI

    probe = jevalkit.load_probe("schema-ten-records@2")
    client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=5)
    slots = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with slots:
            await client.chat.completions.create(
                model="bench",
                messages=probe.chat_messages(),
                max_tokens=1700,
                temperature=0,
                seed=i,
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(N)))
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


def main() -> None:
    proc, base_url = start_server()
    try:
        sdk = asyncio.run(sdk_baseline(base_url))
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            df = run(
                "schema-ten-records",
                "bench",
                base_url=base_url,
                repeats=N,
                seed=0,
                concurrency=CONCURRENCY,
                out=Path(tmp) / "r.jsonl",
                cache=False,
                progress=False,
            ).rows
            ours = time.perf_counter() - started
    finally:
        proc.terminate()
    ideal = N / CONCURRENCY * LATENCY
    assert len(df) == N and df["error"].isna().all()
    print(f"{N} requests, concurrency {CONCURRENCY}, server latency {LATENCY * 1000:.0f} ms")
    print(f"ideal wall time:                 {ideal:6.2f} s")
    print(f"openai AsyncOpenAI (baseline):   {sdk:6.2f} s  = {ideal / sdk:5.1%} of ideal")
    print(f"jevalkit.run (score + fsync):    {ours:6.2f} s  = {ideal / ours:5.1%} of ideal")
    print(f"ratio jevalkit / SDK wall time:  {ours / sdk:6.2f}x  (target <= 1.0)")


def write_probes(root: Path, n_cases: int) -> None:
    """Two user probes: ``bench-cases`` (n_cases cases, per-case expected) and ``bench-single``
    (one prompt), both scored by exact_match."""
    base = {
        "format": 2,
        "version": 1,
        "title": "bench",
        "description": "bench",
        "parameters": {"max_tokens": 8, "temperature": 0},
        "rubric": [{"id": "x", "text": "x"}],
        "history": [{"version": 1, "note": "bench"}],
    }
    single = {
        **base,
        "id": "bench-single",
        "messages": [{"role": "user", "content": "What is twice 21?"}],
        "scoring": {"type": "exact_match", "expected": "42"},
        "examples": [
            {"label": "ok", "output": "42", "expect": "pass"},
            {"label": "no", "output": "4", "expect": "fail"},
        ],
    }
    cases = {
        **base,
        "id": "bench-cases",
        "cases": "cases.jsonl",
        "messages": [{"role": "user", "content": "What is twice {{x}}?"}],
        "scoring": {"type": "exact_match"},
        "examples": [
            {"label": "ok", "case": "c1", "output": "2", "expect": "pass"},
            {"label": "no", "case": "c1", "output": "3", "expect": "fail"},
        ],
    }
    for data in (single, cases):
        folder = root / data["id"]
        folder.mkdir(parents=True)
        (folder / "v1.yaml").write_text(yaml.safe_dump(data))
    lines = (json.dumps({"id": f"c{i}", "x": i, "expected": str(2 * i)}) for i in range(n_cases))
    (root / "bench-cases" / "cases.jsonl").write_text("\n".join(lines) + "\n")
    publish_probes(root=root)


def bench_cases(jobs: int, repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "probes"
        write_probes(root, jobs // repeats)
        single, cases = load_probe("bench-single", root=root), load_probe("bench-cases", root=root)
        timings = {}
        for name, probe, k in (("single prompt", single, jobs), ("cases", cases, repeats)):
            started = time.perf_counter()
            planned = jobs_of([probe], k, {})
            timings[name, "plan"] = time.perf_counter() - started
            assert len(planned) == jobs
        proc, base_url = start_server(latency=0.0)
        try:
            for name, probe, k in (("single prompt", single, jobs), ("cases", cases, repeats)):
                started = time.perf_counter()
                df = run(
                    probe,
                    "bench",
                    base_url=base_url,
                    repeats=k,
                    concurrency=CONCURRENCY,
                    out=Path(tmp) / f"{probe.id}.jsonl",
                    cache=False,
                    progress=False,
                ).rows
                timings[name, "run"] = time.perf_counter() - started
                assert len(df) == jobs and df["error"].isna().all()
        finally:
            proc.terminate()
    print(
        f"\n{jobs} jobs: {jobs // repeats} cases x {repeats} repeats vs 1 prompt x {jobs} repeats"
    )
    for stage in ("plan", "run"):
        one, many = timings["single prompt", stage], timings["cases", stage]
        print(
            f"{stage:>4}: single prompt {one:7.3f} s, cases {many:7.3f} s, "
            f"ratio {many / one:5.2f}x (target <= 1.10)"
        )


if __name__ == "__main__":
    options = parser(__doc__)
    options.add_argument("--cases-only", action="store_true")
    options.add_argument("--jobs", type=int, default=size(10_000, 200))
    args = options.parse_args()
    if not args.cases_only:
        main()
    bench_cases(args.jobs)
