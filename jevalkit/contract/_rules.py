"""The rules of the data contract, each written once; :func:`jevalkit.contract.prepare` applies
them (the one input step), and nothing else does.

- **scored rows** (:func:`_scored_mask`): a row with an ``error`` or without a value is not
  scored;
- **numbers** (:func:`_floats`): values are finite numbers;
- **scale** (:func:`_check_scale`): scores lie in [0, 1] or in a declared ``scale``; verdicts
  are 0/1;
- **duplicates** (:func:`_refuse_duplicates`): two rows of one identity that the repeat column
  does not tell apart are one row copied;
- **keys** (:func:`_check_key_types`, :func:`_check_complete_keys`): case keys of two types
  never pair; system names of two types that print alike are refused; item statistics refuse
  rows without a case or a system;
- **settings** (:func:`_settings_apart`): two probe versions or two generation settings
  (``params_hash``) of one system are different runs, kept apart or refused unless pooled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import StatsError
from ..results import CASE_COLUMNS, KEY_COLUMNS

Kind = Literal["score", "verdict", "number", "any"]
# the identity of a results row besides its case, system and repeat: the results key
# (results.KEY_COLUMNS) less the default case columns and the repeat
IDENTITY_COLUMNS = tuple(c for c in KEY_COLUMNS if c not in (*CASE_COLUMNS, "repeat"))
# what makes two runs of one probe different runs: its version and its generation settings
# (``probe`` comes with them: a version or a setting means nothing without its probe)
SETTING_COLUMNS = ("probe", "version", "params_hash")


def _scored_mask(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The scored-row rule: True where a row has no ``error`` and a value in every column.

    Example:
        >>> f = pd.DataFrame({"score": [1.0, None, 0.5], "error": [None, None, "timeout"]})
        >>> _scored_mask(f, ["score"]).tolist()
        [True, False, False]
    """
    ok = np.ones(len(frame), dtype=bool)
    for column in columns:
        ok &= frame[column].notna().to_numpy()
    if "error" in frame.columns:
        ok &= frame["error"].isna().to_numpy()
    return ok


def _floats(values: np.ndarray, name: str) -> np.ndarray:
    """The number rule: finite numbers, or one line naming the column."""
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


def _check_scale(
    values: np.ndarray, kind: Kind, scale: tuple[float, float] | None, name: str
) -> np.ndarray:
    """The scale rule: verdicts are 0/1; scores lie in [0, 1] or in ``scale`` (then normalised
    as (g - low) / (high - low)).

    Example:
        >>> _check_scale(np.array([1.0, 10.0]), "score", (1, 10), "grade").tolist()
        [0.0, 1.0]
        >>> _check_scale(np.array([2.0]), "verdict", None, "passed")
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


def _refuse_duplicates(
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
        >>> _refuse_duplicates(f, ["case_id", "system"], "repeat")
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


def _check_key_types(frame: pd.DataFrame, columns: Sequence[str], system: str | None) -> None:
    """The key-type rule: case keys whose type differs between systems (``1`` in one, ``"1"``
    in the other), or that mix ``1`` and ``"1"`` in one column, never pair: refused.

    Example:
        >>> f = pd.DataFrame({"case_id": [1, "1"], "system": ["a", "b"]})
        >>> _check_key_types(f, ["case_id"], "system")
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


def _check_system_names(frame: pd.DataFrame, system: str) -> None:
    """The key-type rule for systems: two system names of different types that print alike
    (``1`` and ``"1"``) would be one row of a table and two systems of the statistic.

    Example:
        >>> _check_system_names(pd.DataFrame({"system": [1, "1"]}), "system")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: column 'system' names system(s) ['1'] with values of different types (e.g. 1 and '1'), which would print as one: give every system one name of one type
    """
    if not pd.api.types.is_object_dtype(frame[system]):
        return  # one numpy dtype: one type
    names = [str(v) for v in frame[system].dropna().unique()]
    if len(set(names)) < len(names):
        clash = sorted({n for n in names if names.count(n) > 1})
        raise StatsError(
            f"column {system!r} names system(s) {clash} with values of different types (e.g. 1 "
            "and '1'), which would print as one: give every system one name of one type"
        )


def _check_complete_keys(frame: pd.DataFrame, case: Sequence[str], system: str | None) -> None:
    """The complete-key rule of item statistics: a row without a system or a case id is no
    cell of the system x item matrix.

    Example:
        >>> _check_complete_keys(pd.DataFrame({"case_id": [1, None]}), ["case_id"], None)
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: case column 'case_id' has 1 rows without a case id: they are no one item; fill or drop them
    """
    if system is not None and frame[system].isna().any():
        raise StatsError(f"column {system!r} has rows without a system; fill or drop them")
    for column in case:
        if frame[column].isna().any():
            raise StatsError(
                f"case column {column!r} has {int(frame[column].isna().sum())} rows without a "
                "case id: they are no one item; fill or drop them"
            )


def _settings_apart(frame: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """The setting columns (:data:`SETTING_COLUMNS`) that differ within the groups of ``keys``:
    a probe's versions, or its generation settings (``params_hash``). ``probe`` comes with
    ``version`` or ``params_hash``; a setting that differs only with the version is not named.

    Example:
        >>> df = pd.DataFrame({"system": "m", "probe": "trivia", "version": [1, 2],
        ...                    "params_hash": ["t0", "t1"]})
        >>> _settings_apart(df, ["system"])  # the settings differ with the version: it is enough
        ['probe', 'version']
        >>> _settings_apart(df.assign(version=1), ["system"])
        ['probe', 'params_hash']
        >>> _settings_apart(df.assign(version=1, params_hash="t0"), ["system"])
        []
    """
    keys = [c for c in keys if c in frame.columns]
    present = [c for c in SETTING_COLUMNS if c in frame.columns and c not in keys]
    differ: list[str] = []
    for column in present:
        if column == "probe":
            continue
        within = [*keys, *(["probe"] if "probe" in present else []), *differ]
        try:
            counts = (
                frame.groupby(within, dropna=False, sort=False)[column].nunique()
                if within
                else pd.Series([frame[column].nunique()])
            )
        except TypeError:  # unhashable cells in a grouping column: compare their text
            text = frame[[*within, column]].astype(str).where(frame[[*within, column]].notna())
            counts = text.groupby(within, dropna=False, sort=False)[column].nunique()
        if (counts > 1).any():
            differ.append(column)
    if differ and "probe" in present:
        differ.insert(0, "probe")
    return differ


def _keep_settings_apart(
    frame: pd.DataFrame,
    by: list[str],
    system: str | None,
    *,
    facets: Sequence[str] = (),
    pool: bool,
    apart: bool,
    systems: bool = False,
) -> list[str]:
    """The settings rule: ``by`` with the setting columns that differ within a ``by`` group of
    one system joined after it (``apart``), or a refusal naming them (a statistic with no
    groups to keep them in); ``pool=True``: ``by`` as given. A setting column the statistic
    models as a facet (``facets``) is read on purpose, not pooled. ``systems``: a summary of
    one system's runs (a mean, a pass rate) keeps two systems apart too (two models, or two
    ``--label`` names of one model, are two runs): the ``system`` column joins ``by`` first
    when it differs within a group."""
    if pool:
        return by
    if systems and system is not None and system in frame.columns and system not in by:
        counts = (
            frame.groupby(by, dropna=False, sort=False)[system].nunique()
            if by
            else pd.Series([frame[system].nunique()])
        )
        if (counts > 1).any():
            by = [*by, system]
    modelled = [c for c in facets if c in SETTING_COLUMNS]  # read on purpose, as a facet
    within = list(dict.fromkeys([*by, *([system] if system is not None else []), *modelled]))
    extra = [c for c in _settings_apart(frame, within) if c not in by]
    if not extra:
        return by
    if apart:
        return [*by, *extra]
    shown = [c for c in extra if c != "probe"]
    column = shown[0]
    values = sorted(
        (v.item() if isinstance(v, np.generic) else v for v in frame[column].dropna().unique()),
        key=str,
    )
    who = f" of one system (column {system!r})" if system is not None else ""
    raise StatsError(
        f"column {column!r} holds {len(values)} values ({', '.join(map(str, values[:4]))}) "
        f"within the rows{who}: two probe versions or generation settings are different runs, "
        f"not repeats of one case; keep one (e.g. rows[rows[{column!r}] == {values[0]!r}]), or "
        "pass pool=True to pool them on purpose"
    )
