"""Facts about results rows that the CLI and the reports print: which rows were scored, cut off
at ``max_tokens`` or ended in an error, whether cases were repeated, two runs as one frame.

These are not statistics (no estimate, no interval), so they are not in :mod:`jevalkit.metrics`'
face; they belong to the results layer and move there (``jevalkit.results``) once it exists.

Example:
    >>> from jevalkit.metrics.rows import scored
    >>> scored(pd.DataFrame({"passed": [True, None]}))
    1
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from ..contract import (
    CASE_COLUMNS,
    CaseSpec,
    Result,
    columns_of,
    group_codes,
    not_a_statistic,
    require,
    rows_of,
)
from ..errors import StatsError

__all__ = [
    "SETTING_COLUMNS",
    "ErrorShare",
    "combine_runs",
    "error_share",
    "error_summary",
    "has_repeats",
    "kept_apart",
    "kept_apart_by",
    "scored",
    "truncated",
]
# what makes two runs of a probe different runs: its version and its generation settings
SETTING_COLUMNS = ("probe", "version", "params_hash")

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def _error_field(error: object, field: str) -> object:
    return error.get(field) if isinstance(error, dict) else None


@not_a_statistic("counts the error types of rows (facts about rows, no estimate)")
def error_summary(results: pd.DataFrame, *, limit: int = 200) -> pd.DataFrame:
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
    results = rows_of(results)  # a run's result: its rows
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


@not_a_statistic("flags rows cut off at max_tokens (facts about rows, no estimate)")
def truncated(results: pd.DataFrame) -> pd.Series:
    """Which rows were cut off at ``max_tokens`` (``finish_reason`` ``length``): their output
    is incomplete, so a failing score may say more about the limit than about the model.

    Example:
        >>> truncated(pd.DataFrame({"finish_reason": ["stop", "length", None]})).tolist()
        [False, True, False]
    """
    results = rows_of(results)  # a run's result: its rows
    if "finish_reason" not in results:
        return pd.Series(False, index=results.index)
    return results["finish_reason"].eq("length").fillna(False).astype(bool)


@not_a_statistic("counts the rows with a verdict or score (facts about rows, no estimate)")
def scored(results: pd.DataFrame) -> int:
    """How many rows carry a verdict or a score (what a summary can count).

    Example:
        >>> scored(pd.DataFrame({"passed": [True, None], "score": [None, None]}))
        1
    """
    results = rows_of(results)  # a run's result: its rows
    have = pd.Series(False, index=results.index)
    for column in ("passed", "score", "preference"):
        if column in results:
            have |= results[column].notna()
    return int(have.sum())


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


@not_a_statistic("counts error rows and all rows (facts about rows, no estimate)")
def error_share(results: pd.DataFrame) -> ErrorShare:
    """The error rows and all rows of ``results`` (a row is an error when its ``error`` is
    set), as an :class:`ErrorShare` that unpacks as ``(errors, total)``.

    Example:
        >>> errors, total = error_share(pd.DataFrame({"error": [None, {"type": "timeout"}, None]}))
        >>> errors, total
        (1, 3)
        >>> error_share(pd.DataFrame({"error": [None, {"type": "timeout"}]})).share
        0.5
    """
    results = rows_of(results)  # a run's result: its rows
    errors = int(results["error"].notna().sum()) if "error" in results.columns else 0
    total = len(results)
    return ErrorShare(errors, total, errors / total if total else math.nan)


@not_a_statistic("tells whether a case was run twice (facts about rows, no estimate)")
def has_repeats(
    results: pd.DataFrame, *, case: CaseSpec = CASE_COLUMNS, system: str | None = "system"
) -> bool:
    """Whether any case was run more than once by one system.

    Example:
        >>> has_repeats(pd.DataFrame({"probe": ["p", "p"], "version": [1, 1], "case_id": [None, None],
        ...                           "system": ["m", "m"], "repeat": [0, 1]}))
        True
    """
    results = rows_of(results)  # a run's result: its rows
    cols = columns_of(case) + ([system] if system is not None else [])
    for column in cols:
        require(results, column, "case" if column != system else "system", "identifies a case")
    if results.empty:
        return False
    codes, _ = group_codes(results, cols)
    return bool(pd.Series(codes).value_counts().max() > 1)


@not_a_statistic("joins two runs into one frame (plumbing for a comparison, no estimate)")
def combine_runs(base: pd.DataFrame, head: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """One frame of a base and a head run, and the baseline system's name: the base must hold one
    system; names shared by both runs are told apart as ``base: <name>`` / ``head: <name>``.

    Raises:
        StatsError: the base run holds several systems (compare within one file instead).

    Example:
        >>> b = pd.DataFrame({"system": ["m"], "x": [1]})
        >>> frame, name = combine_runs(b, b)
        >>> sorted(frame["system"]), name
        (['base: m', 'head: m'], 'base: m')
    """
    base = rows_of(base)  # a run's result: its rows
    head = rows_of(head)  # a run's result: its rows
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
    return pd.concat([base, head], ignore_index=True), str(base["system"].iloc[0])


@not_a_statistic("names the setting columns that differ (facts about rows, no estimate)")
def kept_apart(results: pd.DataFrame, by: CaseSpec = None) -> list[str]:
    """The setting columns (:data:`SETTING_COLUMNS`) that differ within a ``by`` group: a
    probe's versions, or its generation settings (``params_hash``), which a summary must keep
    apart rather than pool. ``probe`` comes with ``version`` or ``params_hash`` (a version or a
    setting means nothing without its probe).

    Example:
        >>> df = pd.DataFrame({"system": "m", "probe": "trivia", "version": [1, 2],
        ...                    "params_hash": ["t0", "t1"]})
        >>> kept_apart(df, by="system")  # the settings differ with the version: it is enough
        ['probe', 'version']
        >>> kept_apart(df.assign(version=1), by="system")
        ['probe', 'params_hash']
        >>> kept_apart(df.assign(version=1, params_hash="t0"), by="system")
        []
    """
    results = rows_of(results)  # a run's result: its rows
    cols = [c for c in columns_of(by) if c in results.columns]
    present = [c for c in SETTING_COLUMNS if c in results.columns and c not in cols]
    differ = []
    for column in present:
        if column == "probe":
            continue
        keys = [*cols, *(["probe"] if "probe" in present else []), *differ]
        counts = (
            results.groupby(keys, dropna=False, sort=False)[column].nunique()
            if keys
            else pd.Series([results[column].nunique()])
        )
        if (counts > 1).any():
            differ.append(column)
    if differ and "probe" in present:
        differ.insert(0, "probe")
    return differ


@not_a_statistic("widens a grouping by the setting columns that differ (plumbing, no estimate)")
def kept_apart_by(data: object, by: CaseSpec = None, *, pool: bool = False) -> CaseSpec:
    """``by`` with the setting columns that differ within its groups (:func:`kept_apart`)
    joined after it, so a statistic called directly keeps a probe's versions and generation
    settings apart as :func:`jevalkit.metrics.summarize` does (two settings' rows of a case are
    not repeats of one case); ``pool=True``, or data that is not a frame: ``by`` as given.

    Example:
        >>> df = pd.DataFrame({"system": "m", "probe": "p", "version": [1, 2]})
        >>> kept_apart_by(df, "system"), kept_apart_by(df, "system", pool=True)
        (['system', 'probe', 'version'], 'system')
    """
    frame = rows_of(data)
    if pool or not isinstance(frame, pd.DataFrame):
        return by
    extra = kept_apart(frame, by)
    return [*columns_of(by), *extra] if extra else by
