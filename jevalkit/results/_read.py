"""Reading results files: strict JSON lines (a NaN, an infinity, a name given twice, nesting too
deep are refused naming the line), a byte-order mark skipped, a torn last line (a write a crash
interrupted) left out, and the latest row of each key."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ResultsError
from ..files import open_regular
from ..jsontext import json_line, not_json_lines
from ._columns import row_key
from ._path import check_results_path, last_line
from ._validate import validate_row


def complete_row(fragment: bytes) -> bool:
    """Whether ``fragment`` (a last line without its newline) is a whole row, not a torn write.

    Example:
        >>> complete_row(b'{"a": 1}'), complete_row(b'{"a": ')
        (True, False)
    """
    try:
        return isinstance(json_line(fragment, "the last line", ValueError), dict)
    except ValueError:
        return False


def torn_bytes(path: Path) -> int:
    """The bytes of a torn last line of ``path`` (a write a crash interrupted, which readers
    leave out); 0 when its last line is whole.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text('{"a": 1}\\n{"a": ')
        >>> torn_bytes(p)
        6
    """
    try:
        with open_regular(path, ResultsError, what="results file") as fh:
            _, tail = last_line(fh)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read results ({exc.strerror})") from None
    return len(tail) if tail.strip() and not complete_row(tail) else 0


def _parse_line(line: bytes, where: str, *, first: bool = False) -> dict[str, Any]:
    why = not_json_lines(line) if first else None
    if why is not None:  # not a row a crash or an edit broke: never results (a CSV, a report)
        raise ResultsError(
            f"{where}: not a jevalkit results file (JSON lines, one row per line): {why}, "
            "another tool's log with `jevalkit import PATH --out results.jsonl`"
        )
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
    :func:`iter_rows` reads them (the line's bytes without its newline or a byte-order mark).

    The file is streamed a line at a time (never held whole in memory): a 200,000-row file is
    read at a fraction of the memory a whole read takes (``benchmarks/bench_results_read.py``).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_bytes(b'\\xef\\xbb\\xbf{"a": 1}\\n\\n{"a": 2}\\n{"a": ')
        >>> [(n, row) for n, _, row in iter_lines(p)]
        [(1, {'a': 1}), (3, {'a': 2})]
    """
    path = check_results_path(path)
    fh = open_regular(path, ResultsError, what="results file")
    with fh:
        try:
            for lineno, raw in enumerate(fh, 1):
                line = raw[3:] if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
                if not line.endswith(b"\n"):  # the last line, without its newline
                    if line.strip() and complete_row(line):
                        yield lineno, line, _parse_line(line, f"{path}:{lineno}", first=lineno == 1)
                    return
                line = line[:-1]
                if line.strip():
                    yield lineno, line, _parse_line(line, f"{path}:{lineno}", first=lineno == 1)
        except OSError as exc:
            raise ResultsError(f"{path}: cannot read results ({exc.strerror})") from None


def read_bytes(path: Path, offset: int = 0) -> bytes:
    """The bytes of the results file ``path`` from ``offset`` on."""
    try:
        with open_regular(path, ResultsError, what="results file") as fh:
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
            yield lineno, line, _parse_line(line, f"{where}:{lineno}", first=lineno == 1)
    last = first + len(lines) - 1
    if final and tail.strip() and complete_row(tail):
        yield last, tail, _parse_line(tail, f"{where}:{last}")


@dataclass(frozen=True)
class LatestRows:
    """The rows of a results file by key (:func:`latest_rows`). Unpacks as
    ``rows, replaced = latest_rows(path)``; it has no length and no index (a tuple's would
    count or pick its two fields, not the rows): the rows are ``.rows``. (It is no
    :class:`jevalkit.results.Result`, whose unpacking fields give it a length; it behaves as
    one that replaced a tuple and refuses a length.)

    Attributes:
        rows: the valid rows by key, the later row of a key winning.
        replaced: how many earlier rows a later row of the same key replaced (re-runs of the
            same request; :func:`jevalkit.results.read_results` warns of them).
    """

    rows: dict[tuple, dict[str, Any]]
    replaced: int

    def __iter__(self) -> Iterator[Any]:
        return iter((self.rows, self.replaced))

    def _refuse(self, what: str) -> TypeError:
        return TypeError(f"LatestRows is a results object: its rows are .rows ({what})")

    def __len__(self) -> int:
        raise self._refuse("len(result.rows)")

    def __getitem__(self, index: Any) -> Any:
        raise self._refuse("result.rows, or result.replaced")


def latest_rows(path: str | Path) -> LatestRows:
    """Valid rows by key, the later row winning, and how many earlier rows were replaced.

    Example:
        >>> import tempfile, pathlib
        >>> from jevalkit.results import ResultRow
        >>> row = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0)
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> _ = p.write_text((row.to_json() + "\\n") * 2)
        >>> read = latest_rows(p)
        >>> len(read.rows), read.replaced
        (1, 1)
    """
    path = Path(path)
    if not path.exists():
        return LatestRows({}, 0)
    rows: dict[tuple, dict[str, Any]] = {}
    replaced = 0
    for lineno, _, row in iter_lines(path):  # the rows only: their lines' bytes are not kept
        validate_row(row, f"{path}:{lineno}")
        key = row_key(row)
        replaced += key in rows
        rows[key] = row
    return LatestRows(rows, replaced)


def latest_lines(path: str | Path) -> tuple[dict[tuple, tuple[dict[str, Any], bytes]], int]:
    """As :func:`latest_rows`, each row beside the bytes of its line (to copy it unchanged)."""
    path = Path(path)
    if not path.exists():
        return {}, 0
    return keyed_lines(iter_lines(path), path)


def keyed_lines(
    lines: Iterable[tuple[int, bytes, dict[str, Any]]],
    path: Path,
    *,
    one_run: bool = False,
    repeated: bool = True,
) -> tuple[dict[tuple, tuple[dict[str, Any], bytes]], int]:
    """:func:`latest_lines` of the ``lines`` of ``path`` (as :func:`iter_lines` yields them):
    each row checked against the results format, by key, the later row winning.

    ``one_run``: ``path`` is a part file, written by one shard, where a later row of a key only
    replaces an error row (``--retry-errors``), repeats the same row, or, when the run planned
    a key more than once (``repeated``: a probe given twice), is another answer of the same
    invocation (the same ``run_id``: the last is kept, as in one process). Any other two
    answers to one request are refused, naming both lines and the key, as a merge refuses
    them across parts.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "0.jsonl"
        >>> row = '{"kind": "probe", "probe": "p", "version": 1, "model": "m", "repeat": 0, "output": "%s"}'
        >>> _ = p.write_text(row % "a" + "\\n" + row % "b" + "\\n")
        >>> keyed_lines(iter_lines(p), p, one_run=True, repeated=False)
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: ...0.jsonl:2: the row of key ('p', 1, None, None, 'm', None, None, None, None, None, 0) differs from the one on line 1 of the same part: ...
    """
    rows: dict[tuple, tuple[dict[str, Any], bytes]] = {}
    where: dict[tuple, int] = {}
    replaced = 0
    for lineno, line, row in lines:
        validate_row(row, f"{path}:{lineno}")
        key = row_key(row)
        old = rows.get(key)
        if old is not None:
            replaced += 1
            again = repeated and old[0].get("run_id") == row.get("run_id")
            if (
                one_run
                and old[1] != line
                and old[0] != row
                and not old[0].get("error")
                and not again
            ):
                raise ResultsError(
                    f"{path}:{lineno}: the row of key {key} differs from the one on line "
                    f"{where[key]} of the same part: the same request was answered twice; "
                    "nothing was merged. Keep one of the two rows (delete the other line) and "
                    "run `jevalkit merge` again"
                )
        rows[key] = (row, line)
        where[key] = lineno
    return rows, replaced
