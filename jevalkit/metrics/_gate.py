"""The release gate: a decision from an interval, never from a point estimate."""

from __future__ import annotations

import math

import pandas as pd

from ..errors import StatsError
from ._agreement import consistency
from ._frame import CASE_COLUMNS, CaseSpec, columns_of
from ._scores import mean_score, pass_rate
from ._summary import has_repeats

GATE_METRICS = {"pass_rate": pass_rate, "mean_score": mean_score}
GATE_COLUMNS = ["metric", "decision", "n", "value", "ci_low", "ci_high", "threshold", "reason"]


def gate(
    results: pd.DataFrame,
    *,
    minimum: float,
    metric: str = "pass_rate",
    by: CaseSpec = None,
    case: CaseSpec = CASE_COLUMNS,
    max_flip_rate: float = 0.1,
) -> pd.DataFrame:
    """Decide whether every group clears ``minimum`` on ``metric``: ``pass`` only when the lower
    end of the 95% interval is at or above it, ``fail`` when it is below, ``refused`` when the
    data cannot decide (no scored rows, or verdicts that flip between repeats in more than
    ``max_flip_rate`` of cases: a flaky evaluator makes a flaky gate).

    Returns:
        One row per group: the ``by`` columns, ``metric``, ``decision`` (``pass``, ``fail``,
        ``refused``), ``n``, ``value``, ``ci_low``, ``ci_high``, ``threshold``, ``reason``
        (one sentence).

    Example:
        >>> df = pd.DataFrame({"case_id": list("abcdefghij"), "passed": [True] * 9 + [False]})
        >>> gate(df, minimum=0.5, case="case_id")[["decision", "n"]].values.tolist()
        [['pass', 10]]
    """
    if metric not in GATE_METRICS:
        raise StatsError(f"metric must be one of {sorted(GATE_METRICS)}, got {metric!r}")
    if not isinstance(minimum, int | float) or not math.isfinite(minimum) or not 0 <= minimum <= 1:
        raise StatsError(f"the minimum must be a number from 0 to 1, got {minimum!r}")
    if not 0 <= max_flip_rate <= 1:
        raise StatsError(f"max_flip_rate must be from 0 to 1, got {max_flip_rate!r}")
    cols = columns_of(by)
    table = GATE_METRICS[metric](results, by=by, case=case)
    flips = None
    if "passed" in results.columns and has_repeats(results, case=case, system=None):
        try:
            flips = consistency(results, by=by, case=case, level=None)
        except StatsError:
            flips = None
    rows = []
    for _, row in table.iterrows():
        key = {c: row[c] for c in cols}
        where = ", ".join(f"{c}={row[c]}" for c in cols) or "all results"
        flip = None
        if flips is not None:
            match = flips
            for c in cols:
                match = match[match[c] == row[c]]
            flip = float(match["flip_rate"].iloc[0]) if len(match) else None
        if row["n"] == 0:
            decision, reason = "refused", f"{where}: no scored rows to decide on"
        elif flip is not None and flip > max_flip_rate:
            decision = "refused"
            reason = (
                f"{where}: verdicts flip between repeats in {flip:.0%} of cases (limit "
                f"{max_flip_rate:.0%}); a flaky evaluator makes a flaky gate"
            )
        elif math.isnan(row["ci_low"]):
            decision, reason = "refused", f"{where}: n = {row['n']} gives no interval"
        elif row["ci_low"] >= minimum:
            decision = "pass"
            reason = f"{where}: the interval's lower bound {row['ci_low']:.3f} clears {minimum:g}"
        else:
            decision = "fail"
            reason = f"{where}: the interval's lower bound {row['ci_low']:.3f} is below {minimum:g}"
        rows.append(
            {
                **key,
                "metric": metric,
                "decision": decision,
                "n": int(row["n"]),
                "value": row["value"],
                "ci_low": row["ci_low"],
                "ci_high": row["ci_high"],
                "threshold": minimum,
                "reason": reason,
            }
        )
    return pd.DataFrame(rows, columns=[*cols, *GATE_COLUMNS])
