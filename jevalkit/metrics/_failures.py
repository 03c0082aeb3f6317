"""What went wrong in a run: the requests that ended in an error, by type, and the answers cut
off at ``max_tokens``; what ``jevalkit run`` and ``jevalkit judge`` print after their tables."""

from __future__ import annotations

import re

import pandas as pd

ERROR_SUMMARY_COLUMNS = ["type", "n", "status", "first_message"]
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def _error_field(error: object, field: str) -> object:
    return error.get(field) if isinstance(error, dict) else None


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
    table = pd.DataFrame(list(rows.values()), columns=ERROR_SUMMARY_COLUMNS, dtype=object)
    table["n"] = table["n"].astype(int)
    return table.sort_values("n", ascending=False, kind="stable").reset_index(drop=True)


def truncated(results: pd.DataFrame) -> pd.Series:
    """Which rows were cut off at ``max_tokens`` (``finish_reason`` ``length``): their output
    is incomplete, so a failing score may say more about the limit than about the model.

    Example:
        >>> truncated(pd.DataFrame({"finish_reason": ["stop", "length", None]})).tolist()
        [False, True, False]
    """
    if "finish_reason" not in results:
        return pd.Series(False, index=results.index)
    return results["finish_reason"].eq("length").fillna(False).astype(bool)


def scored(results: pd.DataFrame) -> int:
    """How many rows carry a verdict or a score (what a summary can count).

    Example:
        >>> scored(pd.DataFrame({"passed": [True, None], "score": [None, None]}))
        1
    """
    have = pd.Series(False, index=results.index)
    for column in ("passed", "score", "preference"):
        if column in results:
            have |= results[column].notna()
    return int(have.sum())
