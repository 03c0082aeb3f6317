"""Write an imported frame as a jevalkit results file (``jevalkit import --out``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ImportFormatError, ResultsError
from ..results import (
    COLUMNS,
    KEY_COLUMNS,
    RowsResult,
    check_results_path,
    json_ready,
    rows_of,
    validate_row,
    write_rows,
)


def write_results(
    frame: pd.DataFrame | RowsResult, out: str | Path, *, overwrite: bool = False
) -> Path:
    """Write ``frame`` (a results frame, or a run's result: its rows) as results JSONL (the
    documented columns; NaN and NA as null), atomically.

    Raises:
        ImportFormatError: ``out`` exists (unless ``overwrite``).
        ResultsError: ``out`` cannot be written.

    Example:
        >>> import tempfile
        >>> from jevalkit.io import from_table
        >>> df = from_table(pd.DataFrame({"q": [1], "m": ["a"], "s": [0.5]}), case="q", system="m", score="s")
        >>> path = write_results(df, tempfile.mkdtemp() + "/r.jsonl")
        >>> import jevalkit
        >>> jevalkit.read_results(path)["score"].tolist()
        [0.5]
    """
    frame = rows_of(frame)  # a run's result: its rows
    path = Path(out)
    if path.exists() and not overwrite:
        raise ImportFormatError(f"{path} already exists; choose another --out (or --overwrite)")
    check_results_path(path, writing=True)
    rows = frame[COLUMNS].astype(object).where(frame[COLUMNS].notna(), None).to_dict("records")
    ready = [json_ready(row) for row in rows]
    for i, row in enumerate(ready):  # never write a row jevalkit would then refuse to read
        try:
            validate_row(row, f"imported row {i + 1}")
        except ResultsError as exc:
            raise ImportFormatError(
                f"{exc}; not written: the source log holds a value of the wrong type there"
            ) from None
    return write_rows(path, ready)


def combine_imports(
    frames: list[pd.DataFrame], sources: list[str] | None = None, *, advice: str | None = None
) -> pd.DataFrame:
    """Imported frames as one, refused when rows share a results key
    (:data:`jevalkit.results.KEY_COLUMNS`: the same probe, case, model, configuration and
    repeat), which one results file cannot hold; ``sources`` names each frame's file, so a
    clash inside one file is named as such; ``advice`` replaces the fix the refusal names for a
    clash between files (import them into separate results files).

    Raises:
        ImportFormatError: rows share a key (a duplicated record in one log, or two files that
            belong in separate results files).

    Example:
        >>> from jevalkit.io import from_table
        >>> t = from_table(pd.DataFrame({"q": [1], "m": ["a"], "s": [0.5]}), case="q", system="m", score="s")
        >>> len(combine_imports([t, t.assign(case_id="2")]))
        2
        >>> combine_imports([t, t], ["a.csv", "b.csv"])
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: 2 rows from different files (a.csv, b.csv) share a key (same probe, case, model, configuration and repeat); import the files into separate results files
    """
    sources = sources or [f"file {i + 1}" for i in range(len(frames))]
    combined = pd.concat(frames, ignore_index=True)
    origin = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    clashes = combined.duplicated(list(KEY_COLUMNS), keep=False)
    if clashes.any():
        files = sorted({sources[i] for i in origin[clashes.to_numpy()]})
        where = (
            f"in {files[0]}" if len(files) == 1 else f"from different files ({', '.join(files)})"
        )
        advice = (
            "a log holds each sample once: check it for duplicated records"
            if len(files) == 1
            else advice or "import the files into separate results files"
        )
        raise ImportFormatError(
            f"{int(clashes.sum())} rows {where} share a key (same probe, case, model, "
            f"configuration and repeat); {advice}"
        )
    return combined
