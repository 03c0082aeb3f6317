"""Per-case results: how each case fared over its repeats, worst cases first."""

from __future__ import annotations

import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, columns_of, estimator, finish, prepare, require
from ..errors import StatsError

COLUMNS = [
    "n",
    "n_missing",
    "passed",
    "pass_rate",
    "mean_score",
]


@estimator(
    unit="case",
    estimand="each case's pass rate and mean score over its repeats",
    interval="none (a per-case description)",
    checks=("order", "rename", "scale", "duplicates", "settings"),
    call={"by": "system", "case": "case_id"},
    note="describes cases, estimates nothing across them",
)
def per_case(
    df: pd.DataFrame,
    *,
    by: CaseSpec = None,
    case: CaseSpec = CASE_COLUMNS,
    passed: str = "passed",
    score: str = "score",
    system: str | None = "system",
    repeat: str | None = "repeat",
    pool: bool = False,
) -> pd.DataFrame:
    """One row per ``by`` group and case: its repeats summarised, worst first.

    This describes each case; it is not an estimate for the probe (use :func:`pass_rate`, whose
    interval is clustered by case). A case with only errors has ``n`` 0 and NaN rates.
    ``system`` names each row's system (``None``: one system); a system's probe versions and
    generation settings (``params_hash``) that differ within a ``by`` group are kept apart as
    grouping columns after the ``by`` columns (``pool=True`` pools them).

    Returns:
        The ``by`` and ``case`` columns, then ``n`` (scored rows), ``n_missing`` (rows with an
        error or no value), ``passed`` (count), ``pass_rate`` and ``mean_score`` (over the
        scored rows), sorted by ``pass_rate`` then ``mean_score`` ascending (worst first; cases
        with nothing scored last), then by the group and case columns.

    Example:
        >>> df = pd.DataFrame({"system": "m", "probe": "p", "version": 1,
        ...                    "case_id": ["a", "a", "b", "b"], "passed": [True, True, False, True],
        ...                    "score": [1.0, 1.0, 0.0, 1.0], "error": None})
        >>> per_case(df)[["case_id", "n", "passed", "pass_rate"]].values.tolist()
        [['b', 2, 1, 0.5], ['a', 2, 2, 1.0]]
    """
    if not columns_of(case):
        raise StatsError("per_case needs cases: pass case='<column>'")
    require(df, score, "score", "the score")
    p = prepare(
        df,
        passed,
        by=by,
        case=case,
        system=system,
        repeat=repeat,
        kind="verdict",
        keyword="passed",
        pool=pool,
    )
    keys = list(dict.fromkeys([*p.by, *columns_of(case)]))
    work = df[keys].copy()
    for column in keys:
        work[column] = work[column].astype(object).where(work[column].notna(), None)
    ok = p.scored
    work["_ok"] = ok.astype(int)
    work["_missing"] = (~ok).astype(int)
    work["_passed"] = df[passed].where(ok, False).astype(bool).astype(int).to_numpy()
    work["_score"] = pd.to_numeric(df[score].where(ok), errors="coerce").astype(float)
    grouped = work.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        n=("_ok", "sum"),
        n_missing=("_missing", "sum"),
        passed=("_passed", "sum"),
        mean_score=("_score", "mean"),
    ).reset_index()
    out["pass_rate"] = out["passed"] / out["n"].where(out["n"] > 0)
    out = out.sort_values(
        ["pass_rate", "mean_score", *keys], na_position="last", kind="stable"
    ).reset_index(drop=True)
    for column in ("n", "n_missing", "passed"):
        out[column] = out[column].astype(int)
    return finish(out, order=[*keys, *COLUMNS])
