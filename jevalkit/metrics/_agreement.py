"""consistency across repeats, and win_rate between systems."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, estimator, finish, prepare, require
from ..errors import StatsError
from ..stats import bootstrap_ci, krippendorff_alpha, no_spread_ci

CONSISTENCY_COLUMNS = [
    "n_cases",
    "k",
    "n_missing",
    "value",
    "ci_low",
    "ci_high",
    "flip_rate",
    "level_sd",
    "alpha",
    "method",
]


@estimator(
    unit="case",
    estimand="modal verdict share per case, averaged",
    interval="percentile bootstrap over cases; Wilson floor",
    checks=("order", "rename", "method", "duplicates", "one_case", "no_spread", "settings"),
    call={"by": "system", "case": "case_id", "level": None},
    calibration="consistency",
)
def consistency(
    data: pd.DataFrame,
    *,
    by: CaseSpec = None,
    passed: str = "passed",
    level: str | None = "expected_level",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    repeat: str | None = "repeat",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    pool: bool = False,
) -> pd.DataFrame:
    """How often an evaluator gives the same verdict when asked the same question again.

    For each case, the modal verdict's share of its k runs is its agreement; ``value`` averages
    it over cases (with a percentile bootstrap interval over cases when there are at least 2).
    Also: ``flip_rate`` (share of cases whose verdict changed at least once), ``level_sd`` (mean
    within-case standard deviation of ``level``, for judges that return levels; ``level=None``
    skips it), and ``alpha`` (Krippendorff's alpha treating repeats as raters, matched by the
    ``repeat`` column: ordinal on levels, nominal on verdicts; NaN when undefined, e.g. one case
    or no variation at all). ``repeat=None`` matches runs by their order within a case instead,
    and ``method`` says so.

    Needs k >= 2 runs per case: a case run once cannot disagree with itself. ``system`` names
    each row's system (two systems' runs of a case are not copies; ``None``: one system); a
    probe's versions and generation settings that differ within a ``by`` group of one system
    are kept apart as extra grouping columns (two settings' runs of a case are not its
    repeats; ``pool=True`` pools them on purpose).

    Returns columns: the ``by`` columns, ``n_cases``, ``k`` (median runs per case), ``n_missing``,
    ``value``, ``ci_low``, ``ci_high``, ``flip_rate``, ``level_sd``, ``alpha``, ``method``.

    Example:
        >>> df = pd.DataFrame({"case_id": list("aaabbb"), "repeat": [0, 1, 2] * 2,
        ...                    "passed": [True, True, False, True, True, True]})
        >>> consistency(df, case="case_id", system=None, level=None)[["n_cases", "k", "value", "flip_rate"]].round(3).values.tolist()
        [[2.0, 3.0, 0.833, 0.5]]
    """
    if level is not None:
        require(data, level, "level", "the levels whose spread is reported; level=None skips it")
    if repeat is not None:
        require(data, repeat, "repeat", "which run of a case a row is; repeat=None uses row order")
    p = prepare(
        data,
        passed,
        by=by,
        case=case,
        system=system,
        repeat=repeat,
        kind="any",
        keyword="passed",
        pool=pool,
        systems_apart=True,  # one system's repeats agree or not: two systems are two runs
    )
    work = pd.DataFrame(
        {
            "_case": p.case,
            "_group": p.group,
            "_v": pd.Series(p.raw).astype(str).to_numpy(),
            "_level": pd.to_numeric(p.frame[level], errors="coerce").to_numpy(float)
            if level is not None
            else np.nan,
        }
    )
    if repeat is None:
        work["_run"] = work.groupby("_case", sort=True).cumcount()
    else:
        work["_run"] = p.frame[repeat].to_numpy()
    matching = "repeat index" if repeat is not None else "order within a case"

    def compute(group: pd.DataFrame, n_missing: int) -> dict:
        sizes = group.groupby("_case", sort=True).size()
        if len(sizes) == 0 or sizes.max() < 2:
            apart = (
                f" within each {'/'.join(p.apart)} kept apart (two versions or settings are "
                "not repeats of a case; pool=True pools them)"
                if p.apart
                else ""
            )
            raise StatsError(
                "consistency needs k >= 2 runs per case; this data has "
                f"{int(sizes.max()) if len(sizes) else 0}{apart} (re-run with --repeats 2 or "
                "more)"
            )
        repeated = sizes[sizes >= 2].index
        kept = group[group["_case"].isin(repeated)]
        shares = kept.groupby("_case", sort=True)["_v"].agg(
            lambda v: v.value_counts().iloc[0] / len(v)
        )
        flips = kept.groupby("_case", sort=True)["_v"].nunique() > 1
        has_levels = level is not None and kept["_level"].notna().any()
        level_sd = (
            float(kept.groupby("_case", sort=True)["_level"].std(ddof=1).mean())
            if has_levels
            else np.nan
        )
        how = "percentile bootstrap over cases"
        if len(shares) < 2:
            low = high = np.nan
            how = "one case: no interval over cases"
        elif np.ptp(shares.to_numpy()) > 0:
            ci = bootstrap_ci(
                shares.to_numpy(),
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
                method="percentile",
            )
            low, high = ci.low, ci.high
        else:  # every case equally consistent: the bounded-data floor, not a point
            low, high = no_spread_ci(float(shares.mean()), len(shares), confidence=confidence)
            how = f"Wilson floor over {len(shares)} cases (every case had the same share)"
        return {
            "n_cases": len(shares),
            "k": float(sizes[repeated].median()),
            "n_missing": n_missing,
            "value": float(shares.mean()),
            "ci_low": low,
            "ci_high": high,
            "flip_rate": float(flips.mean()),
            "level_sd": level_sd,
            "alpha": _repeat_alpha(kept, "_level" if has_levels else "_v", has_levels),
            "method": f"modal share per case, {how}; alpha matches runs by {matching}",
        }

    rows = [compute(work[work["_group"] == i], int(p.n_missing[i])) for i in range(len(p.groups))]
    return finish(pd.DataFrame(rows), groups=p.groups, order=CONSISTENCY_COLUMNS)


def _repeat_alpha(group: pd.DataFrame, column: str, ordinal: bool) -> float:
    if group["_case"].nunique() < 2:
        return np.nan  # one case: nothing to tell agreement from chance with
    values = group[column]
    if not ordinal:
        values = values.astype(str).astype("category").cat.codes
    table = group.assign(_v=values.astype(float)).pivot_table(
        index="_run", columns="_case", values="_v", aggfunc="first"
    )
    try:
        return krippendorff_alpha(
            table.to_numpy(), "ordinal" if ordinal else "nominal", layout="raters x units"
        )
    except StatsError:
        return np.nan


WIN_COLUMNS = [
    "a",
    "b",
    "n",
    "n_only_a",
    "n_only_b",
    "wins",
    "ties",
    "losses",
    "value",
    "ci_low",
    "ci_high",
    "method",
]


@estimator(
    unit="case",
    estimand="(wins + ties / 2) / paired cases",
    interval="percentile bootstrap over cases; Wilson floor",
    checks=("order", "rename", "method", "keys", "duplicates", "one_case", "no_spread", "settings"),
    call={"baseline": "A", "case": "case_id"},
    calibration="win_rate",
)
def win_rate(
    data: pd.DataFrame,
    a: str | None = None,
    b: str | None = None,
    *,
    baseline: str | None = None,
    system: str = "system",
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    repeat: str | None = "repeat",
    scale: tuple[float, float] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    pool: bool = False,
) -> pd.DataFrame:
    """(wins + 0.5 ties) / comparisons of system ``a`` against ``b`` on the cases both ran, or of
    every system against ``baseline`` in one call.

    Repeats are averaged within a case before comparing. With a single shared case its repeats
    are paired by the ``repeat`` column instead. The interval is a percentile bootstrap over the
    paired units; cases only one side ran are left out and counted (``n_only_a``, ``n_only_b``).
    A system's two probe versions or generation settings (``params_hash``) are refused naming
    the column (their rows are not repeats of one case); ``pool=True`` pools them on purpose.
    Scores lie in [0, 1]; raw grades need ``scale=(low, high)`` (normalised, which leaves every
    win as it is).

    Returns one row per comparison: ``a``, ``b``, ``n``, ``n_only_a``, ``n_only_b``, ``wins``,
    ``ties``, ``losses``, ``value``, ``ci_low``, ``ci_high``, ``method``.

    Example:
        >>> df = pd.DataFrame({"system": ["x"] * 3 + ["y"] * 3, "case_id": list("pqr") * 2,
        ...                    "score": [1.0, 0.5, 0.0, 0.5, 0.5, 1.0]})
        >>> win_rate(df, "x", "y", case="case_id")[["n", "wins", "ties", "losses", "value"]].to_dict("records")
        [{'n': 3, 'wins': 1, 'ties': 1, 'losses': 1, 'value': 0.5}]
    """
    if (baseline is None) == (a is None or b is None):
        raise StatsError("give two systems a and b, or baseline= (every system against it)")
    p = prepare(
        data,
        score,
        case=case,
        system=system,
        repeat=repeat,
        kind="score",
        scale=scale,
        keyword="score",
        pool=pool,
        apart=False,
    )
    frame = pd.DataFrame({"_s": p.system, "_case": p.case, "_v": p.values})
    if repeat is not None and repeat in p.frame.columns:
        frame[repeat] = p.frame[repeat].to_numpy()
    names = sorted(set(frame["_s"]))
    wanted = [a, b] if baseline is None else [baseline]
    for name in wanted:
        if name not in names:
            raise StatsError(f"system {name!r} not found; systems: {names}")
    unit = ["_case"]
    if frame["_case"].nunique() == 1:
        if repeat is None or repeat not in frame.columns:
            raise StatsError(
                "one shared case: its repeats are paired by the repeat column; pass "
                "repeat='<column>'"
            )
        unit = ["_case", repeat]
    means = frame.groupby(["_s", *unit], sort=True)["_v"].mean().unstack("_s")
    pairs = [(a, b)] if baseline is None else [(s, baseline) for s in names if s != baseline]
    rows = []
    for left, right in pairs:
        x, y = means[left], means[right]
        both = x.notna() & y.notna()
        outcome = np.sign(x[both] - y[both]).to_numpy() * 0.5 + 0.5
        n = int(outcome.size)
        unit_name = "repeats of one case" if len(unit) == 2 else "cases"
        how = f"percentile bootstrap over {unit_name}"
        low = high = np.nan
        if n >= 2 and np.ptp(outcome) > 0:
            ci = bootstrap_ci(
                outcome,
                method="percentile",
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
            low, high = ci.low, ci.high
        elif n >= 2:  # five sweeps are not a certainty: the bounded-data floor
            low, high = no_spread_ci(float(outcome.mean()), n, confidence=confidence)
            how = f"Wilson floor over {n} {unit_name}: every one had the same outcome"
        else:
            how = f"n = {n} paired {unit_name}: no interval"
        rows.append(
            {
                "a": left,
                "b": right,
                "n": n,
                "n_only_a": int((x.notna() & y.isna()).sum()),
                "n_only_b": int((y.notna() & x.isna()).sum()),
                "wins": int((outcome == 1).sum()),
                "ties": int((outcome == 0.5).sum()),
                "losses": int((outcome == 0).sum()),
                "value": float(outcome.mean()) if n else np.nan,
                "ci_low": low,
                "ci_high": high,
                "method": f"win rate (wins + ties / 2) / paired units; {how}",
            }
        )
    return finish(pd.DataFrame(rows, columns=WIN_COLUMNS), order=WIN_COLUMNS)
