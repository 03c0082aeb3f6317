"""Reading JSON Lines and JSON files for importers: fast, and one line naming the record when a
line is not JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..datafiles import json_line
from ..errors import ImportFormatError

# A JSON document is parsed whole, at about 20 times its size in memory: larger ones are refused
MAX_JSON_BYTES = 256 * 1024**2


def check_file(path: str | Path) -> Path:
    """A readable regular file, or :class:`ImportFormatError` naming the problem."""
    path = Path(path)
    if not path.exists():
        raise ImportFormatError(f"{path}: no such file")
    if not path.is_file():
        raise ImportFormatError(f"{path}: not a regular file")
    return path


def head_lines(path: Path, limit: int = 5, max_bytes: int = 1 << 20) -> list[str]:
    """The first non-empty lines of a text file (for format detection)."""
    with path.open("rb") as fh:
        chunk = fh.read(max_bytes)
    lines = [line.strip() for line in chunk.decode("utf-8-sig", errors="replace").splitlines()]
    return [line for line in lines if line][:limit]


def first_records(path: Path, limit: int = 3) -> list[dict[str, Any]]:
    """The first JSON objects of a JSONL file (non-objects and bad lines are skipped)."""
    records = []
    for line in head_lines(path, limit * 3):
        try:
            value = json.loads(line)
        except ValueError:
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
    try:
        return pd.read_json(path, lines=True, dtype=False)
    except (ValueError, TypeError):
        pass
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
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
    try:
        return json.loads(path.read_bytes())
    except RecursionError:
        raise ImportFormatError(f"{path}: nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise ImportFormatError(f"{path}: not JSON ({str(exc).split(':')[0]})") from None


def check_json_size(path: Path) -> None:
    """Refuse a JSON document too large to parse whole."""
    if path.stat().st_size > MAX_JSON_BYTES:
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
