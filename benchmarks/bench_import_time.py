"""Cold import time of the analysis wing: ``import jevalkit.metrics`` in a fresh interpreter,
against ``import pandas, scipy.stats`` (what any analysis of a results frame pays anyway),
measured in the same run, and which of the execution wing's modules it loads (none may:
``jevalkit.runner``, ``jevalkit.client``, ``jevalkit.local``, ``httpx``).

Each import runs in its own fresh process (``python -X importtime`` is not used: its own
bookkeeping slows the import); the median of the runs is compared.

Target (issue 50): importing ``jevalkit.metrics`` loads no HTTP stack; printed: the ratio of
its cold import time to pandas + scipy.stats's.
Run: ``.venv/bin/python benchmarks/bench_import_time.py`` (``--smoke``: 3 runs each).
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from sizes import parser, size

RUNS = size(15, 3)
PROBE = """
import sys, time
start = time.perf_counter()
import {module}
took = time.perf_counter() - start
loaded = [m for m in ("jevalkit.runner", "jevalkit.client", "jevalkit.local", "httpx") if m in sys.modules]
print(took, ",".join(loaded))
"""


def cold(module: str) -> tuple[float, set[str]]:
    """The median cold import time of ``module`` over RUNS fresh processes, and what it loaded."""
    times, loaded = [], set()
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(module=module)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        times.append(float(out[0]))
        loaded |= set(out[1].split(",")) if len(out) > 1 else set()
    return statistics.median(times), loaded


def main() -> None:
    parser(__doc__).parse_args()
    base, _ = cold("pandas, scipy.stats")
    print(f"import pandas, scipy.stats (baseline): {base * 1000:.0f} ms (median of {RUNS})")
    worst = 0.0
    for module in ("jevalkit.metrics", "jevalkit.labels", "jevalkit.items", "jevalkit.reports"):
        took, loaded = cold(module)
        worst = max(worst, took / base)
        said = ", ".join(sorted(loaded)) if loaded else "nothing of the execution wing"
        print(
            f"import {module}: {took * 1000:.0f} ms, {took / base:.2f}x the baseline; loads {said}"
        )
        if loaded:
            raise SystemExit(f"{module} loads the execution wing: {', '.join(sorted(loaded))}")
    print(f"the slowest analysis import is {worst:.2f}x pandas + scipy.stats")


if __name__ == "__main__":
    main()
