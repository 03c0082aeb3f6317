"""Write an imported frame as a jevalkit results file (``jevalkit import --out``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import ImportFormatError
from ..runner import COLUMNS, KEY_COLUMNS, check_results_path, json_ready, write_rows


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
    return write_rows(path, (json_ready(row) for row in rows))


def combine_imports(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Imported frames as one, refused when rows of different files share a results key
    (:data:`jevalkit.runner.KEY_COLUMNS`: the same probe, case, model, configuration and
    repeat), which one results file cannot hold.

    Raises:
        ImportFormatError: rows share a key (import the files into separate results files).

    Example:
        >>> from jevalkit.io import from_table
        >>> t = from_table(pd.DataFrame({"q": [1], "m": ["a"], "s": [0.5]}), case="q", system="m", score="s")
        >>> len(combine_imports([t, t.assign(case_id="2")]))
        2
        >>> combine_imports([t, t])
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: 2 rows from different files share a key (same probe, case, model, configuration and repeat); import the files into separate results files
    """
    combined = pd.concat(frames, ignore_index=True)
    clashes = combined.duplicated(list(KEY_COLUMNS), keep=False)
    if clashes.any():
        raise ImportFormatError(
            f"{int(clashes.sum())} rows from different files share a key (same probe, case, "
            "model, configuration and repeat); import the files into separate results files"
        )
    return combined
