"""Append-only JSONL results: crash-safe writing, one writer at a time, torn-line repair, and
strict reading into pandas.

A results file is only ever appended to (or atomically rewritten by ``--retry-errors``). A run
holds an advisory lock on it (a hidden ``.<name>.lock`` beside it) for as long as it reads and
writes, so two runs on one file cannot both send every request and duplicate every row.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import stat
import warnings
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs
import pandas as pd

from ..datafiles import json_line
from ..errors import ResultsError
from ._columns import COLUMNS, ResultRow, row_key

IMPORT_HINT = (
    "convert it first with `jevalkit import {path} --out results.jsonl`, or read it with "
    "jevalkit.io.read / jevalkit.io.from_table(..., case=..., system=..., score=...)"
)


@cache
def _row_validator() -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath("results_row.schema.json").read_text("utf-8")
    return jsonschema_rs.Draft202012Validator(json.loads(text), offline=True)


def check_results_path(path: str | Path, *, writing: bool = False) -> Path:
    """Refuse a path that cannot hold results: a directory, a device, a FIFO, a socket, or (when
    writing) a path whose parent is a file.

    Example:
        >>> check_results_path("/dev/zero")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: /dev/zero: not a regular file (a character device); results are read from and written to regular files
    """
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except NotADirectoryError:
        raise ResultsError(f"{path}: a parent of this path is a file, not a folder") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot use this path ({exc.strerror})") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = next(
            (
                name
                for test, name in (
                    (stat.S_ISDIR, "a folder"),
                    (stat.S_ISCHR, "a character device"),
                    (stat.S_ISBLK, "a block device"),
                    (stat.S_ISFIFO, "a FIFO"),
                    (stat.S_ISSOCK, "a socket"),
                )
                if test(info.st_mode)
            ),
            "not a regular file",
        )
        raise ResultsError(
            f"{path}: not a regular file ({kind}); results are read from and written to regular files"
        )
    if writing:
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ResultsError(
                        f"{path}: {parent} is a file, not a folder; choose another --out"
                    )
                break
    return path


def _complete_row(fragment: bytes) -> bool:
    try:
        return isinstance(json_line(fragment, "the last line", ValueError), dict)
    except ValueError:
        return False


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
        if keep == size:
            return 0
        fh.seek(keep)
        tail = fh.read()
        if _complete_row(tail):
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            removed = 0
        else:
            fh.truncate(keep)
            removed = size - keep
        fh.flush()
        os.fsync(fh.fileno())
        return removed


def _parse_line(line: bytes, where: str) -> dict[str, Any]:
    row = json_line(
        line,
        where,
        ResultsError,
        what="a JSON row",
        fix="; the file was edited or damaged (remove that line and re-run to fetch it again)",
        nested="JSON nested too deeply to be a results row",
    )
    if not isinstance(row, dict):
        raise ResultsError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    return row


def iter_rows(path: str | Path) -> Iterable[dict[str, Any]]:
    """Yield each row of a results file as a dict. A last line without a newline is yielded when
    it is a complete row, skipped when it is a fragment of an interrupted write.

    Raises:
        ResultsError: not a regular file, or a line that is not strict JSON (NaN and Infinity
            are not JSON), or nested too deeply; the message names the line.
    """
    for _, _, row in iter_lines(path):
        yield row


def iter_lines(path: str | Path) -> Iterable[tuple[int, bytes, dict[str, Any]]]:
    """Each row of a results file as ``(line number, the line's bytes, the row)``, as
    :func:`iter_rows` reads them (the line's bytes without its newline or a byte-order mark)."""
    path = check_results_path(path)
    yield from lines_in(read_bytes(path), path)


def read_bytes(path: Path, offset: int = 0) -> bytes:
    """The bytes of the results file ``path`` from ``offset`` on."""
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read results ({exc.strerror})") from None


def lines_in(
    data: bytes, where: Path, *, first: int = 1, final: bool = True
) -> Iterable[tuple[int, bytes, dict[str, Any]]]:
    """The rows of ``data``, the bytes of ``where`` from its line ``first`` on, as
    :func:`iter_lines` yields them. Not ``final`` (the file is still being written): only the
    lines that end in a newline."""
    if first == 1 and data.startswith(b"\xef\xbb\xbf"):  # a byte-order mark, as Windows saves UTF-8
        data = data[3:]
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]
    for lineno, line in enumerate(complete, first):
        if line.strip():
            yield lineno, line, _parse_line(line, f"{where}:{lineno}")
    last = first + len(lines) - 1
    if final and tail.strip() and _complete_row(tail):
        yield last, tail, _parse_line(tail, f"{where}:{last}")


def _field(path: Any) -> str:
    return ".".join(str(p) for p in path) or "<row>"


def validate_row(row: dict[str, Any], where: str) -> None:
    """Check one row against the results format; raise one line naming the line and field.

    Example:
        >>> validate_row({"kind": "probe", "probe": "p", "version": 1, "model": "m", "repeat": 0,
        ...               "label": ["x"]}, "r.jsonl:3")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: r.jsonl:3: label: ["x"] is not of types "null", "string"
    """
    missing = [c for c in ("kind", "probe", "version", "model", "repeat") if c not in row]
    if missing:
        path = where.rsplit(":", 1)[0]
        raise ResultsError(
            f"{where}: not a jevalkit results row: missing column(s) {', '.join(missing)}; "
            + IMPORT_HINT.format(path=path)
        )
    error = next(iter(_row_validator().iter_errors(row)), None)
    if error is not None:
        raise ResultsError(f"{where}: {_field(error.instance_path)}: {error.message}")


def latest_rows(path: str | Path) -> tuple[dict[tuple, dict[str, Any]], int]:
    """Valid rows by key, the later row winning, and how many earlier rows were replaced."""
    lines, replaced = latest_lines(path)
    return {key: row for key, (row, _) in lines.items()}, replaced


def latest_lines(path: str | Path) -> tuple[dict[tuple, tuple[dict[str, Any], bytes]], int]:
    """As :func:`latest_rows`, each row beside the bytes of its line (to copy it unchanged)."""
    path = Path(path)
    if not path.exists():
        return {}, 0
    return keyed_lines(iter_lines(path), path)


def keyed_lines(
    lines: Iterable[tuple[int, bytes, dict[str, Any]]], path: Path
) -> tuple[dict[tuple, tuple[dict[str, Any], bytes]], int]:
    """:func:`latest_lines` of the ``lines`` of ``path`` (as :func:`iter_lines` yields them):
    each row checked against the results format, by key, the later row winning."""
    rows: dict[tuple, tuple[dict[str, Any], bytes]] = {}
    replaced = 0
    for lineno, line, row in lines:
        validate_row(row, f"{path}:{lineno}")
        key = row_key(row)
        replaced += key in rows
        rows[key] = (row, line)
    return rows, replaced


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
    "round": "Int64",
    "cost_usd": "Float64",
}


def system_of(frame: pd.DataFrame) -> pd.Series:
    """The system of each results row: its ``label`` when set, else its ``model`` (the system a
    comparison names; the derived ``system`` column of :func:`read_results`). The one place
    this rule is written.

    Example:
        >>> system_of(pd.DataFrame({"model": ["m", "m"], "label": [None, "T=1"]})).tolist()
        ['m', 'T=1']
    """
    label = frame["label"] if "label" in frame.columns else pd.Series(None, index=frame.index)
    label = label.astype(object)
    return label.where(label.notna(), frame["model"]).astype(object)


def results_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a DataFrame with the documented columns, in order, and stable dtypes, then the
    derived ``system`` column (the row's ``label`` when set, else its ``model``: the system a
    comparison names), then any extra columns.

    Example:
        >>> results_frame([]).columns.tolist() == [*COLUMNS, "system"]
        True
    """
    # object columns everywhere but the typed ones: text stays Python str exactly as written
    # (pandas 3 would infer an Arrow string dtype, which refuses a lone surrogate in model output)
    frame = pd.DataFrame(rows, dtype=object)
    for column in COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    for column, dtype in DTYPES.items():
        frame[column] = frame[column].astype(dtype)
    frame["system"] = system_of(frame)
    extra = [c for c in frame.columns if c not in COLUMNS and c != "system"]
    return frame[[*COLUMNS, "system", *extra]].reset_index(drop=True)


def key_order(key: tuple) -> tuple:
    """A sort key for row keys holding None and mixed types (None first, then by type name).

    Example:
        >>> sorted([("p", 2), ("p", None), ("p", 1)], key=key_order)
        [('p', None), ('p', 1), ('p', 2)]
    """
    return tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in key)


def read_results(path: str | Path) -> pd.DataFrame:
    """Read a results file into a DataFrame with the documented, stable columns
    (:data:`jevalkit.runner.COLUMNS`), one row per key.

    Every row is checked against the results format: a file that is not jevalkit results (say,
    another tool's JSONL) is refused with the missing columns named, never read as one row.
    Rows come in key order (:func:`key_order`), whatever order they were written in.
    When a key appears more than once the later row wins (a re-run replacing an earlier row):
    the count is in ``df.attrs["replaced_rows"]`` and a warning says so.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text(ResultRow(run_id="r", kind="probe", probe="p", version=1,
        ...                            model="m", repeat=0, score=1.0, passed=True).to_json() + "\\n")
        >>> df = read_results(p)
        >>> list(df.columns) == [*COLUMNS, "system"], bool(df.loc[0, "passed"]), str(df["passed"].dtype)
        (True, True, 'boolean')
    """
    if not Path(path).exists():
        raise ResultsError(
            f"{path}: no such results file; run `jevalkit run ... --out {path}` first"
        )
    rows, replaced = latest_rows(path)
    frame = rows_frame(rows, replaced)
    if replaced:
        warnings.warn(
            f"{path}: {replaced} row(s) were replaced by later rows with the same key "
            "(re-runs of the same request); the later row is used",
            stacklevel=2,
        )
    return frame


def rows_frame(rows: dict[tuple, dict[str, Any]], replaced: int = 0) -> pd.DataFrame:
    """The frame :func:`read_results` makes of the rows of a file by key (as
    :func:`latest_rows` reads them, with ``replaced`` earlier rows replaced): in key order, with
    the documented columns, ``attrs["replaced_rows"]`` set."""
    # in key order, not the order requests happened to finish: every result computed from the
    # frame (a sum, a mean, a first row) is then the same however the rows arrived
    frame = results_frame([rows[k] for k in sorted(rows, key=key_order)])
    frame.attrs["replaced_rows"] = replaced
    return frame


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the advisory lock of the results file ``path`` (a second run refuses at once).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> with locked(p):
        ...     with locked(p):
        ...         pass
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: ...r.jsonl is being written by another run; wait for it to finish, or write to another file (--out)
    """
    lock_path = path.with_name(f".{path.name}.lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot lock the results file ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(
                f"{path} is being written by another run; wait for it to finish, or write to "
                "another file (--out)"
            ) from None
        yield
    finally:
        os.close(fd)


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
        self._fh = None

    async def __aenter__(self) -> ResultsWriter:
        check_results_path(self.path, writing=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            repair_torn_tail(self.path)
            self._fh = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise ResultsError(f"{self.path}: cannot write results ({exc.strerror})") from None
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
        while not self._queue.empty():
            _, fut = self._queue.get_nowait()
            if fut is not None and not fut.done():
                fut.set_exception(error)

    def _append(self, text: str) -> None:
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


def json_row(row: dict[str, Any], *, default: Any = None) -> bytes:
    """One results line for ``row`` (no newline): compact JSON, NaN and infinity refused.

    Example:
        >>> json_row({"a": 1, "b": None})
        b'{"a":1,"b":null}'
    """
    return json.dumps(row, separators=(",", ":"), allow_nan=False, default=default).encode()


def write_lines(path: str | Path, lines: Iterable[bytes]) -> Path:
    """Write JSONL ``lines`` (each without its newline) to ``path`` atomically, as
    :func:`write_rows` writes rows: into a hidden temporary file beside it, fsynced, then renamed
    over ``path``.

    Raises:
        ResultsError: the file cannot be written (the temporary file is removed).
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as fh:
            for line in lines:
                fh.write(line)
                fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ResultsError(f"{path}: cannot write results ({exc.strerror})") from None
    return path


def rewrite_without(path: Path, drop: set[tuple]) -> None:
    """Atomically rewrite ``path`` without the rows whose key is in ``drop`` (used by
    ``--retry-errors`` so a retried row replaces its error row instead of duplicating it)."""
    write_rows(path, [row for row in iter_rows(path) if row_key(row) not in drop])
