"""Facts about results rows that the CLI and the reports print: which rows were scored, cut off
at ``max_tokens`` or ended in an error, whether cases were repeated, two runs as one frame.

They estimate nothing (no estimate, no interval): they read the rows as the results layer
defines them, and each takes a results object that carries rows (a run's) where it takes a frame.

Example:
    >>> from jevalkit.results import scored
    >>> scored(pd.DataFrame({"passed": [True, None]}))
    1
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..errors import StatsError
from ._columns import CASE_COLUMNS
from ._result import Result, RowsResult, rows_of

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def _error_field(error: object, field: str) -> object:
    return error.get(field) if isinstance(error, dict) else None


def error_summary(results: pd.DataFrame | RowsResult, *, limit: int = 200) -> pd.DataFrame:
    """One row per error type, most frequent first: ``type``, ``n`` (rows), ``status`` (the
    first row's HTTP status, when there was one) and ``first_message`` (the first row's message
    on one line, at most ``limit`` characters; keys were redacted before rows were written).

    Example:
        >>> df = pd.DataFrame({"error": [None, {"type": "http_status", "status": 401,
        ...     "message": "bad key\\n(redacted)"}, {"type": "timeout", "message": "60 s"},
        ...     {"type": "http_status", "status": 401, "message": "bad key"}]})
        >>> error_summary(df).values.tolist()
        [['http_status', 2, 401, 'bad key (redacted)'], ['timeout', 1, None, '60 s']]
    """
    results = rows_of(results)
    errors = results["error"][results["error"].notna()] if "error" in results else pd.Series()
    rows: dict[str, list] = {}
    for error in errors:
        kind = str(_error_field(error, "type") or "error")
        if kind in rows:
            rows[kind][1] += 1
            continue
        message = _CONTROL.sub(" ", str(_error_field(error, "message") or "")).strip()
        if len(message) > limit:
            message = message[: limit - 3] + "..."
        rows[kind] = [kind, 1, _error_field(error, "status"), message]
    table = pd.DataFrame(
        list(rows.values()), columns=["type", "n", "status", "first_message"], dtype=object
    )
    table["n"] = table["n"].astype(int)
    return table.sort_values("n", ascending=False, kind="stable").reset_index(drop=True)


def truncated(results: pd.DataFrame | RowsResult) -> pd.Series:
    """Which rows were cut off at ``max_tokens`` (``finish_reason`` ``length``): their output
    is incomplete, so a failing score may say more about the limit than about the model.

    Example:
        >>> truncated(pd.DataFrame({"finish_reason": ["stop", "length", None]})).tolist()
        [False, True, False]
    """
    results = rows_of(results)
    if "finish_reason" not in results:
        return pd.Series(False, index=results.index)
    return results["finish_reason"].eq("length").fillna(False).astype(bool)


def scored(results: pd.DataFrame | RowsResult) -> int:
    """How many rows carry a verdict or a score (what a summary can count).

    Example:
        >>> scored(pd.DataFrame({"passed": [True, None], "score": [None, None]}))
        1
    """
    results = rows_of(results)
    have = pd.Series(False, index=results.index)
    for column in ("passed", "score", "preference"):
        if column in results:
            have |= results[column].notna()
    return int(have.sum())


# the share of failed requests above which a gate is undecided and a run exits 1 (--max-error-rate)
DEFAULT_MAX_ERROR_RATE = 0.05


@dataclass(frozen=True)
class ErrorShare(Result):
    """The error rows of a results frame (:func:`error_share`): unpacks as ``(errors, total)``.

    Attributes:
        errors: the rows whose ``error`` is set.
        total: all rows.
        share: ``errors / total`` (NaN when there are no rows).
    """

    errors: int
    total: int
    share: float
    _unpack = ("errors", "total")

    def over(self, limit: float) -> bool:
        """Whether more than ``limit`` (a share from 0 to 1) of the rows are errors: the one
        rule behind the gate's ``--max-error-rate`` and a run's exit code.

        Example:
            >>> error_share(pd.DataFrame({"error": [None, {"type": "timeout"}]})).over(0.05)
            True
        """
        return bool(self.total) and self.errors / self.total > limit


def error_share(results: pd.DataFrame | RowsResult) -> ErrorShare:
    """The error rows and all rows of ``results`` (a row is an error when its ``error`` is
    set), as an :class:`ErrorShare` that unpacks as ``(errors, total)``.

    Example:
        >>> errors, total = error_share(pd.DataFrame({"error": [None, {"type": "timeout"}, None]}))
        >>> errors, total
        (1, 3)
        >>> error_share(pd.DataFrame({"error": [None, {"type": "timeout"}]})).share
        0.5
    """
    results = rows_of(results)
    errors = int(results["error"].notna().sum()) if "error" in results.columns else 0
    total = len(results)
    return ErrorShare(errors, total, errors / total if total else math.nan)


def has_repeats(
    results: pd.DataFrame | RowsResult,
    *,
    case: str | Sequence[str] | None = CASE_COLUMNS,
    system: str | None = "system",
) -> bool:
    """Whether any case was run more than once by one system (``case``: the columns naming a
    case; ``system=None``: the rows are one system).

    Example:
        >>> has_repeats(pd.DataFrame({"probe": ["p", "p"], "version": [1, 1], "case_id": [None, None],
        ...                           "system": ["m", "m"], "repeat": [0, 1]}))
        True
    """
    results = rows_of(results)
    cases = [] if case is None else [case] if isinstance(case, str) else list(case)
    named = [(c, "case") for c in cases] + ([(system, "system")] if system is not None else [])
    for column, keyword in named:
        if column not in results.columns:
            raise StatsError(
                f"no {column!r} column (identifies a case); the columns are "
                f"{sorted(map(str, results.columns))[:12]}: pass {keyword}='<column>'"
            )
    if results.empty:
        return False
    keys = results[[c for c, _ in named]] if named else pd.DataFrame(index=results.index)
    if keys.columns.empty:
        return len(results) > 1
    try:
        return bool(keys.duplicated().any())
    except TypeError:  # unhashable cells (lists): compare their text
        return bool(keys.astype(str).duplicated().any())


@dataclass(frozen=True, eq=False)
class CombinedRuns(RowsResult):
    """A base and a head run as one set of rows (:func:`combine_runs`); every statistic takes
    it where it takes a results frame (its ``rows``).

    Attributes:
        rows: both runs' rows; names shared by both runs told apart as ``base: <name>`` and
            ``head: <name>``.
        baseline: the base run's system, as named in ``rows``.
        systems: every system in ``rows`` (sorted).
    """

    baseline: str = ""
    systems: tuple[str, ...] = ()


def combine_runs(base: pd.DataFrame | RowsResult, head: pd.DataFrame | RowsResult) -> CombinedRuns:
    """One set of rows of a base and a head run, and the baseline system's name: the base must
    hold one system; names shared by both runs are told apart as ``base: <name>`` /
    ``head: <name>``.

    Raises:
        StatsError: the base run holds several systems (compare within one file instead).

    Example:
        >>> b = pd.DataFrame({"system": ["m"], "x": [1]})
        >>> both = combine_runs(b, b)
        >>> sorted(both.rows["system"]), both.baseline
        (['base: m', 'head: m'], 'base: m')
    """
    base, head = rows_of(base), rows_of(head)
    base_systems = sorted(base["system"].dropna().astype(str).unique())
    if len(base_systems) != 1:
        raise StatsError(
            f"the base run holds {len(base_systems)} systems ({', '.join(base_systems[:5])}); "
            "compare within one file with --baseline SYSTEM"
        )
    shared = set(base_systems) & set(head["system"].dropna().astype(str))
    if shared:
        base = base.assign(system="base: " + base["system"].astype(str))
        head = head.assign(system="head: " + head["system"].astype(str))
    rows = pd.concat([base, head], ignore_index=True)
    systems = tuple(sorted(rows["system"].dropna().astype(str).unique()))
    return CombinedRuns(rows, baseline=str(base["system"].iloc[0]), systems=systems)
