"""Reading a results file: memory and time of the streamed read (``latest_rows``, a line at a
time, the rows kept without their lines' bytes) against the whole-file read it replaced (the
file's bytes in memory, split into a list of lines, each row kept beside its line's bytes), on a
200,000-row file of probe rows with 300-character outputs, in the same run.

- memory: the tracemalloc peak of each read (what Python allocates; the rows themselves are most
  of it, so the saving is about the file's size twice over).
- time: the best of three reads of each.

Target (issue 35 review): a lower peak at a time within 10% of the whole-file read.
Run: ``.venv/bin/python benchmarks/bench_results_read.py`` (about a minute; ``--smoke``: 2,000 rows).
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

from sizes import size

from jevalkit.errors import ResultsError
from jevalkit.jsontext import json_line
from jevalkit.results import ResultRow, latest_rows, row_key, validate_row

ROWS = size(200_000, 2_000)


def whole_file_read(path: Path) -> dict:
    """The read as it was: the file's bytes at once, split into lines, each parsed by the same
    strict parser and kept beside its line's bytes."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    rows: dict = {}
    for lineno, line in enumerate(data.split(b"\n")[:-1], 1):
        if line.strip():
            where = f"{path}:{lineno}"
            row = json_line(line, where, ResultsError, what="a JSON row", fix="")
            validate_row(row, where)
            rows[row_key(row)] = (row, line)
    return {key: row for key, (row, _) in rows.items()}


def write_file(path: Path) -> None:
    with path.open("w") as fh:
        for i in range(ROWS):
            row = ResultRow(
                run_id="bench", kind="probe", probe="p", version=1, model="m", repeat=i,
                case_id=f"c{i % 100}", output="x" * 300, score=1.0, passed=True,
                parameters={"temperature": 0.0}, params_hash="abc",
            )  # fmt: skip
            fh.write(row.to_json() + "\n")


def peak(read, path: Path) -> tuple[int, int]:
    tracemalloc.start()
    rows = read(path)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top, len(rows)


def best_time(read, path: Path) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        read(path)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.jsonl"
        write_file(path)
        size = path.stat().st_size
        old_peak, old_n = peak(whole_file_read, path)
        new_peak, new_n = peak(lambda p: latest_rows(p).rows, path)
        assert old_n == new_n == ROWS
        old_s = best_time(whole_file_read, path)
        new_s = best_time(lambda p: latest_rows(p).rows, path)
    mb = 1024 * 1024
    print(f"results file: {ROWS:,} rows, {size / mb:.0f} MB")
    print(f"peak memory: whole-file read {old_peak / mb:.0f} MB, streamed {new_peak / mb:.0f} MB")
    print(f"  ratio streamed / whole-file: {new_peak / old_peak:.2f}")
    print(f"time: whole-file read {old_s:.2f} s, streamed {new_s:.2f} s")
    print(f"  ratio streamed / whole-file: {new_s / old_s:.2f}")


if __name__ == "__main__":
    main()
