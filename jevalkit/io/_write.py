"""Write an imported frame as a jevalkit results file (``jevalkit import --out``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import ImportFormatError, ResultsError
from ..runner import COLUMNS, check_results_path, json_ready, validate_row, write_rows


def write_results(frame: pd.DataFrame, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``frame`` as results JSONL (the documented columns; NaN and NA as null), atomically.

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
