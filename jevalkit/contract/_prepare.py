"""The one input step every frame-level statistic takes: :func:`prepare`.

It names the columns a statistic uses (a missing one is an error naming what is there), and
applies, once, the rules of the data contract:

- **scored rows**: a row with an ``error`` or without a value (or without any of ``also``) is
  not scored; it is counted in ``n_missing``, never read as 0;
- **duplicates**: two rows with the same identity (the ``by``, case, system and ``within``
  columns, the results key columns present, and the repeat number) are one row copied, not two
  repeats: refused; without a repeat column, rows sharing a case and system are refused when
  the statistic pairs or counts repeats (``need_repeat``);
- **key types**: case keys of different types (``1`` in one system, ``"1"`` in another, or both
  in one column) never pair: refused;
- **scale**: scores outside [0, 1] need ``scale=(low, high)`` (then they are normalised);
  verdicts must be 0/1; values must be finite numbers.

Groups and cases are sorted, so permuting rows never changes a number (bootstrap draws
included). Plain arrays are one case per value and must not hold NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import StatsError
from ._columns import CaseSpec, columns_of, group_codes, require
from ._result import RowsResult, rows_of

# the identity of a results row besides its case, system and repeat (runner.KEY_COLUMNS)
IDENTITY_COLUMNS = ("variant", "model", "params_hash", "label", "system_a", "system_b", "position")
Kind = Literal["score", "verdict", "number", "any"]


@dataclass
class Prepared:
    """A statistic's input, checked: one entry per scored row, with integer codes.

    Attributes:
        groups: the ``by`` keys, one row per group code (sorted).
        group: the group code of each value.
        case: the case code of each value (unique across groups; sorted within).
        values: the values (float, normalised to [0, 1] for ``kind="score"`` with a scale).
        raw: the values before normalisation.
        n_missing: per group code, rows not scored (an error or no value).
        unit: ``case``, or ``row`` (``case=None``), or ``value`` (a plain array).
        case_label: what a case is, for ``method`` strings.
        frame: the scored rows (for columns a statistic needs beyond the value).
        system_column: the system column, when one was named.
        cases: the case columns' values, one row per case code (``unit="case"``).
        system: the system of each value (as text), when a system column was named (read
            from ``frame`` when first asked for: most statistics never ask, and the text of
            every row's system costs as much as the rest of the input step).
    """

    groups: pd.DataFrame
    group: np.ndarray
    case: np.ndarray
    values: np.ndarray
    raw: np.ndarray
    n_missing: np.ndarray
    unit: str
    case_label: str
    frame: pd.DataFrame
    system_column: str | None = None
    cases: pd.DataFrame | None = None

    @cached_property
    def system(self) -> np.ndarray | None:
        """The system of each value (as text), or None without a system column."""
        if self.system_column is None:
            return None
        return self.frame[self.system_column].astype(str).to_numpy()

    def unit_name(self, one_case: bool = False) -> str:
        """What the interval is over, for ``method`` strings.

        Example:
            >>> prepare([0.5, 1.0], "score").unit_name()
            'values'
        """
        if self.unit == "value":
            return "values"
        if self.unit == "row":
            return "rows (case=None)"
        return (
            f"repeats of one case ({self.case_label})" if one_case else f"cases ({self.case_label})"
        )


def prepare(
    data: pd.DataFrame | RowsResult | Sequence[Any] | np.ndarray | pd.Series,
    value: str,
    *,
    by: CaseSpec = None,
    case: CaseSpec = None,
    system: str | None = None,
    repeat: str | None = None,
    within: Sequence[str] = (),
    also: Sequence[str] = (),
    kind: Kind = "number",
    scale: tuple[float, float] | None = None,
    keyword: str | None = None,
    need_repeat: bool = False,
) -> Prepared:
    """Check and code a statistic's input (the rules are in the module docstring).

    Args:
        data: a DataFrame (or a results object with rows, a run's: its ``rows``), or an array
            (one case per value).
        value: the column holding the values.
        by: grouping column(s).
        case: the column(s) naming a case; ``None``: every row is its own case.
        system: the system column, when the statistic reads it (key types are checked across
            systems, and duplicates are found within a system).
        repeat: the column numbering repeats (duplicates are refused).
        within: further columns telling rows of one case and system apart (facets, variants).
        also: columns that must hold a value too for a row to be scored.
        kind: ``score`` (in [0, 1], or normalised by ``scale``), ``verdict`` (0/1), ``number``
            (any finite number) or ``any`` (values left as they are).
        scale: ``(low, high)`` of raw grades, for ``kind="score"``.
        keyword: the statistic's keyword for ``value``, for messages (default: ``value``).
        need_repeat: rows sharing a case and system without a repeat column are refused (for
            statistics that pair cases or count repeats).

    Example:
        >>> p = prepare(pd.DataFrame({"q": ["a", "a", "b"], "s": [1.0, 0.0, None]}), "s", case="q")
        >>> p.values.tolist(), p.case.tolist(), p.n_missing.tolist()
        ([1.0, 0.0], [0, 0], [1])
        >>> prepare(pd.DataFrame({"q": ["a"], "s": [4.0]}), "s", case="q", kind="score")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: s range from 4 to 4, outside [0, 1]: pass scale=(low, high) to normalise them (e.g. scale=(1, 10) for 1-10 grades)
    """
    keyword = keyword or value
    data = rows_of(data)
    if not isinstance(data, pd.DataFrame):
        if by is not None:
            raise StatsError("by= needs a DataFrame; an array is one group")
        array = np.asarray(data, dtype=object).ravel()
        frame = pd.DataFrame({value: array, "_case": np.arange(array.size)})
        frame[value] = frame[value].where(frame[value].notna(), None)
        case_cols, unit, label, system = ["_case"], "value", "value", None
    else:
        frame = data
        require(frame, value, keyword, "the values to summarise")
        case_cols = columns_of(case)
        for column in case_cols:
            require(frame, column, "case", "the unit of analysis")
        unit = "case" if case_cols else "row"
        label = "+".join(map(str, case_cols)) if case_cols else "row"
        if system is not None:
            require(frame, system, "system", "the system each row belongs to")
        for column in [*within, *also]:
            require(frame, column, column, "a column this statistic reads")
    by_cols = columns_of(by)
    for column in by_cols:
        require(frame, column, "by", "a grouping column")
    missing = ~scored_mask(frame, [value, *also])
    codes, groups = group_codes(frame, by_cols)
    n_missing = np.bincount(codes[missing], minlength=len(groups))
    usable = frame.loc[~missing]
    if unit == "case":
        check_key_types(usable, case_cols, system)
        refuse_duplicates(
            usable,
            [*by_cols, *case_cols, *([system] if system else []), *within],
            repeat,
            need_repeat=need_repeat,
        )
    cases = None
    if case_cols:
        case_codes, cases = group_codes(usable, list(dict.fromkeys([*by_cols, *case_cols])))
    else:
        case_codes = np.arange(len(usable))
    raw = usable[value].to_numpy()
    if kind != "any":
        raw = _floats(raw, value)
    values = check_scale(raw, kind, scale, value)
    return Prepared(
        groups,
        codes[~missing],
        case_codes,
        values,
        raw,
        n_missing,
        unit,
        label,
        usable,
        system,
        cases,
    )


def scored_mask(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The scored-row rule: True where a row has no ``error`` and a value in every column.

    Example:
        >>> f = pd.DataFrame({"score": [1.0, None, 0.5], "error": [None, None, "timeout"]})
        >>> scored_mask(f, ["score"]).tolist()
        [True, False, False]
    """
    ok = np.ones(len(frame), dtype=bool)
    for column in columns:
        ok &= frame[column].notna().to_numpy()
    if "error" in frame.columns:
        ok &= frame["error"].isna().to_numpy()
    return ok


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


def check_scale(
    values: np.ndarray, kind: Kind, scale: tuple[float, float] | None, name: str
) -> np.ndarray:
    """The scale rule: verdicts are 0/1; scores lie in [0, 1] or in ``scale`` (then normalised
    as (g - low) / (high - low)).

    Example:
        >>> check_scale(np.array([1.0, 10.0]), "score", (1, 10), "grade").tolist()
        [0.0, 1.0]
        >>> check_scale(np.array([2.0]), "verdict", None, "passed")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: column 'passed' must hold True/False (or 1/0) verdicts, found 2
    """
    if kind == "verdict":
        odd = ~np.isin(values, (0.0, 1.0))
        if odd.any():
            raise StatsError(
                f"column {name!r} must hold True/False (or 1/0) verdicts, found {values[odd][0]:g}"
            )
        return values
    if kind != "score":
        return values
    if scale is not None:
        low, high = (float(x) for x in scale)
        if not high > low:
            raise StatsError(f"scale must be (low, high) with high > low, got {scale!r}")
        if values.size and (values.min() < low or values.max() > high):
            raise StatsError(
                f"{name} range from {values.min():g} to {values.max():g}, outside scale={scale!r}"
            )
        return (values - low) / (high - low)
    if values.size and (values.min() < 0 or values.max() > 1):
        raise StatsError(
            f"{name} range from {values.min():g} to {values.max():g}, outside [0, 1]: pass "
            "scale=(low, high) to normalise them (e.g. scale=(1, 10) for 1-10 grades)"
        )
    return values


def refuse_duplicates(
    frame: pd.DataFrame,
    keys: Sequence[str],
    repeat: str | None,
    *,
    need_repeat: bool = False,
) -> None:
    """The duplicate rule: two rows of one identity (``keys`` plus the results key columns
    present) that ``repeat`` does not tell apart are a copied row, not two repeats.

    Example:
        >>> f = pd.DataFrame({"case_id": ["a", "a"], "system": "x", "repeat": [0, 0]})
        >>> refuse_duplicates(f, ["case_id", "system"], "repeat")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: 1 row(s) repeat a case, system and 'repeat' already seen (case_id a, system x, repeat 0): duplicated rows are not repeats; drop them (DataFrame.drop_duplicates) or number the repeats
    """
    keys = list(dict.fromkeys(k for k in keys if k in frame.columns))
    if not keys or frame.empty:
        return
    identity = [*keys, *(c for c in IDENTITY_COLUMNS if c in frame.columns and c not in keys)]
    if repeat is None or repeat not in frame.columns:
        if need_repeat and _duplicated(frame, identity).any():
            raise StatsError(
                "several rows share a case and system, and there is no repeat column to tell "
                "repeats from duplicated rows: pass repeat='<column>' or drop the duplicates"
            )
        return
    twice = _duplicated(frame, [*identity, repeat])
    if twice.any():
        shown = [*keys, repeat]
        at = ", ".join(f"{c} {v}" for c, v in frame.loc[twice, shown].iloc[0].items())
        raise StatsError(
            f"{int(twice.sum())} row(s) repeat a case, system and {repeat!r} already seen "
            f"({at}): duplicated rows are not repeats; drop them (DataFrame.drop_duplicates) "
            "or number the repeats"
        )


def _duplicated(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    keys = frame[columns]
    try:
        return keys.duplicated().to_numpy()
    except TypeError:  # unhashable cells (lists): compare their text
        return keys.astype(str).duplicated().to_numpy()


def _kind(value: Any) -> str | None:
    """The type of a key value, numpy's scalars named as Python's (None for a missing one)."""
    if value is None or value != value:
        return None
    name = type(value).__name__
    return {"int64": "int", "float64": "float", "str_": "str"}.get(name, name)


def check_key_types(frame: pd.DataFrame, columns: Sequence[str], system: str | None) -> None:
    """The key-type rule: case keys whose type differs between systems (``1`` in one, ``"1"``
    in the other), or that mix ``1`` and ``"1"`` in one column, never pair: refused.

    Example:
        >>> f = pd.DataFrame({"case_id": [1, "1"], "system": ["a", "b"]})
        >>> check_key_types(f, ["case_id"], "system")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: case column 'case_id' holds int for system 'a' but str for system 'b': such keys never pair; convert the column to one type (e.g. .astype(str))
    """
    if frame.empty:
        return
    if system is None or system not in frame.columns:
        names = pd.Series("", index=frame.index)
    else:
        names = frame[system].astype(str)
    for column in (c for c in columns if c in frame.columns):
        if not pd.api.types.is_object_dtype(frame[column]):
            continue  # one numpy dtype: one type
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
