"""The results frame: rows as a pandas DataFrame with the documented columns, in key order, with
stable dtypes and the derived ``system`` column."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ResultsError
from ._columns import COLUMNS, DTYPES, key_order
from ._read import latest_rows


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


def read_results(path: str | Path) -> pd.DataFrame:
    """Read a results file into a DataFrame with the documented, stable columns
    (:data:`jevalkit.results.COLUMNS`), one row per key.

    Every row is checked against the results format: a file that is not jevalkit results (say,
    another tool's JSONL) is refused with the missing columns named, never read as one row.
    Rows come in key order (:func:`key_order`), whatever order they were written in.
    When a key appears more than once the later row wins (a re-run replacing an earlier row):
    a warning says how many were replaced (:func:`latest_rows` gives the count as
    ``.replaced``).

    Example:
        >>> import tempfile, pathlib
        >>> from jevalkit.results import ResultRow
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
    frame = rows_frame(rows)
    if replaced:
        warnings.warn(
            f"{path}: {replaced} row(s) were replaced by later rows with the same key "
            "(re-runs of the same request); the later row is used",
            stacklevel=2,
        )
    return frame


def rows_frame(rows: dict[tuple, dict[str, Any]]) -> pd.DataFrame:
    """The frame :func:`read_results` makes of the rows of a file by key (as
    :func:`latest_rows` reads them): in key order, with the documented columns."""
    # in key order, not the order requests happened to finish: every result computed from the
    # frame (a sum, a mean, a first row) is then the same however the rows arrived
    return results_frame([rows[k] for k in sorted(rows, key=key_order)])
