"""Run every benchmark (``bench_*.py`` and ``calibration.py``), one process each, and fail if any
of them fails: ``python benchmarks/run.py --smoke`` (``make bench-smoke``, run by ``.ci/run``)
runs them at their smoke sizes, so that a benchmark that no longer runs fails CI; without
``--smoke`` at their full sizes (tens of minutes to hours). Each benchmark's output is shown as
it runs, then a table of their wall and CPU times (the CPU seconds of the benchmark and of
every process it started and waited for: on a busy machine, what it would take on an idle one);
names after the options pick some (``bench_scoring``).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def benchmarks() -> list[Path]:
    return [*sorted(HERE.glob("bench_*.py")), HERE / "calibration.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="each at its smoke size")
    parser.add_argument("names", nargs="*", help="only these (file names, .py optional)")
    args = parser.parse_args()
    chosen = [
        b for b in benchmarks() if not args.names or b.stem in {Path(n).stem for n in args.names}
    ]
    unknown = {Path(n).stem for n in args.names} - {b.stem for b in chosen}
    if unknown:
        print(f"benchmarks/run.py: no benchmark named {', '.join(sorted(unknown))}")
        return 2
    times, failed = {}, []
    for bench in chosen:
        command = [sys.executable, str(bench), *(["--smoke"] if args.smoke else [])]
        print(f"== {bench.name}{' --smoke' if args.smoke else ''}", flush=True)
        started, cpu = time.perf_counter(), _children_cpu()
        code = subprocess.run(command, cwd=HERE.parent).returncode
        times[bench.name] = (time.perf_counter() - started, _children_cpu() - cpu)
        if code != 0:
            failed.append(f"{bench.name} (exit {code})")
    print(f"\n{'wall':>7}  {'CPU':>7}")
    for name, (wall, cpu) in times.items():
        print(f"{wall:7.1f}  {cpu:7.1f}  {name}")
    walls, cpus = zip(*times.values(), strict=True)
    print(f"{sum(walls):7.1f}  {sum(cpus):7.1f}  all {len(times)} (seconds)")
    if failed:
        print(f"benchmarks that failed: {', '.join(failed)}")
        return 1
    return 0


def _children_cpu() -> float:
    """User + system CPU seconds of every finished child process (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
