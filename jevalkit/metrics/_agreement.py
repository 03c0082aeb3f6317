"""consistency across repeats and win_rate between two systems."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..errors import StatsError
from ..stats import bootstrap_ci, krippendorff_alpha
from ._frame import as_frame, by_groups, case_key


def consistency(
    data: pd.DataFrame,
    *,
    by: str | Iterable[str] | None = None,
    verdict: str = "passed",
    level: str = "expected_level",
    confidence: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """How often an evaluator gives the same verdict when asked the same question again.

    For each case, the modal verdict's share of its k runs is its agreement; ``value`` averages
    it over cases (with a bootstrap interval over cases when there are at least 2). Also:
    ``flip_rate`` (share of cases whose verdict changed at least once), ``level_sd`` (mean
    within-case standard deviation of the expected level, for level outputs), and
    ``alpha`` (Krippendorff's alpha treating repeats as raters: ordinal on levels, nominal on
    verdicts; NaN when undefined, e.g. one case or no variation at all).

    Needs k >= 2 runs per case: a case run once cannot disagree with itself.

    Returns columns: the ``by`` columns, ``n_cases``, ``k`` (median runs per case), ``value``,
    ``ci_low``, ``ci_high``, ``flip_rate``, ``level_sd``, ``alpha``, ``method``.

    Example:
        >>> df = pd.DataFrame({"case_id": list("aaabbb"), "repeat": [0, 1, 2] * 2,
        ...                    "passed": [True, True, False, True, True, True]})
        >>> consistency(df)[["n_cases", "k", "value", "flip_rate"]].round(3).values.tolist()
        [[2.0, 3.0, 0.833, 0.5]]
    """
    frame = as_frame(data, verdict)
    frame = frame[~frame["_unscored"]].copy()
    frame["_case"] = case_key(frame)

    def compute(group: pd.DataFrame) -> dict:
        runs = group.groupby("_case")[verdict]
        sizes = runs.size()
        if len(sizes) == 0 or sizes.max() < 2:
            raise StatsError(
                "consistency needs k >= 2 runs per case; this data has "
                f"{int(sizes.max()) if len(sizes) else 0} (re-run with --repeats 2 or more)"
            )
        repeated = sizes[sizes >= 2].index
        runs = group[group["_case"].isin(repeated)].groupby("_case")
        shares = runs[verdict].agg(lambda v: v.astype(str).value_counts().iloc[0] / len(v))
        flips = runs[verdict].agg(lambda v: v.astype(str).nunique() > 1)
        has_levels = level in group.columns and group[level].notna().any()
        level_sd = float(runs[level].std(ddof=1).mean()) if has_levels else np.nan
        ci = bootstrap_ci(shares.to_numpy(), confidence=confidence, seed=seed, method="percentile")
        return {
            "n_cases": len(shares),
            "k": float(sizes[repeated].median()),
            "value": float(shares.mean()),
            "ci_low": ci.low,
            "ci_high": ci.high,
            "flip_rate": float(flips.mean()),
            "level_sd": level_sd,
            "alpha": _repeat_alpha(
                group[group["_case"].isin(repeated)], level if has_levels else verdict, has_levels
            ),
            "method": "modal share per case, percentile bootstrap over cases",
        }

    return by_groups(frame, by, compute)


def _repeat_alpha(group: pd.DataFrame, column: str, ordinal: bool) -> float:
    if "repeat" not in group.columns or group["_case"].nunique() < 2:
        return np.nan  # one case: nothing to tell agreement from chance with
    values = group[column]
    if not ordinal:
        values = values.astype(str).astype("category").cat.codes
    table = group.assign(_v=values.astype(float)).pivot_table(
        index="repeat", columns="_case", values="_v", aggfunc="first"
    )
    try:
        return krippendorff_alpha(table.to_numpy(), "ordinal" if ordinal else "nominal")
    except StatsError:
        return np.nan


def win_rate(
    data: pd.DataFrame,
    a: str,
    b: str,
    *,
    system: str = "system",
    score: str = "score",
    confidence: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """(wins + 0.5 ties) / comparisons of system ``a`` against ``b`` on the cases both ran.

    Repeats are averaged within a case before comparing. With a single shared case its repeats
    are paired by repeat index instead. The interval is a percentile bootstrap over the paired
    units.

    Returns one row: ``a``, ``b``, ``n``, ``wins``, ``ties``, ``losses``, ``value``,
    ``ci_low``, ``ci_high``, ``method``.

    Example:
        >>> df = pd.DataFrame({"system": ["x"] * 3 + ["y"] * 3, "case_id": list("pqr") * 2,
        ...                    "score": [1.0, 0.5, 0.0, 0.5, 0.5, 1.0]})
        >>> win_rate(df, "x", "y")[["n", "wins", "ties", "losses", "value"]].to_dict("records")
        [{'n': 3, 'wins': 1, 'ties': 1, 'losses': 1, 'value': 0.5}]
    """
    frame = as_frame(data, score)
    frame = frame[~frame["_unscored"]].copy()
    if system not in frame.columns:
        raise StatsError(f"no {system!r} column to tell the systems apart")
    frame["_case"] = case_key(frame)
    unit = ["_case"]
    if frame["_case"].nunique() == 1 and "repeat" in frame.columns:
        unit = ["_case", "repeat"]
    means = frame.groupby([system, *unit])[score].mean()
    for name in (a, b):
        if name not in means.index.get_level_values(0):
            raise StatsError(f"system {name!r} not found; systems: {sorted(set(frame[system]))}")
    paired = pd.concat([means.loc[a], means.loc[b]], axis=1, keys=["a", "b"]).dropna()
    outcome = np.where(
        paired["a"] > paired["b"], 1.0, np.where(paired["a"] < paired["b"], 0.0, 0.5)
    )
    n = int(outcome.size)
    ci = bootstrap_ci(outcome, method="percentile", confidence=confidence, seed=seed) if n else None
    return pd.DataFrame([{
        "a": a, "b": b, "n": n,
        "wins": int((outcome == 1).sum()), "ties": int((outcome == 0.5).sum()),
        "losses": int((outcome == 0).sum()),
        "value": float(outcome.mean()) if n else np.nan,
        "ci_low": ci.low if ci else np.nan, "ci_high": ci.high if ci else np.nan,
        "method": "percentile bootstrap over " + ("repeats of one case" if len(unit) == 2 else "cases"),
    }])  # fmt: skip
