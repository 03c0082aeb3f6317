"""Write an imported frame as a jevalkit results file (``jevalkit import --out``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from ..errors import ImportFormatError
from ..runner import COLUMNS, check_results_path, finite


def write_results(frame: pd.DataFrame, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``frame`` as results JSONL (the documented columns; NaN and NA as null), atomically.

    Raises:
        ImportFormatError: ``out`` exists (unless ``overwrite``), or cannot be written.

    Example:
        >>> import tempfile
        >>> from jevalkit.io import from_table
        >>> df = from_table(pd.DataFrame({"q": [1], "m": ["a"], "s": [0.5]}), case="q", system="m", score="s")
        >>> path = write_results(df, tempfile.mkdtemp() + "/r.jsonl")
        >>> import jevalkit
        >>> jevalkit.read_results(path)["score"].tolist()
        [0.5]
    """
    path = Path(out)
    if path.exists() and not overwrite:
        raise ImportFormatError(f"{path} already exists; choose another --out (or --overwrite)")
    check_results_path(path, writing=True)
    rows = frame[COLUMNS].astype(object).where(frame[COLUMNS].notna(), None).to_dict("records")
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(
                    json.dumps(finite(row), separators=(",", ":"), allow_nan=False, default=_plain)
                    + "\n"
                )
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ImportFormatError(f"{path}: cannot write ({exc.strerror})") from None
    return path


def _plain(value: object) -> object:
    item = getattr(value, "item", None)
    if item is not None:
        return item()
    if isinstance(value, set | tuple):
        return list(value)
    return str(value)
