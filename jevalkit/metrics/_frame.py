"""The data contract every metric follows: named columns, an explicit unit, no guessing.

A metric takes the columns it uses as keywords (``case=``, ``system=``, ``score=``, ``repeat=``,
``level=``, ``gold=``), defaulting to the results columns. A default column that is absent is an
error naming the columns present and the keyword to pass; nothing ever falls back to treating
rows as cases. ``case`` may be one column or several (the default is the results' case
identity, probe + version + case id; probe rows have no case id, so a probe is its own case);
``case=None`` says deliberately that every row is its own case.

Rows without a usable value (an ``error`` set, or the value missing) are skipped and counted in
``n_missing``; plain arrays are one case per value and must not hold NaN.

Groups and cases are sorted, so permuting rows never changes a number (bootstrap draws
included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsError
from ..results import system_of

CASE_COLUMNS = ("probe", "version", "case_id")
CaseSpec = str | Sequence[str] | None


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
            + (" (or case=None to make every row its own case)" if keyword == "case" else "")
        )
    return column


def system_names(frame: pd.DataFrame) -> pd.Series:
    """The system of each results row: its ``label`` when set, else its ``model`` (the derived
    ``system`` column :func:`jevalkit.read_results` adds).

    Example:
        >>> system_names(pd.DataFrame({"model": ["m", "m"], "label": [None, "T=1"]})).tolist()
        ['m', 'T=1']
    """
    require(frame, "model", "system", "the system: label, else model")
    return system_of(frame)


@dataclass
class Prepared:
    """A metric's input, checked: one row per usable value, with integer codes.

    Attributes:
        groups: the ``by`` keys, one row per group code (sorted).
        group: the group code of each value.
        case: the case code of each value (unique across groups; sorted within).
        values: the values (float).
        n_missing: per group code, rows skipped for an error or a missing value.
        unit: ``case``, or ``row`` (``case=None``), or ``value`` (a plain array).
        case_label: what a case is, for ``method`` strings.
        frame: the usable rows (for columns a metric needs beyond the value).
    """

    groups: pd.DataFrame
    group: np.ndarray
    case: np.ndarray
    values: np.ndarray
    n_missing: np.ndarray
    unit: str
    case_label: str
    frame: pd.DataFrame


def prepare(
    data: pd.DataFrame | Sequence[Any] | np.ndarray | pd.Series,
    value: str,
    *,
    by: CaseSpec,
    case: CaseSpec,
    keyword: str,
    to_float: bool = True,
) -> Prepared:
    """Check and code a metric's input (see the module docstring for the contract).

    Example:
        >>> p = prepare(pd.DataFrame({"q": ["a", "a", "b"], "s": [1.0, 0.0, None]}), "s",
        ...             by=None, case="q", keyword="score")
        >>> p.values.tolist(), p.case.tolist(), p.n_missing.tolist()
        ([1.0, 0.0], [0, 0], [1])
    """
    if not isinstance(data, pd.DataFrame):
        if by is not None:
            raise StatsError("by= needs a DataFrame; an array is one group")
        array = np.asarray(data, dtype=object).ravel()
        frame = pd.DataFrame({value: array, "_case": np.arange(array.size)})
        frame[value] = frame[value].where(frame[value].notna(), None)
        case_cols, unit, label = ["_case"], "value", "value"
    else:
        frame = data
        require(frame, value, keyword, "the values to summarise")
        case_cols = columns_of(case)
        for column in case_cols:
            require(frame, column, "case", "the unit of analysis")
        unit = "case" if case_cols else "row"
        label = "+".join(case_cols) if case_cols else "row"
    by_cols = columns_of(by)
    for column in by_cols:
        require(frame, column, "by", "a grouping column")
    raw = frame[value]
    missing = raw.isna().to_numpy().copy()
    if "error" in frame.columns:
        missing |= frame["error"].notna().to_numpy()
    codes, groups = group_codes(frame, by_cols)
    n_missing = np.bincount(codes[missing], minlength=len(groups))
    usable = frame.loc[~missing]
    if case_cols:
        case_codes, _ = group_codes(usable, list(dict.fromkeys([*by_cols, *case_cols])))
    else:
        case_codes = np.arange(len(usable))
    values = usable[value].to_numpy()
    if to_float:
        values = _floats(values, value)
    return Prepared(groups, codes[~missing], case_codes, values, n_missing, unit, label, usable)


def _floats(values: np.ndarray, name: str) -> np.ndarray:
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise StatsError(f"column {name!r} holds values that are not numbers") from None
    bad = ~np.isfinite(out)
    if bad.any():
        raise StatsError(
            f"column {name!r} holds {int(bad.sum())} infinite value(s); fix or drop them"
        )
    return out


def refuse_duplicate_rows(frame: pd.DataFrame, keys: list[str], repeat: str | None) -> None:
    """Refuse two rows of one unit (``keys``: the case and system columns) that ``repeat`` does
    not tell apart: a duplicated row is not a repeat, and averaging it in changes the answer.

    Example:
        >>> f = pd.DataFrame({"case_id": ["a", "a"], "system": "x", "repeat": [0, 0]})
        >>> refuse_duplicate_rows(f, ["case_id", "system"], "repeat")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: 1 row(s) repeat a case, system and 'repeat' already seen (case_id a, system x, repeat 0): duplicated rows are not repeats; drop them (DataFrame.drop_duplicates) or number the repeats
    """
    if not keys or frame.empty or not set(keys) <= set(frame.columns):
        return  # an absent column: require() names it
    if not frame.duplicated(keys).any():
        return
    if repeat is None or repeat not in frame.columns:
        raise StatsError(
            "several rows share a case and system, and there is no repeat column to tell "
            "repeats from duplicated rows: pass repeat='<column>' or drop the duplicates"
        )
    twice = frame.duplicated([*keys, repeat])
    if twice.any():
        at = ", ".join(f"{c} {v}" for c, v in frame.loc[twice, [*keys, repeat]].iloc[0].items())
        raise StatsError(
            f"{int(twice.sum())} row(s) repeat a case, system and {repeat!r} already seen "
            f"({at}): duplicated rows are not repeats; drop them (DataFrame.drop_duplicates) "
            "or number the repeats"
        )


def _kind(value: Any) -> str | None:
    """The type of a key value, numpy's scalars named as Python's (None for a missing one)."""
    if value is None or value != value:
        return None
    name = type(value).__name__
    return {"int64": "int", "float64": "float", "str_": "str"}.get(name, name)


def check_key_types(frame: pd.DataFrame, columns: list[str], system: str) -> None:
    """Refuse case keys whose type differs between systems (``1`` in one, ``"1"`` in the other):
    such keys never pair, and the comparison would silently hold no case.

    Example:
        >>> f = pd.DataFrame({"case_id": [1, "1"], "system": ["a", "b"]})
        >>> check_key_types(f, ["case_id"], "system")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: case column 'case_id' holds int for system 'a' but str for system 'b': such keys never pair; convert the column to one type (e.g. .astype(str))
    """
    if system not in frame.columns or frame.empty:
        return
    names = frame[system].astype(str)
    for column in (c for c in columns if c in frame.columns):  # absent: require() says so
        kinds = frame[column].map(_kind)
        seen = {
            who: sorted(set(k.dropna()))
            for who, k in kinds.groupby(names, sort=True)
            if k.notna().any()
        }
        items = [(who, frozenset(k)) for who, k in seen.items()]
        ref_name, ref = items[0] if items else (None, frozenset())
        other = [(who, k) for who, k in items if k != ref]
        if other:
            other_name, kinds_other = other[0]
            raise StatsError(
                f"case column {column!r} holds {'/'.join(sorted(ref))} for system {ref_name!r} "
                f"but {'/'.join(sorted(kinds_other))} for system {other_name!r}: such keys never "
                "pair; convert the column to one type (e.g. .astype(str))"
            )
        if len(ref) > 1:  # mixed in every system alike: 1 and "1" would still be two cases
            spelled: dict[str, Any] = {}
            for value in frame[column].dropna().unique():
                twin = spelled.setdefault(str(value), value)
                if _kind(twin) != _kind(value):
                    raise StatsError(
                        f"case column {column!r} holds both {twin!r} and {value!r}: two cases "
                        "or one? convert the column to one type (e.g. .astype(str))"
                    )


def group_codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Sorted integer codes of the combinations of ``columns`` (a missing value is a value),
    and the table of combinations, one row per code.

    Example:
        >>> group_codes(pd.DataFrame({"m": ["b", "a", "b"]}), ["m"])[0].tolist()
        [1, 0, 1]
    """
    if not columns:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=[0])
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


def by_groups(
    frame: pd.DataFrame,
    by: CaseSpec,
    compute,
) -> pd.DataFrame:
    """Apply ``compute`` to each group (or to everything) and stack one row per group (for
    metrics whose per-group work is not vectorised).

    Example:
        >>> f = pd.DataFrame({"m": ["a", "a", "b"], "x": [1, 2, 3]})
        >>> by_groups(f, "m", lambda g: {"n": len(g)})[["m", "n"]].values.tolist()
        [['a', 2], ['b', 1]]
    """
    cols = columns_of(by)
    for column in cols:
        require(frame, column, "by", "a grouping column")
    if not cols:
        return pd.DataFrame([compute(frame)])
    rows = []
    for key, group in frame.groupby(cols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(cols, key, strict=True)), **compute(group)})
    return pd.DataFrame(rows)


def attach(groups: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    """The group keys followed by the metric's columns."""
    out = groups.reset_index(drop=True).copy() if len(groups.columns) else pd.DataFrame()
    for name, values in columns.items():
        out[name] = values
    return out
