"""Importer speed and memory: 1,000,000 grade lines (the judge-leaderboard JSONL shape) and a
100,000-sample inspect_ai log (the ``.json`` layout), against pandas reading the same file in the
same run.

- time: ``jevalkit.io.read`` against ``pandas.read_json(lines=True)`` (grades) and against
  ``pandas.json_normalize`` of the log's samples (inspect; the log is synthetic, so it is read
  with jevalkit's reader of the documented layout: inspect_ai's own reader wants a complete
  header, and running inspect_ai for 100,000 samples would take most of an hour here).
- memory: the peak resident memory a fresh process adds while importing, against the resulting
  DataFrame's ``memory_usage(deep=True)``.

Targets (issue 12): within 3x of pandas; peak memory within 2x of the result.
Run: ``.venv/bin/python benchmarks/bench_import.py`` (about 2 minutes; ``--smoke``: 2,000 lines and
500 samples).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sizes import size

GRADES, SAMPLES = size((1_000_000, 100_000), (2_000, 500))

MEASURE = """
import resource, sys, time, json
import pandas as pd
import jevalkit.io as io
path, how = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if how == "pandas-lines":
    df = pd.read_json(path, lines=True, dtype=False)
elif how == "pandas-normalize":
    df = pd.json_normalize(json.load(open(path))["samples"])
elif how == "inspect":
    df = io.read(path, format="inspect", engine="builtin")
else:
    df = io.read(path, format=how)
elapsed = time.perf_counter() - start
peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(json.dumps({"seconds": elapsed, "peak": peak, "deep": int(df.memory_usage(deep=True).sum()), "rows": len(df)}))
"""


def make_grades(path: Path) -> None:
    rng = np.random.default_rng(0)
    models = [f"model-{i:02d}" for i in range(50)]
    scores = rng.integers(1, 11, GRADES)
    with path.open("w") as fh:
        for i in range(GRADES):
            fh.write(
                json.dumps(
                    {
                        "question_id": i // 50,
                        "model": models[i % 50],
                        "judge": ["gpt-4", "single-v1"],
                        "turn": 1 + (i // 25) % 2,
                        "score": int(scores[i]),
                    }
                )
                + "\n"
            )


def make_inspect(path: Path) -> None:
    rng = np.random.default_rng(1)
    samples = [
        {
            "id": f"s{i // 2}",
            "epoch": 1 + i % 2,
            "target": "A",
            "output": {"model": "m-2026", "completion": "A" if rng.random() < 0.7 else "B"},
            "scores": {"match": {"value": "C" if rng.random() < 0.7 else "I", "answer": "A"}},
            "model_usage": {"m": {"input_tokens": 40, "output_tokens": 2}},
        }
        for i in range(SAMPLES)
    ]
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "bench", "model": "m", "task_version": 0},
        "samples": samples,
    }
    path.write_text(json.dumps(log))


def measure(path: Path, how: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), how], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        grades, log = Path(tmp) / "grades.jsonl", Path(tmp) / "log.json"
        start = time.perf_counter()
        make_grades(grades)
        make_inspect(log)
        print(
            f"wrote {GRADES:,} grade lines and a {SAMPLES:,}-sample inspect log in {time.perf_counter() - start:.0f} s"
        )
        for label, path, ours, theirs in (
            ("grades", grades, "grades", "pandas-lines"),
            ("inspect", log, "inspect", "pandas-normalize"),
        ):
            ref, got = measure(path, theirs), measure(path, ours)
            print(
                f"{label:8s} pandas {ref['seconds']:.2f} s (baseline); jevalkit.io.read {got['seconds']:.2f} s = "
                f"{got['seconds'] / ref['seconds']:.2f}x (target 3x); {got['rows']:,} rows; peak memory "
                f"{got['peak'] / 2**20:.0f} MB = {got['peak'] / got['deep']:.2f}x the result's "
                f"{got['deep'] / 2**20:.0f} MB (target 2x)"
            )


if __name__ == "__main__":
    main()
