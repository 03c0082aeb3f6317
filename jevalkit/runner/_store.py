"""Append-only JSONL results: crash-safe writing, torn-line repair, and reading into pandas."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ResultsError
from ._columns import COLUMNS, ResultRow, row_key


def repair_torn_tail(path: Path) -> int:
    """Cut a last line left half-written by a crash; return the bytes removed.

    Only the final line can be torn (rows are appended whole and fsynced one batch at a time), so
    anything after the last newline is a fragment, never data.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text('{"a": 1}\\n{"a": ')
        >>> repair_torn_tail(p), p.read_text()
        (6, '{"a": 1}\\n')
    """
    if not path.exists():
        return 0
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        block = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            pos = start
        else:
            keep = 0
        if keep < size:
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
        return size - keep


def iter_rows(path: str | Path) -> Iterable[dict[str, Any]]:
    """Yield each complete row of a results file as a dict (a torn last line is skipped).

    Raises:
        ResultsError: a line in the middle of the file is not JSON (the file was edited or damaged).
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read results ({exc.strerror})") from None
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # the tail (no newline yet) is a torn write or empty
    del tail
    for lineno, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise ResultsError(
                f"{path}:{lineno}: not a JSON row; the file was edited or damaged "
                "(remove that line and re-run to fetch it again)"
            ) from None
        if not isinstance(row, dict):
            raise ResultsError(f"{path}:{lineno}: a row must be a JSON object")
        yield row


def latest_rows(path: str | Path) -> dict[tuple, dict[str, Any]]:
    """Rows by key; if a key appears twice the later row wins."""
    path = Path(path)
    if not path.exists():
        return {}
    return {row_key(row): row for row in iter_rows(path)}


def read_results(path: str | Path) -> pd.DataFrame:
    """Read a results file into a DataFrame with the documented, stable columns
    (:data:`jevalkit.runner.COLUMNS`), one row per key.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text(ResultRow(run_id="r", kind="probe", probe="p", version=1,
        ...                            model="m", repeat=0, score=1.0, passed=True).to_json() + "\\n")
        >>> df = read_results(p)
        >>> list(df.columns) == COLUMNS, bool(df.loc[0, "passed"]), str(df["passed"].dtype)
        (True, True, 'boolean')
    """
    if not Path(path).exists():
        raise ResultsError(
            f"{path}: no such results file; run `jevalkit run ... --out {path}` first"
        )
    rows = list(latest_rows(path).values())
    frame = pd.DataFrame(rows)
    for column in COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    for column, dtype in DTYPES.items():
        frame[column] = frame[column].astype(dtype)
    extra = [c for c in frame.columns if c not in COLUMNS]
    return frame[COLUMNS + extra].reset_index(drop=True)


# Stable dtypes: nullable integers and booleans, so a missing value (an error row) stays NA
# instead of turning a whole column into floats or objects.
DTYPES = {
    "version": "Int64",
    "repeat": "Int64",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "attempts": "Int64",
    "first_failing_item": "Int64",
    "latency_s": "Float64",
    "score": "Float64",
    "expected_level": "Float64",
    "coverage": "Float64",
    "passed": "boolean",
    "cached": "boolean",
}


class ResultsWriter:
    """Append rows to a JSONL file; every row is flushed and fsynced before it counts as written.

    Rows written from many tasks are committed in groups (one fsync per group), so durability does
    not cost one disk round trip per request. Opening the file repairs a torn last line.

    Example:
        >>> import asyncio, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> async def main():
        ...     async with ResultsWriter(p) as w:
        ...         await w.write(ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0))
        >>> asyncio.run(main()); len(p.read_text().splitlines())
        1
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._queue: asyncio.Queue[tuple[str, asyncio.Future[None]]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._fh = None

    async def __aenter__(self) -> ResultsWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(self.path)
        self._fh = self.path.open("a", encoding="utf-8")
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._commit_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._queue is not None and self._task is not None
        await self._queue.put(("", None))  # sentinel: stop after what is queued
        await self._task
        self._fh.close()

    async def write(self, row: ResultRow) -> None:
        """Queue ``row`` and return once it is on disk (written, flushed, fsynced)."""
        assert self._queue is not None, "use `async with ResultsWriter(path)`"
        done = asyncio.get_running_loop().create_future()
        await self._queue.put((row.to_json() + "\n", done))
        await done

    async def _commit_loop(self) -> None:
        assert self._queue is not None
        stop = False
        while not stop:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            lines = [line for line, fut in batch if fut is not None]
            stop = any(fut is None for _, fut in batch)
            if lines:
                try:
                    await asyncio.to_thread(self._append, "".join(lines))
                except BaseException as exc:
                    for _, fut in batch:
                        if fut is not None and not fut.done():
                            fut.set_exception(exc)
                    raise
            for _, fut in batch:
                if fut is not None and not fut.done():
                    fut.set_result(None)

    def _append(self, text: str) -> None:
        self._fh.write(text)
        self._fh.flush()
        os.fsync(self._fh.fileno())


def rewrite_without(path: Path, drop: set[tuple]) -> None:
    """Atomically rewrite ``path`` without the rows whose key is in ``drop`` (used by
    ``--retry-errors`` so a retried row replaces its error row instead of duplicating it)."""
    keep = [row for row in iter_rows(path) if row_key(row) not in drop]
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in keep:
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
