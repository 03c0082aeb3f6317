"""Runner overhead on the embedded model: completion tokens per second through jevalkit.run
against the same requests sent as direct HTTP (httpx, same concurrency), at concurrency 1, 2, 4.

Target: the runner adds under 5% overhead. llama-cpp-python serves one request at a time, so
concurrency does not raise the server's throughput; it is measured anyway, to show that queueing
requests does not cost the runner anything either.
Run: ``.venv/bin/python benchmarks/bench_local.py``
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import httpx

import jevalkit
from jevalkit import local

REQUESTS, MAX_TOKENS = 8, 64


async def direct(server: local.LocalServer, concurrency: int, seed0: int) -> tuple[int, float]:
    probe = jevalkit.load_probe("schema-ten-records@2")
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=600) as client:

        async def one(i: int) -> int:
            async with slots:
                body = {
                    "model": server.model_name,
                    "messages": probe.chat_messages(),
                    "max_tokens": MAX_TOKENS,
                    "temperature": 1.0,
                    "seed": seed0 + i,
                }
                r = await client.post(server.base_url + "/chat/completions", json=body)
                return r.json()["usage"]["completion_tokens"]

        started = time.perf_counter()
        tokens = await asyncio.gather(*(one(i) for i in range(REQUESTS)))
        return sum(tokens), time.perf_counter() - started


def through_runner(concurrency: int, seed0: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        df = jevalkit.run(
            "schema-ten-records",
            "local",
            repeats=REQUESTS,
            temperature=1.0,
            seed=seed0,
            max_tokens=MAX_TOKENS,
            concurrency=concurrency,
            out=Path(tmp) / "r.jsonl",
            cache=False,
            progress=False,
        )
        return int(df["completion_tokens"].sum()), time.perf_counter() - started


def main() -> None:
    with local.local_endpoint() as server:
        asyncio.run(direct(server, 1, 0))  # warm up
        print(f"{REQUESTS} requests x {MAX_TOKENS} max tokens, temperature 1, distinct seeds")
        for concurrency in (1, 2, 4):
            seed0 = 1000 * concurrency
            tokens_d, t_d = asyncio.run(direct(server, concurrency, seed0))
            tokens_r, t_r = through_runner(concurrency, seed0)
            rate_d, rate_r = tokens_d / t_d, tokens_r / t_r
            print(
                f"concurrency {concurrency}: direct HTTP (baseline) {rate_d:5.1f} tok/s, "
                f"jevalkit.run {rate_r:5.1f} tok/s, overhead {1 - rate_r / rate_d:+.1%}"
            )


if __name__ == "__main__":
    main()
