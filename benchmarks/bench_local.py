"""The embedded model's speed: llama.cpp's llama-server through jevalkit.run, against the same
server hit directly with httpx, and against the llama-cpp-python server it replaced, in one run.

- tokens/s at 1, 2 and 4 concurrent requests through ``jevalkit.run`` and direct (overhead);
- throughput at 4 concurrent requests against the single-request rate of the same server;
- llama-server at 4 against the llama-cpp-python server at 4 (when llama-cpp-python is installed:
  ``pip install ".[bench]"``, built portable as the Makefile does);
- one one-token logprobs judgment (the judges' case), the median of 20.

Requests are unseeded at temperature 1 with ``ignore_eos`` (every request generates MAX_TOKENS):
seeded runs on the embedded model are sent one at a time on purpose (batching changes the text).

Targets (issue 16): overhead under 5%; 4 concurrent at least 1.4x one; at least 2.5x the
llama-cpp-python server at 4; a logprobs judgment at most 0.1 s.
Run: ``.venv/bin/python benchmarks/bench_local.py`` (``--smoke``: 4 requests of 8 tokens, 3
judgments; without llama-cpp-python it says so and measures llama-server alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sizes import size

import jevalkit
from jevalkit import local

REQUESTS, MAX_TOKENS = size((8, 96), (4, 8))
JUDGMENTS = size(20, 3)  # timed one-token judgments (the median is printed)


def body(model: str) -> dict:
    probe = jevalkit.load_probe("schema-ten-records@2")
    return {
        "model": model,
        "messages": probe.chat_messages(),
        "max_tokens": MAX_TOKENS,
        "temperature": 1.0,
        "ignore_eos": True,
    }


async def direct(base_url: str, model: str, concurrency: int, headers: dict | None = None) -> float:
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=900, headers=headers) as client:

        async def one() -> int:
            async with slots:
                r = await client.post(base_url + "/chat/completions", json=body(model))
                return r.json()["usage"]["completion_tokens"]

        started = time.perf_counter()
        tokens = await asyncio.gather(*(one() for _ in range(REQUESTS)))
        return sum(tokens) / (time.perf_counter() - started)


def through_runner(concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        df = jevalkit.run(
            "schema-ten-records",
            "local",
            repeats=REQUESTS,
            temperature=1.0,
            max_tokens=MAX_TOKENS,
            extra_params={"ignore_eos": True},
            concurrency=concurrency,
            out=Path(tmp) / "r.jsonl",
            cache=False,
            progress=False,
            timeout=600,
        ).rows
        assert df["error"].isna().all(), df["error"].dropna().tolist()[:1]
        return int(df["completion_tokens"].sum()) / (time.perf_counter() - started)


def judgment_seconds(base_url: str, model: str, headers: dict | None = None) -> float:
    from jevalkit.judges import load_cases, load_judge_prompt

    prompt = load_judge_prompt("faithfulness")
    case = load_cases("faithfulness")[0]
    times = []
    with httpx.Client(timeout=60, headers=headers) as client:
        for _ in range(JUDGMENTS):
            started = time.perf_counter()
            client.post(
                base_url + "/completions",
                json={
                    "model": model,
                    "prompt": prompt.completion_prompt(case),
                    "max_tokens": 1,
                    "temperature": 0,
                    "logprobs": 20,
                },
            )
            times.append(time.perf_counter() - started)
    return statistics.median(times)


@contextlib.contextmanager
def llama_cpp_python_server():
    """The llama-cpp-python server jevalkit used before, on a free port (None if not installed)."""
    if importlib.util.find_spec("llama_cpp") is None:
        yield None
        return
    path, _ = local.model_file()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--model_alias",
        "old",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--chat_format",
        "gemma",
        "--n_ctx",
        "4096",
        "--n_threads",
        "2",
        "--verbose",
        "False",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                    break
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    print(f"{REQUESTS} requests x {MAX_TOKENS} tokens (ignore_eos), temperature 1, unseeded")
    rates = {}
    with local.local_endpoint() as server:
        asyncio.run(direct(server.base_url, server.model_name, 1, server.headers()))  # warm up
        for concurrency in (1, 2, 4):
            rate_d = asyncio.run(
                direct(server.base_url, server.model_name, concurrency, server.headers())
            )
            rate_r = through_runner(concurrency)
            rates[concurrency] = rate_d
            print(
                f"llama-server, {concurrency} concurrent: direct httpx (baseline) {rate_d:5.1f} tok/s, "
                f"jevalkit.run {rate_r:5.1f} tok/s, overhead {1 - rate_r / rate_d:+.1%} (target < 5%)"
            )
        print(f"llama-server, 4 concurrent against 1: {rates[4] / rates[1]:.2f}x (target 1.4x)")
        judged = judgment_seconds(server.base_url, server.model_name, server.headers())
        print(
            f"one-token logprobs judgment: {judged * 1000:.0f} ms median of {JUDGMENTS} "
            "(target 100 ms)"
        )
    with llama_cpp_python_server() as old:
        if old is None:
            print(
                "llama-cpp-python is not installed (pip install '.[bench]'): no comparison with it"
            )
            return
        old_rate = asyncio.run(direct(old, "old", 4))
        print(
            f"llama-cpp-python server, 4 concurrent (baseline) {old_rate:5.1f} tok/s; llama-server "
            f"{rates[4]:5.1f} tok/s = {rates[4] / old_rate:.2f}x (target 2.5x)"
        )


if __name__ == "__main__":
    main()
