"""``make demo`` on a busy machine (issue 37.1): the demo's minutes and scored rows with the CPUs
idle (the baseline, measured in the same run) and then 4x and 8x oversubscribed.

Oversubscribed k times: k busy processes per usable CPU (``python -c "while True: pass"``, at
the demo's own priority, each in a session of its own so that autogroup scheduling cannot shield
the embedded server, itself in a session of its own) run beside the demo for the whole of it. Each demo runs in a fresh
folder with its own state and cache folders, so it starts its own embedded server (on a free
port) and sends every request; it is stopped after ``--limit-min`` minutes (a bound, not a
target) and its scored rows counted all the same.

With ``--old-settings`` a fourth demo runs 4x oversubscribed on a server started with the
settings of before (two threads, four slots; ``jevalkit local serve --threads 2 --slots 4``),
bounded at twice the minutes of the automatic one: llama.cpp's threads wait for each other at
every step, so on a saturated machine two threads are many times slower than one.

Target (issue 37): the demo finishes with every row scored (15 of 15: three configurations of 5
samples; the pass rate is the model's business) at 4x and 8x, within the bound.

Run: ``.venv/bin/python benchmarks/bench_demo_load.py [--levels 0 4 8] [--limit-min 40]
[--old-settings]`` (about 30 minutes on 2 CPUs; it loads every CPU: run it on a machine you
may slow down). ``--smoke``: one demo on the idle machine, 2 samples per configuration of at
most 8 tokens (every answer cut off, and scored all the same), bounded at 2 minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sizes import parser, size

from jevalkit.cli.demo import CONFIGS, MODELS, PROBES
from jevalkit.results import read_results, scored

REPO = Path(__file__).resolve().parents[1]
REPEATS = size(5, 2)  # samples per configuration
ROWS = len(PROBES) * len(MODELS) * len(CONFIGS) * REPEATS  # every probe, model, configuration
# the demo's own settings; at the smoke size the shortest answers that still run every step
DEMO_OPTIONS = size([], ["--repeats", str(REPEATS), "--max-tokens", "8"])


def cpus() -> int:
    return len(os.sched_getaffinity(0))


def demo(level: int, limit_s: float, *, old_settings: bool = False) -> dict:
    """One demo beside ``level`` busy processes per CPU: minutes, exit code, rows, scored."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-demo-{level}x-"))
    env = {
        **os.environ,
        "JEVALKIT_STATE_DIR": str(work / "state"),
        "JEVALKIT_CACHE_DIR": str(work / "cache"),
        "PYTHONPATH": str(REPO),
    }
    cli = [sys.executable, "-m", "jevalkit.cli"]
    hogs = [
        # each in its own session: with the kernel's autogroup scheduling (on by default) the
        # embedded server, which runs in a session of its own, would otherwise get half of the
        # machine against all the busy processes together, and the load would be a pretence
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(level * cpus())
    ]
    try:
        if old_settings:
            serve = [*cli, "local", "serve", "--threads", "2", "--slots", "4"]
            subprocess.run(serve, env=env, check=True, capture_output=True, timeout=600)
        out = work / "demo.jsonl"
        argv = [*cli, "demo", "--out", str(out), "--report-dir", str(work / "reports")]
        argv += DEMO_OPTIONS
        started = time.monotonic()
        with (work / "demo.log").open("w") as log:
            proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
            try:
                code: int | str = proc.wait(timeout=limit_s)
            except subprocess.TimeoutExpired:
                proc.terminate()
                proc.wait(timeout=60)
                code = "stopped at the bound"
        minutes = (time.monotonic() - started) / 60
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        subprocess.run([*cli, "local", "stop"], env=env, capture_output=True, timeout=120)
    rows = read_results(out) if out.exists() else None
    done = 0 if rows is None else len(rows)
    return {
        "minutes": minutes,
        "code": code,
        "rows": done,
        "scored": 0 if rows is None else scored(rows),
        "errors": 0 if rows is None else int(rows["error"].notna().sum()),
        "log": work / "demo.log",
    }


def show(name: str, r: dict, baseline: dict | None) -> None:
    ratio = f", {r['minutes'] / baseline['minutes']:.1f}x the idle minutes" if baseline else ""
    print(
        f"{name}: {r['minutes']:.1f} min{ratio}, exit {r['code']}, {r['scored']} of {ROWS} rows "
        f"scored ({r['rows']} written, {r['errors']} errors); log {r['log']}",
        flush=True,
    )


def main() -> int:
    options = parser(__doc__)
    options.add_argument("--levels", type=int, nargs="+", default=size([0, 4, 8], [0]))
    options.add_argument("--limit-min", type=float, default=size(40.0, 2.0))
    options.add_argument("--old-settings", action="store_true")
    args = options.parse_args()
    print(f"{cpus()} CPUs; busy processes per CPU: {args.levels}", flush=True)
    baseline, results = None, {}
    for level in args.levels:
        r = demo(level, args.limit_min * 60)
        results[level] = r
        baseline = r if level == 0 else baseline
        show(f"{level}x oversubscribed" if level else "idle (baseline)", r, baseline)
    if args.old_settings:
        auto = results.get(4) or next(iter(results.values()))
        bound = max(5.0, 2 * auto["minutes"]) * 60
        show("4x, old settings (2 threads, 4 slots)", demo(4, bound, old_settings=True), baseline)
    ok = all(r["code"] == 0 and r["scored"] == ROWS for r in results.values())
    print("target met: every demo finished with every row scored" if ok else "target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
