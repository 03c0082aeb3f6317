"""The headline table of a results file: pass rate, mean score and (with repeats) consistency."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from ..errors import StatsError
from ._agreement import consistency
from ._frame import case_key
from ._scores import mean_score, pass_rate

SUMMARY_COLUMNS = ["metric", "n", "value", "ci_low", "ci_high", "method"]


def has_repeats(results: pd.DataFrame) -> bool:
    """Whether any case was run more than once (per system).

    Example:
        >>> has_repeats(pd.DataFrame({"probe": ["p", "p"], "repeat": [0, 1]}))
        True
    """
    keys = case_key(results)
    extra = [c for c in ("model", "label", "params_hash") if c in results.columns]
    return bool(results.assign(_c=keys).groupby(["_c", *extra], dropna=False).size().max() > 1)


def summarize(results: pd.DataFrame, *, by: str | Iterable[str] | None = None) -> pd.DataFrame:
    """One row per group and metric: ``pass_rate``, ``mean_score`` and, when cases were repeated,
    ``consistency``; columns: the ``by`` columns, then ``metric``, ``n``, ``value``, ``ci_low``,
    ``ci_high``, ``method``.

    Example:
        >>> df = pd.DataFrame({"case_id": ["a", "b"], "score": [1.0, 0.0], "passed": [True, False]})
        >>> summarize(df)["metric"].tolist()
        ['pass_rate', 'mean_score']
    """
    cols = [by] if isinstance(by, str) else list(by or [])
    parts = [pass_rate(results, by=cols).assign(metric="pass_rate"),
             mean_score(results, by=cols).assign(metric="mean_score")]  # fmt: skip
    if has_repeats(results):
        try:
            agreement = consistency(results, by=cols).rename(columns={"n_cases": "n"})
            parts.append(agreement.assign(metric="consistency"))
        except StatsError:
            pass
    return pd.concat([p[cols + SUMMARY_COLUMNS] for p in parts], ignore_index=True)
