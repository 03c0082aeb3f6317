"""Writing results files: crash-safe appends from many tasks (async, one fsync per group),
atomic rewrites (sync), and the repair of a torn last line before appending.

A results file is only ever appended to, or atomically rewritten (``--retry-errors``, a merge).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from ..errors import ResultsError
from ..files import write_file
from ._columns import ResultRow, row_key
from ._json import json_row
from ._path import check_results_path, check_tail, last_line
from ._read import complete_row, iter_rows


def repair_torn_tail(path: Path) -> int:
    """Mend the end of a results file after a crash; return the bytes removed.

    A last line without its newline is kept (a newline is added) when it parses as a complete
    row: it was written whole and only the newline is missing. Anything else after the last
    newline is a fragment of an interrupted write and is cut.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text('{"a": 1}\\n{"a": ')
        >>> repair_torn_tail(p), p.read_text()
        (6, '{"a": 1}\\n')
        >>> _ = p.write_text('{"a": 1}\\n{"a": 2}')
        >>> repair_torn_tail(p), p.read_text()
        (0, '{"a": 1}\\n{"a": 2}\\n')
    """
    if not path.exists():
        return 0
    with path.open("rb+") as fh:
        keep, tail = last_line(fh)
        if not tail:
            return 0
        if not tail.lstrip(b"\xef\xbb\xbf \t").startswith(b"{"):
            check_tail(path)  # not the start of a row a crash cut short: refused, not cut
        if complete_row(tail):
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            removed = 0
        else:
            fh.truncate(keep)
            removed = len(tail)
        fh.flush()
        os.fsync(fh.fileno())
        return removed


class ResultsWriter:
    """Append rows to a JSONL file; every row is flushed and fsynced before it counts as written.

    Rows written from many tasks are committed in groups (one fsync per group), so durability does
    not cost one disk round trip per request. Opening the file mends its end (a torn last line is
    cut, a complete one missing its newline is kept).

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
        self._queue: asyncio.Queue[tuple[str, asyncio.Future[None] | None]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._fh: TextIO | None = None

    async def __aenter__(self) -> ResultsWriter:
        check_results_path(self.path, writing=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            torn = repair_torn_tail(self.path)
            self._fh = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise ResultsError(f"{self.path}: cannot write results ({exc.strerror})") from None
        if torn:
            warnings.warn(
                f"{self.path}: its last line was torn ({torn} bytes of a write a crash "
                "interrupted): that row was dropped, and its request is sent again",
                stacklevel=2,
            )
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._commit_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._queue is not None and self._task is not None
        if not self._task.done():
            await self._queue.put(("", None))  # sentinel: stop after what is queued
        with contextlib.suppress(ResultsError):
            await self._task  # a failed write was already raised to the rows waiting on it
        with contextlib.suppress(OSError):
            if self._fh is not None:
                self._fh.close()

    async def write(self, row: ResultRow) -> None:
        """Queue ``row`` and return once it is on disk (written, flushed, fsynced).

        Raises:
            ResultsError: the disk refused the write (full, read-only, ...); rows written
                before it are on disk.
        """
        assert self._queue is not None, "use `async with ResultsWriter(path)`"
        assert self._task is not None
        done = asyncio.get_running_loop().create_future()
        if not self._task.done():
            await self._queue.put((row.to_json() + "\n", done))
            await asyncio.wait({done, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            self._task.result()  # the writer stopped on a failed write: raise it for this row too
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
                except OSError as exc:
                    error = ResultsError(
                        f"{self.path}: cannot write results ({exc.strerror}); the rows written "
                        "before are kept: free the disk and re-run the same command to resume"
                    )
                    for _, fut in batch:
                        if fut is not None and not fut.done():
                            fut.set_exception(error)
                    self._fail_pending(error)
                    raise error from None
            for _, fut in batch:
                if fut is not None and not fut.done():
                    fut.set_result(None)

    def _fail_pending(self, error: ResultsError) -> None:
        assert self._queue is not None
        while not self._queue.empty():
            _, fut = self._queue.get_nowait()
            if fut is not None and not fut.done():
                fut.set_exception(error)

    def _append(self, text: str) -> None:
        assert self._fh is not None, "use `async with ResultsWriter(path)`"
        self._fh.write(text)
        self._fh.flush()
        os.fsync(self._fh.fileno())


def write_rows(path: str | Path, rows: Iterable[dict[str, Any]], *, default: Any = None) -> Path:
    """Write ``rows`` as JSONL to ``path`` atomically: into a hidden temporary file beside it,
    fsynced, then renamed over ``path``, so a reader sees the old file or the new one, never
    part of one. ``default`` converts values JSON cannot (as in :func:`json.dumps`); NaN and
    infinity are refused (pass them through :func:`finite` first).

    Raises:
        ResultsError: the file cannot be written (the temporary file is removed).

    Example:
        >>> import tempfile
        >>> path = write_rows(tempfile.mkdtemp() + "/rows.jsonl", [{"a": 1}, {"a": 2}])
        >>> [row["a"] for row in iter_rows(path)]
        [1, 2]
    """
    return write_lines(path, (json_row(row, default=default) for row in rows))


def write_lines(path: str | Path, lines: Iterable[bytes]) -> Path:
    """Write JSONL ``lines`` (each without its newline) to ``path`` atomically, as
    :func:`write_rows` writes rows: into a hidden temporary file beside it, fsynced, then renamed
    over ``path``.

    Raises:
        ResultsError: the file cannot be written (the temporary file is removed).
    """
    # a results file that is a symlink is rewritten where it points (the link stays a link: runs
    # append through it and lock the file it names), the one exception jevalkit.files makes to
    # replacing a link; the temporary file is created new and exclusive
    return write_file(
        path, _with_newlines(lines), ResultsError, what="results file", follow_link=True
    )


def _with_newlines(lines: Iterable[bytes]) -> Iterable[bytes]:
    for line in lines:
        yield line + b"\n"


def rewrite_without(path: Path, drop: set[tuple]) -> None:
    """Atomically rewrite ``path`` without the rows whose key is in ``drop`` (used by
    ``--retry-errors`` so a retried row replaces its error row instead of duplicating it)."""
    write_rows(path, [row for row in iter_rows(path) if row_key(row) not in drop])


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (the file's own fsync does not cover its name)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
