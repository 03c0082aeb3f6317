"""Build the results frame from column arrays, vectorised (an importer fills what its source has)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from ..errors import ImportFormatError
from ..jsontext import nested_deeper_than
from ..results import COLUMNS, DTYPES, system_of

FRAME_COLUMNS = [*COLUMNS, "system"]


MAX_VALUE_DEPTH = 64  # an evaluation log's metadata, vars or messages nest under 15 levels


def results_from_columns(n: int, columns: dict[str, Any], *, where: str) -> pd.DataFrame:
    """A results frame of ``n`` rows: the documented columns in order, then ``system``. Columns
    not given are null; ``kind`` defaults to ``import``, ``version`` to 1, ``repeat`` to 0,
    ``system`` to ``label`` else ``model``. Scores must lie in [0, 1] (or be null).

    Example:
        >>> df = results_from_columns(2, {"probe": "t", "model": "m", "case_id": ["a", "b"],
        ...                               "score": [1.0, 0.5]}, where="x.json")
        >>> df[["kind", "probe", "case_id", "system", "score"]].values.tolist()
        [['import', 't', 'a', 'm', 1.0], ['import', 't', 'b', 'm', 0.5]]
    """
    data: dict[str, Any] = {
        "kind": "import",
        "version": 1,
        "repeat": 0,
        "params_hash": "",
        "jevalkit_version": __version__,
        **columns,
    }
    frame = pd.DataFrame(index=pd.RangeIndex(n))
    for column in FRAME_COLUMNS:
        value = data.get(column)
        if column == "system" and value is None:
            continue
        if isinstance(value, list | tuple | np.ndarray | pd.Series | pd.Index):
            frame[column] = (
                np.asarray(value, dtype=object) if _object(column) else np.asarray(value)
            )
        else:
            frame[column] = (
                pd.Series([value] * n, dtype=object) if n else pd.Series([], dtype=object)
            )
    for column, dtype in DTYPES.items():
        try:
            frame[column] = frame[column].astype(dtype)
        except (TypeError, ValueError):
            raise ImportFormatError(
                f"{where}: field {column!r} holds values that are not numbers"
            ) from None
    _check_depth(frame, where)
    if "system" not in frame:
        frame["system"] = system_of(frame)
    score = frame["score"].astype("Float64")
    bad = score.notna() & ((score < 0) | (score > 1))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ImportFormatError(
            f"{where}: record {i + 1}: score {score.iloc[i]} is outside [0, 1]; pass scale=(low, high)"
        )
    return frame[FRAME_COLUMNS]


def _check_depth(frame: pd.DataFrame, where: str) -> None:
    """Refuse a value nested deeper than :data:`MAX_VALUE_DEPTH` (another tool's log may nest
    900 deep, which parses, and then breaks every recursive step after it: writing, hashing)."""
    for column in frame.columns:
        if frame[column].dtype != object:
            continue
        for i, value in enumerate(frame[column]):
            if isinstance(value, dict | list) and nested_deeper_than(value, MAX_VALUE_DEPTH):
                raise ImportFormatError(
                    f"{where}: record {i + 1}: field {column!r} nests deeper than "
                    f"{MAX_VALUE_DEPTH} levels; jevalkit keeps values up to {MAX_VALUE_DEPTH} "
                    "levels deep"
                )


def _object(column: str) -> bool:
    return column not in ("version", "repeat", "score", "expected_level", "coverage", "latency_s")
