"""The one input step every frame-level statistic takes: :func:`prepare`.

It names the columns a statistic uses (a missing one is an error naming what is there), and
applies, once, the rules of the data contract (each written once, in ``_rules``):

- **settings**: two probe versions or two generation settings (``params_hash``) of one system
  are different runs, never repeats of one case: they join the grouping after the ``by``
  columns (``apart``), or are refused naming the column (a statistic with no groups to keep
  them in); ``pool=True`` pools them on purpose;
- **scored rows**: a row with an ``error`` or without a value (or without any of ``also``) is
  not scored; it is counted in ``n_missing``, never read as 0;
- **duplicates**: two rows with the same identity (the ``by``, case, system and ``within``
  columns, the results key columns present, and the repeat number) are one row copied, not two
  repeats: refused; without a repeat column, rows sharing a case and system are refused when
  the statistic pairs or counts repeats (``need_repeat``);
- **key types**: case keys of different types (``1`` in one system, ``"1"`` in another, or both
  in one column) never pair, and system names of two types that print alike are two systems:
  refused; item statistics also refuse rows without a case or a system (``complete_keys``);
- **scale**: scores outside [0, 1] need ``scale=(low, high)`` (then they are normalised);
  verdicts must be 0/1; values must be finite numbers.

Groups and cases are sorted, so permuting rows never changes a number (bootstrap draws
included). Plain arrays are one case per value and must not hold NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsError
from ..results import RowsResult, design_names, rows_of, weighted_rows
from ._columns import CaseSpec, columns_of, group_codes, require
from ._rules import (
    Kind,
    _check_complete_keys,
    _check_key_types,
    _check_scale,
    _check_system_names,
    _floats,
    _keep_settings_apart,
    _refuse_duplicates,
    _scored_mask,
)


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
        by: the grouping columns: the ``by`` columns, then the setting columns kept apart.
        apart: the setting columns kept apart (joined to ``by``; empty when none differ).
        scored: per row of the input, whether it is scored (the rows of ``frame``).
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
    by: list[str] = field(default_factory=list)
    apart: list[str] = field(default_factory=list)
    scored: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

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
    complete_keys: bool = False,
    pool: bool = False,
    apart: bool = True,
    weighted: bool = False,
    systems_apart: bool = False,
) -> Prepared:
    """Check and code a statistic's input (the rules are in the module docstring).

    Args:
        data: a DataFrame (or a results object with rows, a run's: its ``rows``), or an array
            (one case per value).
        value: the column holding the values.
        by: grouping column(s).
        case: the column(s) naming a case; ``None``: every row is its own case.
        system: the system column, when the statistic reads it (key types are checked across
            systems, duplicates are found within a system, and settings are kept apart within
            a system).
        repeat: the column numbering repeats (duplicates are refused).
        within: further columns telling rows of one case and system apart (facets, variants;
            a setting column named here is modelled, so the settings rule leaves it alone).
        also: columns that must hold a value too for a row to be scored.
        kind: ``score`` (in [0, 1], or normalised by ``scale``), ``verdict`` (0/1), ``number``
            (any finite number) or ``any`` (values left as they are).
        scale: ``(low, high)`` of raw grades, for ``kind="score"``.
        keyword: the statistic's keyword for ``value``, for messages (default: ``value``).
        need_repeat: rows sharing a case and system without a repeat column are refused (for
            statistics that pair cases or count repeats).
        complete_keys: rows without a case id or a system are refused (item statistics: such a
            row is no cell of the system x item matrix).
        pool: the statistic's ``pool=``: a probe's versions and generation settings pooled on
            purpose (the settings rule does not apply).
        apart: settings that differ join the grouping (``by``, then them); ``False``: they
            are refused in one line naming the column (a statistic with no groups).
        systems_apart: a summary of one system's runs (``mean_score``, ``pass_rate``): two
            systems in a group are kept apart as settings are (``system`` joins the grouping).
        weighted: the caller is the estimator of the design that drew the rows (an active
            plan's): rows drawn with unequal probabilities are read (else refused in one line:
            no simple sample).

    Example:
        >>> p = prepare(pd.DataFrame({"q": ["a", "a", "b"], "s": [1.0, 0.0, None]}), "s", case="q")
        >>> p.values.tolist(), p.case.tolist(), p.n_missing.tolist()
        ([1.0, 0.0], [0, 0], [1])
        >>> prepare(pd.DataFrame({"q": ["a"], "s": [4.0]}), "s", case="q", kind="score")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: s range from 4 to 4, outside [0, 1]: pass scale=(low, high) to normalise them (e.g. scale=(1, 10) for 1-10 grades)
        >>> two = pd.DataFrame({"q": ["a", "a"], "version": [1, 2], "s": [1.0, 0.0]})
        >>> prepare(two, "s", case="q").groups.to_dict("records")  # two versions: apart
        [{'version': 1}, {'version': 2}]
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
            _check_system_names(frame, system)
        for column in [*within, *also]:
            require(frame, column, column, "a column this statistic reads")
        if complete_keys:
            _check_complete_keys(frame, case_cols, system)
        if not weighted:  # the design rule, beside the settings rule: which rows are a sample
            refuse_weighted(frame)
    given = columns_of(by)
    for column in given:
        require(frame, column, "by", "a grouping column")
    by_cols = (
        _keep_settings_apart(
            frame, given, system, facets=within, pool=pool, apart=apart, systems=systems_apart
        )
        if isinstance(data, pd.DataFrame)
        else given
    )
    missing = ~_scored_mask(frame, [value, *also])
    codes, groups = group_codes(frame, by_cols)
    n_missing = np.bincount(codes[missing], minlength=len(groups))
    usable = frame.loc[~missing]
    if unit == "case":
        _check_key_types(usable, case_cols, system)
        _refuse_duplicates(
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
    values = _check_scale(raw, kind, scale, value)
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
        by=by_cols,
        apart=by_cols[len(given) :],
        scored=~missing,
    )


def refuse_weighted(frame: pd.DataFrame) -> None:
    """The design rule: rows a weighted design drew (their ``design`` says ``weighted``: an
    active plan's, drawn with probabilities that differ between rows) are not a simple sample;
    a statistic that would read them as one refuses, naming the design and its own estimate.

    Example:
        >>> rows = pd.DataFrame({"score": [1.0], "design": [{"name": "active:2 of 9", "weighted": True}]})
        >>> refuse_weighted(rows)
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: 1 row(s) were drawn by the design 'active:2 of 9' with probabilities that differ between rows: they are not a simple sample, and a plain mean of them is biased; read them through the design's estimate (a run's result.design; for an active plan jevalkit.items.estimate(fit, plan, rows), or the run's own summary)
    """
    drawn = weighted_rows(frame)
    if drawn.any():
        names = design_names(frame[drawn])
        raise StatsError(
            f"{int(drawn.sum())} row(s) were drawn by the design {names[0]!r} with "
            "probabilities that differ between rows: they are not a simple sample, and a plain "
            "mean of them is biased; read them through the design's estimate (a run's "
            "result.design; for an active plan jevalkit.items.estimate(fit, plan, rows), or "
            "the run's own summary)"
        )
