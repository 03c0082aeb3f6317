"""Any table (a DataFrame, CSV, Parquet, JSON Lines) with its columns named: the data contract's
mapping, applied once, into the results frame."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ImportFormatError
from ..files import read_file
from ._frame import results_from_columns
from ._jsonl import check_file, load_jsonl

MAX_TABLE_BYTES = 2 * 1024**3  # a table is read whole into memory


def load_table(path: Path) -> pd.DataFrame:
    """A CSV, Parquet or JSON Lines file as a DataFrame (by its suffix); a CSV whose header
    reads as one column holding ``;`` is read separated by ``;`` (a spreadsheet's export)."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            raw = read_file(path, ImportFormatError, max_bytes=MAX_TABLE_BYTES)
            frame = pd.read_csv(io.BytesIO(raw), sep="\t" if suffix == ".tsv" else ",")
            # a spreadsheet's CSV export in some languages is separated by ';': read as such
            # (read with commas it is one column named 'a;b;c', and every name= misses)
            header = [str(c) for c in frame.columns]
            if len(header) == 1 and ";" in header[0]:
                frame = pd.read_csv(io.BytesIO(raw), sep=";")
            return frame
        if suffix in (".parquet", ".pq"):
            raw = read_file(path, ImportFormatError, max_bytes=MAX_TABLE_BYTES)
            return pd.read_parquet(io.BytesIO(raw))
    except (ValueError, OSError, ImportError, UnicodeDecodeError) as exc:
        raise ImportFormatError(
            f"{path}: cannot be read as a table ({str(exc).splitlines()[0]})"
        ) from None
    if suffix in (".jsonl", ".ndjson", ".json"):
        return load_jsonl(path)
    raise ImportFormatError(f"{path}: a table is a .csv, .tsv, .parquet or .jsonl file")


def from_table(
    table: pd.DataFrame | str | Path,
    *,
    case: str,
    system: str,
    score: str | None = None,
    passed: str | None = None,
    level: str | None = None,
    repeat: str | None = None,
    gold: str | None = None,
    scale: tuple[float, float] | None = None,
    probe: str | None = None,
) -> pd.DataFrame:
    """Any table as the results frame, its columns named explicitly.

    Args:
        table: a DataFrame, or a .csv / .tsv / .parquet / .jsonl file.
        case: the column naming the case (the unit of analysis: a question, a test, a document).
        system: the column naming the system (model, configuration).
        score: a score column in [0, 1] (or on ``scale``).
        passed: a pass/fail column (booleans or 0/1).
        level: a column of graded levels (kept as ``expected_level`` and ``verdict``; the score
            when ``score`` is not given, normalised by ``scale``).
        repeat: the column numbering repeats of a case; without it, repeats are numbered by their
            order in the table within each (case, system).
        gold: a gold label column.
        scale: ``(low, high)`` of ``score`` or ``level`` when they are not on [0, 1].
        probe: a name for what was measured (default ``table``, whatever the file is called, so
            two files of one benchmark pair by case; name it when tables hold different
            benchmarks, so their cases never pair).

    Returns:
        The results frame (:data:`jevalkit.COLUMNS`, then ``system``); the table's other columns
        are kept per row in ``source``.

    Example:
        >>> df = pd.DataFrame({"question": [1, 1, 2], "llm": ["a", "b", "a"], "grade": [9, 7, 10]})
        >>> out = from_table(df, case="question", system="llm", level="grade", scale=(1, 10))
        >>> out[["case_id", "system", "expected_level", "score"]].values.tolist()
        [['1', 'a', 9.0, 0.8888888888888888], ['1', 'b', 7.0, 0.6666666666666666], ['2', 'a', 10.0, 1.0]]
    """
    where = str(table) if not isinstance(table, pd.DataFrame) else "table"
    frame = table if isinstance(table, pd.DataFrame) else load_table(check_file(table))
    named = {
        "case": case,
        "system": system,
        "score": score,
        "passed": passed,
        "level": level,
        "repeat": repeat,
        "gold": gold,
    }
    for keyword, column in named.items():
        if column is not None and column not in frame.columns:
            raise ImportFormatError(
                f"{where}: no column {column!r} ({keyword}=); the columns are {sorted(map(str, frame.columns))}"
            )
    if score is None and passed is None and level is None:
        raise ImportFormatError(f"{where}: name the values: score=, passed= or level=")
    for keyword, column in named.items():
        structured = (
            frame[column].map(lambda v: isinstance(v, dict | list)) if column is not None else None
        )
        if structured is not None and structured.any():
            i = int(np.flatnonzero(structured.to_numpy())[0])
            raise ImportFormatError(
                f"{where}: record {i + 1}: {keyword}= column {column!r} holds a list or an object; "
                "it must hold one name or number per row"
            )
    n = len(frame)
    columns: dict[str, Any] = {
        "case_id": frame[case].astype(str).to_numpy(dtype=object),
        "model": frame[system].astype(str).to_numpy(dtype=object),
        "probe": probe or "table",
        "method": "table",
    }
    low, high = scale if scale is not None else (0.0, 1.0)
    if not high > low:
        raise ImportFormatError(
            f"{where}: scale must be (low, high) with high > low, got {scale!r}"
        )

    def numeric(column: str, keyword: str) -> np.ndarray:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[column].notna() & values.isna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ImportFormatError(
                f"{where}: record {i + 1}: {keyword}= column {column!r}: {frame[column].iloc[i]!r} is not a number"
            )
        values = values.to_numpy(dtype=float)
        outside = ~np.isnan(values) & ((values < low) | (values > high))
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            hint = "" if scale is not None else "; pass scale=(low, high)"
            raise ImportFormatError(
                f"{where}: record {i + 1}: {column!r} = {values[i]:g} is outside [{low:g}, {high:g}]{hint}"
            )
        return values

    if level is not None:
        levels = numeric(level, "level")
        columns["expected_level"] = levels
        # None as the array numpy makes of it (its stubs refuse a bare None)
        columns["verdict"] = np.where(np.isnan(levels), np.asarray(None), levels).astype(object)
    if score is not None:
        columns["score"] = (numeric(score, "score") - low) / (high - low)
    elif level is not None:
        columns["score"] = (columns["expected_level"] - low) / (high - low)
    if passed is not None:
        flags = frame[passed].map(
            lambda v: None if pd.isna(v) else bool(v) if v in (0, 1, True, False) else v
        )
        odd = flags.map(lambda v: v is not None and not isinstance(v, bool))
        if odd.any():
            i = int(np.flatnonzero(odd.to_numpy())[0])
            raise ImportFormatError(
                f"{where}: record {i + 1}: passed= column {passed!r}: {frame[passed].iloc[i]!r} is not true/false"
            )
        columns["passed"] = flags.to_numpy(dtype=object)
    if gold is not None:
        columns["gold"] = frame[gold].where(frame[gold].notna(), None).to_numpy(dtype=object)
    if repeat is not None:
        columns["repeat"] = pd.to_numeric(frame[repeat], errors="coerce").to_numpy()
    else:
        columns["repeat"] = frame.groupby([case, system], sort=False).cumcount().to_numpy()
    used = {c for c in named.values() if c is not None}
    rest = [c for c in frame.columns if c not in used]
    columns["source"] = frame[rest].to_dict("records") if rest else None
    return results_from_columns(n, columns, where=where)
