"""Scoring speed: Probe.score on 100,000 mixed outputs against json.loads alone (the baseline) and a
naive per-call ``jsonschema.validate(json.loads(x), schema)`` loop, measured in the same run.

Target: Probe.score within 3x of json.loads, with full error reports for failing outputs.
Run: ``.venv/bin/python benchmarks/bench_scoring.py`` (``--smoke``: 2,000 outputs).
"""

from __future__ import annotations

import contextlib
import json
import random
import time

import jsonschema
from sizes import size

import jevalkit

N = size(100_000, 2_000)
NAIVE_SAMPLE = size(2_000, 200)


def outputs(n: int) -> list[str]:
    probe = jevalkit.load_probe("schema-ten-records@2")
    pool = [ex.output for ex in probe.examples]
    rng = random.Random(0)
    # Half pass, half fail in the ways the worked examples do.
    return [pool[0] if rng.random() < 0.5 else rng.choice(pool[1:]) for _ in range(n)]


def timed(fn, items, repeats: int = 3) -> float:
    """Best of ``repeats`` passes (the least disturbed by other work on the machine)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for x in items:
            fn(x)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    probe = jevalkit.load_probe("schema-ten-records@2")
    schema = probe.scoring["schema"]
    data = outputs(N)
    probe.score(data[0])  # compile once, as any real run does
    t_loads = timed(json.loads, data)
    t_score = timed(probe.score, data)
    sample = data[:NAIVE_SAMPLE]
    t_naive = timed(lambda x: _naive(x, schema), sample, repeats=1) * (N / NAIVE_SAMPLE)
    print(f"outputs scored:               {N:,} (about half failing, each with full errors)")
    print(f"json.loads alone (baseline):  {t_loads:7.2f} s  {t_loads / N * 1e6:6.1f} us/output")
    print(f"Probe.score:                  {t_score:7.2f} s  {t_score / N * 1e6:6.1f} us/output")
    print(f"naive jsonschema.validate:    {t_naive:7.2f} s  (extrapolated from {NAIVE_SAMPLE:,})")
    print(f"ratio Probe.score / json.loads:        {t_score / t_loads:6.2f}x  (target <= 3x)")
    print(f"ratio naive validate / Probe.score:    {t_naive / t_score:6.1f}x faster")


def _naive(text: str, schema: dict) -> None:
    with contextlib.suppress(jsonschema.ValidationError):
        jsonschema.validate(json.loads(text), schema)


if __name__ == "__main__":
    main()
