"""Batch speed: 16 executions of the probe report on the bundled demo run, sequential papermill
calls (the baseline) against one batch on a 2-worker Dask LocalCluster, in the same run.

Prints the speed-up (2 cores: expect close to 2x) and the per-report overhead of jevalkit's batch
over a bare papermill call. Run: ``.venv/bin/python benchmarks/bench_batch.py [--smoke]``
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import papermill
from sizes import size

from jevalkit._paths import data_dir
from jevalkit.reports import find_notebook, run_batch

N = size(16, 1)
DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"


def main() -> None:
    notebook = find_notebook("probe_report")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        started = time.perf_counter()
        for i in range(N):
            papermill.execute_notebook(
                str(notebook),
                str(tmp / f"seq{i}.ipynb"),
                kernel_name="python3",
                parameters={"results": str(DEMO), "headline_path": str(tmp / f"h{i}.json")},
                progress_bar=False,
            )
        sequential = time.perf_counter() - started
        # N copies of the run, one report each (a batch runs only parameters its notebook has)
        copies = [tmp / f"run{i}.jsonl" for i in range(N)]
        for copy in copies:
            shutil.copyfile(DEMO, copy)
        batch = tmp / "batch.yaml"
        batch.write_text(
            f"notebook: probe_report\ngrid:\n  results: [{', '.join(map(str, copies))}]\n"
            "out: out/{results_stem}\n"
        )
        started = time.perf_counter()
        status = run_batch(batch, workers=2, progress=False)
        parallel = time.perf_counter() - started
    assert (status["status"] == "done").all()
    print(f"{N} executions of probe_report.ipynb")
    print(
        f"sequential papermill (baseline): {sequential:6.1f} s  ({sequential / N:.2f} s per report)"
    )
    print(f"jevalkit batch, 2 workers:       {parallel:6.1f} s  ({parallel / N:.2f} s per report)")
    print(
        f"speed-up: {sequential / parallel:.2f}x; per-report overhead vs bare papermill on 2 workers: "
        f"{parallel / N - sequential / N / 2:+.2f} s"
    )


if __name__ == "__main__":
    main()
