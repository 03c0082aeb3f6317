"""The headline tables: a results file's summary, and what ``jevalkit run`` prints."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, estimator, finish
from ..errors import StatsError
from ..results import has_repeats, truncated
from ._agreement import consistency
from ._scores import mean_score, pass_rate

SUMMARY_COLUMNS = ["metric", "n", "value", "ci_low", "ci_high", "method"]
RUN_COLUMNS = [
    "probe",
    "system",
    "n",
    "n_cases",
    "passed",
    "errors",
    "truncated",
    "pass_rate",
    "ci_low",
    "ci_high",
    "method",
]


@estimator(
    unit="case",
    estimand="pass rate, mean score and (with repeats) consistency per group",
    interval="those of pass_rate, mean_score and consistency",
    checks=("order", "rename", "method", "scale", "no_spread", "settings"),
    call={"by": "system", "case": "case_id"},
    note="one case: pass_rate's Wilson interval over its repeats, said in method",
)
def summarize(
    results: pd.DataFrame,
    *,
    by: CaseSpec = None,
    passed: str = "passed",
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    n_resamples: int = 2000,
    pool: bool = False,
) -> pd.DataFrame:
    """One row per group and metric: ``pass_rate`` (when there is a ``passed`` column holding
    verdicts),
    ``mean_score`` (when there is a ``score`` column holding values) and, when cases were repeated,
    ``consistency``; columns: the ``by`` columns, then ``metric``, ``n``, ``value``, ``ci_low``,
    ``ci_high``, ``method``.

    Runs of a probe at two versions (``trivia@1`` and ``trivia@2``), or with two generation
    settings (``params_hash``: T = 0 and T = 1), are different runs, never pooled silently:
    when they differ within a ``by`` group of one system, ``probe``, ``version`` and
    ``params_hash`` (those that differ: the settings rule of :func:`jevalkit.contract.prepare`)
    join the grouping, as columns after the ``by`` columns. ``pool=True`` pools them on
    purpose.

    Example:
        >>> df = pd.DataFrame({"case_id": ["a", "b"], "score": [1.0, 0.0], "passed": [True, False]})
        >>> summarize(df, case="case_id", system=None)["metric"].tolist()
        ['pass_rate', 'mean_score']
    """
    parts = []
    kept: dict[str, Any] = {"by": by, "case": case, "system": system, "pool": pool}
    if passed in results.columns and results[passed].notna().any():
        parts.append(pass_rate(results, passed=passed, **kept).assign(metric="pass_rate"))
    if score in results.columns and results[score].notna().any():
        table = mean_score(results, score=score, bimodality=False, **kept)
        parts.append(table.assign(metric="mean_score"))
    if not parts:
        raise StatsError(f"no {passed!r} or {score!r} column to summarise; pass passed= or score=")
    # the grouping the statistics kept (the by columns, then the settings kept apart)
    cols = list(parts[0].columns[: list(parts[0].columns).index("n")])
    if passed in results.columns and has_repeats(results, case=case, system=system):
        try:
            level = "expected_level" if "expected_level" in results.columns else None
            agreement = consistency(
                results, passed=passed, level=level, n_resamples=n_resamples, **kept
            )
            parts.append(agreement.rename(columns={"n_cases": "n"}).assign(metric="consistency"))
        except StatsError:
            pass  # no case ran twice within a group: nothing to report
    table = pd.concat([p[cols + SUMMARY_COLUMNS] for p in parts], ignore_index=True)
    return finish(table, order=[*cols, *SUMMARY_COLUMNS])


@estimator(
    unit="case",
    estimand="pass rate per probe version and system, with the run's errors and truncations",
    interval="that of pass_rate (Wilson, case-clustered)",
    checks=("order", "rename", "method", "scale", "no_spread", "settings"),
)
def run_summary(results: pd.DataFrame, *, pool: bool = False) -> pd.DataFrame:
    """What ``jevalkit run`` prints: per probe version and system, the pass rate with its
    case-clustered Wilson interval (the same numbers as :func:`pass_rate`), the requests that
    ended in an error, the answers cut off at ``max_tokens`` (``truncated``: they are scored,
    as the incomplete output they are) and the cases behind them. Two generation settings
    (``params_hash``) of a probe version and system get a row each (the column after
    ``system``); ``pool=True`` pools them.

    Example:
        >>> df = pd.DataFrame({"probe": ["p"] * 3, "version": [1] * 3, "case_id": [None] * 3,
        ...                    "system": ["m"] * 3, "passed": [True, False, None],
        ...                    "error": [None, None, {"type": "timeout"}],
        ...                    "finish_reason": [None, "length", None]})
        >>> run_summary(df)[["probe", "n", "passed", "errors", "truncated", "pass_rate"]].values.tolist()
        [['p@1', 2, 1, 1, 1, 0.5]]
    """
    frame = results.assign(
        _probe=results["probe"] + "@" + results["version"].astype(str),
        _truncated=truncated(results).astype(int),
    )
    table = pass_rate(frame, by=["_probe", "system"], pool=pool)
    # the settings kept apart within a probe version and system (its generation settings)
    apart = [
        c
        for c in table.columns[: list(table.columns).index("n")]
        if c not in ("_probe", "system", "probe", "version")
    ]
    keys = ["_probe", "system", *apart]
    cut = frame.groupby(keys, sort=False, dropna=False)["_truncated"].sum()
    at = pd.MultiIndex.from_frame(table[keys])
    return finish(
        {
            "probe": table["_probe"],
            "system": table["system"],
            **{c: table[c] for c in apart},
            "n": table["n"],
            "n_cases": table["n_cases"],
            "passed": table["passed"],
            "errors": table["n_missing"],
            "truncated": cut.reindex(at).fillna(0).astype(int).to_numpy(),
            "pass_rate": table["value"],
            "ci_low": table["ci_low"],
            "ci_high": table["ci_high"],
            "method": table["method"],
        },
        order=[*RUN_COLUMNS[:2], *apart, *RUN_COLUMNS[2:]],
    )
