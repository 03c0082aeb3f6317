"""What the results cost: tokens and dollars per system, and dollars per point of the metric."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, estimator, finish, group_codes, require
from ..errors import StatsError
from ._scores import mean_score, pass_rate

COLUMNS = [
    "n",
    "n_priced",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "cost_per_request",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "cost_per_point",
    "method",
]


def _cost_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return cost(
        frame.assign(prompt_tokens=100, completion_tokens=50, cost_usd=0.001),
        by="system",
        case="case_id",
    )


@estimator(
    unit="case",
    estimand="tokens and dollars per group, and dollars per point of the headline metric",
    interval="the headline metric's (pass_rate or mean_score)",
    checks=("order", "rename", "method", "scale", "settings"),
    adapter=_cost_adapter,
    note="sums, not estimates, beside the metric's interval",
)
def cost(
    df: pd.DataFrame,
    *,
    by: CaseSpec = None,
    metric: str = "pass_rate",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    pool: bool = False,
) -> pd.DataFrame:
    """Tokens and cost per group, and the cost of one percentage point of the headline metric.

    Uses the rows' ``prompt_tokens``, ``completion_tokens`` and ``cost_usd`` (written by the
    runner when the model's price is known, see :mod:`jevalkit.costs`). A row without a cost
    (unknown price) is not counted as free: ``cost_usd`` sums the priced rows only and
    ``n_priced`` says how many those are; when none is priced the cost is NaN.

    Args:
        df: results rows.
        by: the grouping (e.g. ``system``; default: all rows together).
        metric: ``pass_rate`` or ``mean_score``, the headline the cost is set against.
        case: the unit of analysis of the metric's interval.
        system: the column naming each row's system (``None``: one system).
        pool: pool a probe's versions or generation settings on purpose; by default those
            that differ within a group of one system are kept apart (columns after ``by``).

    Returns:
        One row per group: the ``by`` columns, ``n`` (rows), ``n_priced``, ``prompt_tokens``,
        ``completion_tokens``, ``cost_usd``, ``cost_per_request`` (over priced rows),
        ``metric``, ``value``, ``ci_low``, ``ci_high`` (the metric and its interval),
        ``cost_per_point`` (``cost_usd`` / (100 x value): dollars per percentage point; NaN at 0),
        ``method``.

    Example:
        >>> rows = pd.DataFrame({"system": ["a", "a", "b", "b"], "probe": "p", "version": 1,
        ...     "case_id": ["c1", "c2", "c1", "c2"], "passed": [True, False, True, True],
        ...     "prompt_tokens": [100] * 4, "completion_tokens": [50] * 4,
        ...     "cost_usd": [0.001, 0.001, None, None]})
        >>> t = cost(rows, by="system")
        >>> t[["system", "n_priced", "cost_usd", "value", "cost_per_point"]].values.tolist()
        [['a', 2, 0.002, 0.5, 4e-05], ['b', 0, nan, 1.0, nan]]
    """
    for column in ("prompt_tokens", "completion_tokens", "cost_usd"):
        require(df, column, column, "what the requests used")
    if metric not in ("pass_rate", "mean_score"):
        raise StatsError(f"metric must be 'pass_rate' or 'mean_score', got {metric!r}")
    compute = pass_rate if metric == "pass_rate" else mean_score
    headline = compute(df, by=by, case=case, system=system, pool=pool)
    # the groups the metric kept: the by columns, then a probe's versions or settings apart
    keys = list(headline.columns[: list(headline.columns).index("n")])
    codes, groups = group_codes(df, keys)
    spent = pd.to_numeric(df["cost_usd"], errors="coerce").astype(float).to_numpy()
    priced = np.bincount(codes, ~np.isnan(spent), minlength=len(groups)).astype(int)
    total = np.bincount(codes, np.nan_to_num(spent), minlength=len(groups))
    tokens = {
        column: np.bincount(
            codes,
            pd.to_numeric(df[column], errors="coerce").fillna(0).to_numpy(float),
            minlength=len(groups),
        ).astype(np.int64)
        for column in ("prompt_tokens", "completion_tokens")
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        joined = pd.DataFrame(
            {
                "n": np.bincount(codes, minlength=len(groups)),
                "n_priced": priced,
                **tokens,
                "cost_usd": np.where(priced > 0, total, np.nan),
                "cost_per_request": np.where(priced > 0, total / priced, np.nan),
            }
        )
    for column in ("value", "ci_low", "ci_high", "method"):
        joined[column] = headline[column].to_numpy()
    joined["metric"] = metric
    with np.errstate(divide="ignore", invalid="ignore"):
        per_point = joined["cost_usd"] / (100.0 * joined["value"].astype(float))
    joined["cost_per_point"] = per_point.where(joined["value"].astype(float) > 0)
    joined["method"] = (
        "tokens and cost_usd summed over rows (priced rows only); cost_per_point = cost / "
        f"(100 x {metric}); {metric}: " + joined["method"].astype(str)
    )
    return finish(joined, groups=groups if keys else None, order=COLUMNS)
