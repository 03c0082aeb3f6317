"""Reading JSON Lines and JSON files for importers: fast, and one line naming the record when a
line is not JSON."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ImportFormatError
from ..files import open_regular, read_file, shown
from ..jsontext import json_line, jsonl_lines, not_json_lines

# A JSON document is parsed whole, at about 20 times its size in memory: larger ones are refused
MAX_JSON_BYTES = 256 * 1024**2
# a JSON Lines log is read whole too (pandas' reader), one line at a time in the fallback
MAX_JSONL_BYTES = 2 * 1024**3
# format detection reads the first whole lines of a file, however long, up to this much
MAX_HEAD_BYTES = 64 * 1024**2


def check_file(path: str | Path) -> Path:
    """A readable regular file (opened without waiting: a FIFO, a device, a folder or an
    over-long name is refused), or :class:`ImportFormatError` naming the problem."""
    with open_regular(path, ImportFormatError):
        pass
    return Path(path)


def head_lines(path: Path, limit: int = 5, max_bytes: int = MAX_HEAD_BYTES) -> list[str]:
    """The first non-empty whole lines of a text file (for format detection): read until
    ``limit`` of them are complete or ``max_bytes`` are read, split on ``\\n`` only (a U+2028
    in a label is inside a JSON string, not a line break), so a first row longer than any
    fixed window is still seen whole.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = p.write_text('{"a": "x\\u2028y"}\\n\\n{"a": 2}\\n{"a": ', encoding="utf-8")
        >>> head_lines(p)
        ['{"a": "x\\u2028y"}', '{"a": 2}', '{"a":']
    """
    found: list[bytes] = []
    data = b""
    with open_regular(path, ImportFormatError) as fh:
        try:
            while len(found) < limit:
                chunk = fh.read(min(1 << 20, max_bytes - len(data) + 1))
                if not chunk:
                    break
                data += chunk
                lines = data.split(b"\n")
                found = [x for x in (line.strip() for line in lines[:-1]) if x][:limit]
                if len(data) > max_bytes:
                    break
        except OSError as exc:
            raise ImportFormatError(f"{shown(path)}: cannot read it ({exc.strerror})") from None
    if len(found) < limit and len(data) <= max_bytes:  # the end of the file: its last line too
        found = [x for x in (line.strip() for line in data.split(b"\n")) if x][:limit]
    text = [line.decode("utf-8", errors="replace") for line in found]
    if text:
        text[0] = text[0].removeprefix("\ufeff")
    return text


def first_records(path: Path, limit: int = 3) -> list[dict[str, Any]]:
    """The first JSON objects of a JSONL file (non-objects and bad lines are skipped)."""
    records = []
    for line in head_lines(path, limit * 3):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
        if len(records) == limit:
            break
    return records


def load_jsonl(path: Path) -> pd.DataFrame:
    """A JSONL file as a DataFrame (pandas' reader; values kept as written). A line that is not
    a JSON object is an error naming its number.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = p.write_text('{"a": 1}\\n{"a": \\n')
        >>> load_jsonl(p)
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: .../x.jsonl:2: not a JSON object (Expecting value)
    """
    raw = read_file(path, ImportFormatError, max_bytes=MAX_JSONL_BYTES, what="log")
    try:
        return pd.read_json(io.BytesIO(raw), lines=True, dtype=False)
    except (ValueError, TypeError, RecursionError):
        pass
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    rows: list[dict[str, Any]] = []
    for lineno, line in enumerate(jsonl_lines(text), 1):
        if not line.strip():
            continue
        why = None if rows else not_json_lines(line)
        if why is not None:  # a table or a report, not JSONL
            raise ImportFormatError(f"{path}:{lineno}: not JSON lines (one object per line): {why}")
        # another tool's file: NaN and Infinity are kept, as pandas' reader above keeps them
        value = json_line(
            line, f"{path}:{lineno}", ImportFormatError, what="a JSON object", strict=False
        )
        if not isinstance(value, dict):
            raise ImportFormatError(f"{path}:{lineno}: not a JSON object")
        rows.append(value)
    return pd.DataFrame(rows)


def load_json(path: Path) -> Any:
    """A whole JSON document (a log that is one object)."""
    check_json_size(path)
    raw = read_file(path, ImportFormatError, max_bytes=MAX_JSON_BYTES, what="log")
    try:
        return json.loads(raw)
    except RecursionError:
        raise ImportFormatError(f"{path}: nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise ImportFormatError(f"{path}: not JSON ({str(exc).split(':')[0]})") from None


def check_json_size(path: Path) -> None:
    """Refuse a JSON document too large to parse whole."""
    with open_regular(path, ImportFormatError) as fh:
        size = os.fstat(fh.fileno()).st_size
    if size > MAX_JSON_BYTES:
        raise ImportFormatError(
            f"{path}: a JSON document larger than {MAX_JSON_BYTES // 1024**2} MB is not read "
            "(it is parsed whole, at about 20x its size in memory); split it, or for inspect_ai "
            "convert it to .eval (`inspect log convert --to eval`), read one sample at a time"
        )


def require_fields(frame: pd.DataFrame, fields: tuple[str, ...], path: Path, what: str) -> None:
    """Refuse a frame without the fields ``what`` needs, naming the first record that lacks one."""
    for field in fields:
        if field not in frame.columns:
            raise ImportFormatError(
                f"{path}: record 1: no field {field!r}; {what} records have {', '.join(fields)}"
            )
        missing = frame[field].isna().to_numpy()
        if missing.any():
            i = int(missing.argmax())
            raise ImportFormatError(f"{path}: record {i + 1}: field {field!r} is missing")
