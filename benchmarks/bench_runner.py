"""Runner throughput: 2,000 requests to a loopback server with 50 ms latency at concurrency 32.

Prints wall time as a ratio of the ideal (2000 / 32 x 0.05 s) and against the official openai
SDK's AsyncOpenAI driven with the same concurrency, in the same run, against the same server.
Target: at least 85% of ideal, and no slower than the SDK.
Run: ``.venv/bin/python benchmarks/bench_runner.py`` (needs the `bench` extra for `openai`).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

import jevalkit
from jevalkit.runner import run

N, CONCURRENCY, LATENCY = 2000, 32, 0.05
SERVER = Path(__file__).resolve().parents[1] / "tests" / "openai_server.py"


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--fast", "--latency", str(LATENCY)],
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
            )
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


if __name__ == "__main__":
    main()
