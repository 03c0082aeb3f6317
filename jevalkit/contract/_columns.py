"""The column spec: which columns a statistic reads, named once, with the results' defaults.

Every statistic takes the columns it uses as keywords of these names and defaults (``system``,
``case``, ``score``, ``passed``, ``repeat``, ``gold``, ``level``, and for pairwise games
``system_a``, ``system_b``, ``verdict``, ``position``); the contract test checks that no public
statistic spells one differently. A default column that is absent is an error naming the
columns present and the keyword to pass: nothing falls back to treating rows as cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsError
from ..results import CASE_COLUMNS

CaseSpec = str | Sequence[str] | None


@dataclass(frozen=True)
class Columns:
    """The columns of a results frame a statistic may read, with their defaults.

    Example:
        >>> Columns().case, Columns(score="grade").score
        (('probe', 'version', 'case_id'), 'grade')
    """

    system: str = "system"
    case: CaseSpec = CASE_COLUMNS
    score: str = "score"
    passed: str = "passed"
    repeat: str | None = "repeat"
    gold: str = "gold"
    level: str | None = "expected_level"
    system_a: str = "system_a"
    system_b: str = "system_b"
    verdict: str = "verdict"
    position: str = "position"


COLUMN_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Columns)}  # typed in Columns
# the other keywords every statistic spells the same way, with one default
COMMON_DEFAULTS: dict[str, Any] = {
    "by": None,
    "confidence": 0.95,
    "n_resamples": 2000,
    "seed": 0,
}


def columns_of(spec: CaseSpec) -> list[str]:
    """The column names of a ``by`` or ``case`` spec.

    Example:
        >>> columns_of("model"), columns_of(("probe", "case_id")), columns_of(None)
        (['model'], ['probe', 'case_id'], [])
        >>> columns_of(["system", "system"])
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: columns named more than once: system
    """
    if spec is None:
        return []
    cols = [spec] if isinstance(spec, str) else list(spec)
    repeated = sorted({c for c in cols if cols.count(c) > 1}, key=str)
    if repeated:
        raise StatsError(f"columns named more than once: {', '.join(map(str, repeated))}")
    return cols


def require(frame: pd.DataFrame, column: str, keyword: str, purpose: str) -> str:
    """``column`` if the frame has it; else a :class:`StatsError` naming what is there and the
    keyword to pass.

    Example:
        >>> require(pd.DataFrame({"question_id": [1]}), "case_id", "case", "the unit of analysis")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: no 'case_id' column (the unit of analysis); the columns are ['question_id']: pass case='<column>' (or case=None to make every row its own case)
    """
    if column not in frame.columns:
        present = sorted(map(str, frame.columns))
        shown = present if len(present) <= 12 else [*present[:12], "..."]
        raise StatsError(
            f"no {column!r} column ({purpose}); the columns are {shown}: pass {keyword}='<column>'"
            + _NONE_SAYS.get(keyword, "")
        )
    return column


# what ``None`` means for a column keyword that takes it, said where a default column is absent
_NONE_SAYS = {
    "case": " (or case=None to make every row its own case)",
    "system": " (or system=None when the rows are one system)",
}


def group_codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Sorted integer codes of the combinations of ``columns`` (a missing value is a value),
    and the table of combinations, one row per code.

    Example:
        >>> group_codes(pd.DataFrame({"m": ["b", "a", "b"]}), ["m"])[0].tolist()
        [1, 0, 1]
    """
    if not columns:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=[0])
    if all(_factorizable(frame[c].dtype) for c in columns):
        return _factorized_codes(frame, columns)
    keys = frame[columns]
    try:
        grouped = keys.groupby(columns, sort=True, dropna=False)
        codes = grouped.ngroup().to_numpy()
    except TypeError:  # mixed types in a key column: order by their text
        keys = keys.astype(str).where(keys.notna(), None)
        grouped = keys.groupby(columns, sort=True, dropna=False)
        codes = grouped.ngroup().to_numpy()
    table = grouped.size().reset_index()[columns]
    return codes.astype(np.int64), table.reset_index(drop=True)


def _factorizable(dtype: object) -> bool:
    """Key columns that sort by one rule, whose codes :func:`pandas.factorize` gives as
    ``groupby`` does (numbers, booleans, datetimes, text of the string dtype); an ``object``
    column may mix types, and a categorical one sorts by its categories: those take
    ``groupby``."""
    return isinstance(dtype, pd.StringDtype) or (
        isinstance(dtype, np.dtype) and dtype.kind in "biufmM"
    )


def _factorized_codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """:func:`group_codes` by :func:`pandas.factorize`, a column at a time: sorted codes, a
    missing value last (as ``groupby(sort=True, dropna=False)`` orders them), combined into one
    code per row in the columns' lexicographic order. The two ``groupby`` passes over the keys
    it replaces took most of ``mean_score``'s input step."""
    parts = [pd.factorize(frame[c], sort=True, use_na_sentinel=False) for c in columns]
    sizes = [len(uniques) for _, uniques in parts]
    if len(columns) == 1:
        codes, combos = parts[0][0], np.arange(sizes[0])[:, None]
    elif math.prod(sizes) <= 4 * len(frame) + 1024:  # few possible combinations: rank them
        combined = _combined(parts, sizes)
        present = np.zeros(math.prod(sizes), dtype=bool)
        present[combined] = True
        codes = (np.cumsum(present) - 1)[combined]
        combos = _split(np.flatnonzero(present), sizes)
    elif math.prod(sizes) < 2**62:
        seen, codes = np.unique(_combined(parts, sizes), return_inverse=True)
        combos = _split(seen, sizes)
    else:  # the combined code would overflow: combine row-wise
        stacked = np.column_stack([c for c, _ in parts])
        combos, codes = np.unique(stacked, axis=0, return_inverse=True)
    table = pd.DataFrame(
        {j: uniques.take(combos[:, j]) for j, (_, uniques) in enumerate(parts)}, copy=False
    )
    table.columns = pd.Index(columns, dtype=object)  # as groupby's table names them
    return np.asarray(codes, dtype=np.int64).reshape(-1), table


def _combined(parts: list, sizes: list[int]) -> np.ndarray:
    """One code per row: the columns' codes as the digits of a mixed-radix number."""
    combined = np.zeros(len(parts[0][0]), dtype=np.int64)
    for (codes, _), size in zip(parts, sizes, strict=True):
        combined = combined * size + codes
    return combined


def _split(combined: np.ndarray, sizes: list[int]) -> np.ndarray:
    """The columns' codes of each combined code (its mixed-radix digits), one column each."""
    out = np.empty((combined.size, len(sizes)), dtype=np.int64)
    for j in range(len(sizes) - 1, -1, -1):
        combined, out[:, j] = np.divmod(combined, sizes[j])
    return out
