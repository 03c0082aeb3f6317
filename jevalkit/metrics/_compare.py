"""Is B better than A, by how much, and is it real? Paired comparisons of systems by case, with
tests, multiple-comparison adjustment and the smallest effect the data could detect."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from ..contract import estimator
from ..errors import StatsError
from ..stats import (
    bootstrap_ci,
    minimum_detectable_effect,
    no_spread_ci,
    paired_proportion_ci,
)
from ._facets import CASE_FACET, FACET_INTERVAL_COLUMNS, difference_interval
from ._frame import CASE_COLUMNS, CaseSpec, check_key_types, columns_of, group_codes, require
from ._scores import _rescale

COMPARE_METRICS = ("pass_rate", "mean_score", "win_rate")
COMPARE_COLUMNS = [
    "system",
    "baseline",
    "metric",
    "n_paired",
    "n_only_system",
    "n_only_baseline",
    "value",
    "value_baseline",
    "delta",
    "ci_low",
    "ci_high",
    "test",
    "statistic",
    "p_value",
    "p_wilcoxon",
    "p_holm",
    "p_bh",
    "effect_size",
    "effect_size_name",
    "sd_diff",
    "mde",
    "method",
]
EXACT_MCNEMAR_BELOW = 25  # discordant pairs: the exact binomial form below, chi-square at or above
# Paired cases from which a case-difference interval is a BCa bootstrap; below it, the t interval
# of the paired t test beside it. With 4-5 cases the BCa interval was [0, 0.167] beside p = 0.391:
# a bootstrap over so few cases sees a handful of distinct resamples and comes out too narrow, and
# an interval from another method family than the test contradicted it.
BOOTSTRAP_FROM = 30
# The range of each metric's difference: a t interval is clipped to it, and says so.
DELTA_RANGE = {"pass_rate": (-1.0, 1.0), "win_rate": (-0.5, 0.5)}


def _t_interval(metric: str, diffs: np.ndarray, confidence: float) -> tuple[float, float, str]:
    """The interval of the one-sample t test on the case differences (the paired t test the
    row reports: it excludes 0 exactly when that test's p < 1 - confidence)."""
    ci = sps.ttest_1samp(diffs, 0.0).confidence_interval(confidence)
    low, high = float(ci.low), float(ci.high)
    how = f"paired t interval over {diffs.size} cases (fewer than {BOOTSTRAP_FROM}: no bootstrap)"
    if metric in DELTA_RANGE:
        floor, ceiling = DELTA_RANGE[metric]
        if low < floor or high > ceiling:
            low, high = max(low, floor), min(high, ceiling)
            how += f", clipped to [{floor:g}, {ceiling:g}]"
    return low, high, how


def _case_means(
    data: pd.DataFrame,
    value: str,
    *,
    case: CaseSpec,
    system: str,
    by: list[str],
    repeat: str | None,
    metric: str,
    scale: tuple[float, float] | None,
    within: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One column per system, one row per (group, case): the case's mean over its repeats.

    The values are checked first: verdicts must be 0/1, scores inside [0, 1] (or ``scale``),
    and two rows of one case and system must be told apart by ``repeat`` (a duplicated row is
    not a repeat; ``within``: facet columns, e.g. a prompt variant, whose levels also tell
    rows of a case apart)."""
    missing = data[value].isna()
    if "error" in data.columns:
        missing |= data["error"].notna()
    usable = data.loc[~missing]
    cols = columns_of(case)
    if cols:
        codes, _ = group_codes(usable, cols)
    else:
        codes = np.arange(len(usable))
    try:
        values = usable[value].astype(float).to_numpy()
    except (TypeError, ValueError):
        raise StatsError(f"column {value!r} holds values that are not numbers") from None
    if metric == "pass_rate":
        odd = ~np.isin(values, (0.0, 1.0))
        if odd.any():
            raise StatsError(
                f"column {value!r} must hold True/False (or 1/0) verdicts for pass_rate, found "
                f"{values[odd][0]:g}: compare graded scores with metrics=['mean_score'] and scale="
            )
    else:
        values = _rescale(values, scale, value)
    frame = pd.DataFrame(
        {
            **{c: usable[c].to_numpy() for c in by},
            "_case": codes,
            "_system": usable[system].astype(str).to_numpy(),
            "_v": values,
        }
    )
    keys = [*by, "_case", "_system"]
    for i, facet in enumerate(within):
        frame[f"_w{i}"] = usable[facet].astype(str).to_numpy()
    keys_within = [*keys, *(f"_w{i}" for i in range(len(within)))]
    if cols and len(frame) and frame.duplicated(keys_within).any():
        if repeat is None or repeat not in usable.columns:
            raise StatsError(
                "several rows share a case and system, and there is no repeat column to tell "
                "repeats from duplicated rows: pass repeat='<column>' or drop the duplicates"
            )
        frame["_r"] = usable[repeat].to_numpy()
        twice = frame.duplicated([*keys_within, "_r"])
        if twice.any():
            at = frame.loc[twice].iloc[0]
            raise StatsError(
                f"{int(twice.sum())} row(s) repeat a case, system and {repeat!r} already seen "
                f"(system {at['_system']!r}, {repeat} {at['_r']!r}): duplicated rows are not "
                "repeats; drop them (DataFrame.drop_duplicates) or number the repeats"
            )
    wide = frame.groupby(keys, sort=True, dropna=False)["_v"].mean().unstack("_system")
    return wide, frame


def _pairs(systems: Sequence[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is None:
        return list(itertools.combinations(sorted(systems), 2))
    if baseline not in systems:
        raise StatsError(f"baseline {baseline!r} not found; systems: {sorted(systems)}")
    return [(s, baseline) for s in sorted(systems) if s != baseline]


def _test(metric: str, x: np.ndarray, y: np.ndarray) -> dict:
    """The paired test of one metric: McNemar (binary verdicts), the paired t-test with the
    Wilcoxon signed-rank beside it (scores), the sign test (win/loss)."""
    d = x - y
    out = {"p_wilcoxon": np.nan}
    if metric == "pass_rate" and np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all():
        b = int(np.sum((x == 1) & (y == 0)))
        c = int(np.sum((x == 0) & (y == 1)))
        exact = b + c < EXACT_MCNEMAR_BELOW
        table = [[int(np.sum((x == 1) & (y == 1))), b], [c, int(np.sum((x == 0) & (y == 0)))]]
        result = mcnemar(table, exact=exact, correction=True)
        ratio = (b + 0.5) / (c + 0.5)
        out.update(
            test="McNemar, exact" if exact else "McNemar, chi-square",
            statistic=float(result.statistic),
            p_value=float(result.pvalue),
            effect_size=ratio,
            effect_size_name="discordant odds ratio (+0.5)",
        )
        return out
    if metric == "win_rate":
        wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
        p = sps.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
        share = (wins - losses) / (wins + losses) if wins + losses else 0.0
        out.update(
            test="sign test",
            statistic=float(wins),
            p_value=float(p),
            effect_size=share,
            effect_size_name="(wins - losses) / decisive cases",
        )
        return out
    sd = float(np.std(d, ddof=1)) if d.size > 1 else np.nan
    if d.size > 1 and sd > 0:
        t = sps.ttest_rel(x, y)
        stat, p = float(t.statistic), float(t.pvalue)
        out["p_wilcoxon"] = float(sps.wilcoxon(x, y).pvalue) if np.any(d != 0) else 1.0
    else:
        stat, p = np.nan, (1.0 if d.size > 1 and np.all(d == 0) else np.nan)
    test = "paired t" if metric == "mean_score" else "paired t on case pass shares"
    out.update(
        test=test,
        statistic=stat,
        p_value=p,
        effect_size=float(np.mean(d) / sd) if sd else np.nan,
        effect_size_name="Cohen's d_z",
    )
    return out


@estimator(
    unit="case",
    estimand="paired difference of case means (system - baseline)",
    interval="Newcombe paired (0/1) or BCa over paired cases",
    checks=("order", "rename", "method", "scale", "keys", "duplicates", "one_case", "no_spread"),
    call={"baseline": "A", "by": None, "case": "case_id"},
    calibration="compare",
)
def compare(
    data: pd.DataFrame,
    baseline: str | None = None,
    *,
    by: CaseSpec = ("probe",),
    case: CaseSpec = CASE_COLUMNS,
    system: str = "system",
    metrics: Sequence[str] = ("pass_rate", "mean_score"),
    passed: str = "passed",
    score: str = "score",
    repeat: str | None = "repeat",
    scale: tuple[float, float] | None = None,
    confidence: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
    n_resamples: int = 9999,
    seed: int | None = 0,
    generalize: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Compare systems case by case: every system against ``baseline`` (or, without one, every
    pair), per group and metric, on the cases both ran.

    Args:
        data: results (or any frame with the named columns).
        baseline: the system the others are compared with; None compares every pair.
        by: column(s) to compare within (default: per probe; ``None`` for all rows together).
        case, system, passed, score: the columns used (the data contract).
        metrics: any of ``pass_rate`` (verdicts), ``mean_score`` (scores), ``win_rate`` (which
            system scored higher on a case).
        repeat: the column telling repeats of a case apart; several rows of one case and
            system with the same (or no) repeat index are duplicates and refused, never averaged.
        scale: ``(low, high)`` of raw scores for ``mean_score`` (normalised to [0, 1]); scores
            outside [0, 1] without it, and verdicts other than 0/1 for ``pass_rate``, are refused.
        confidence: of the intervals.
        alpha, power: for the smallest detectable effect (``mde``).
        n_resamples, seed: of the bootstrap.
        generalize: facet columns the claim generalises over (e.g. ``["case", "variant"]``):
            adds ``se_facets``, ``ci_low_facets``, ``ci_high_facets``, ``method_facets``, the
            interval of ``delta`` from the variance components of the differences paired by
            case and the other facets (shared facets cancel; win_rate: not estimable).

    Returns:
        One row per (group, system, metric): the ``by`` columns, ``system``, ``baseline``,
        ``metric``, ``n_paired`` (cases both ran), ``n_only_system`` and ``n_only_baseline`` (cases
        left out), ``value`` and ``value_baseline`` (over the paired cases), ``delta`` (system -
        baseline; for ``win_rate``, the win rate - 0.5), ``ci_low``, ``ci_high``, ``test``,
        ``statistic``, ``p_value``, ``p_wilcoxon`` (mean_score: the rank test beside the t-test:
        Wilcoxon signed-rank, or Mann-Whitney U for one case's repeats), ``p_holm`` and ``p_bh`` (adjusted over every row of the call), ``effect_size``,
        ``effect_size_name``, ``sd_diff`` (the standard deviation of the per-case differences,
        Miller's omega), ``mde`` (the smallest delta this n detects at ``power``), ``method``.

    Notes:
        Repeats are averaged within a case first (the case is the unit). Pass rates with one
        verdict per case and system get Newcombe's paired interval (square-and-add, method 10),
        which keeps its coverage with few discordant pairs. A group whose systems
        share a single case (one probe run k times) compares that case's repeats as two samples
        instead: Fisher's exact test and the Newcombe interval on pass rates, Welch's t-test
        and interval on scores, and ``method`` says so. Otherwise, with fewer than 30 paired
        cases, the interval is the paired t interval of the t test in the same row (one method
        family: the interval excludes 0 exactly when p < 1 - confidence; clipped to the
        metric's range and said so); from 30 cases it is a BCa bootstrap over the paired
        cases' differences. Both treat a case and its repeats as one unit. Tests: McNemar on pass/fail when every case has one
        verdict per system (exact binomial below 25 discordant pairs, else chi-square with
        continuity correction; statsmodels), else the paired t-test on case pass shares; the
        paired t-test on scores with the Wilcoxon signed-rank beside it (scipy); the sign test on
        win/loss (scipy.stats.binomtest). Holm and Benjamini-Hochberg over all rows
        (statsmodels ``multipletests``). mde = (z_{1-alpha/2} + z_power) sd(d) / sqrt(n)
        (:func:`jevalkit.stats.minimum_detectable_effect`).

    Example:
        >>> df = pd.DataFrame({"case_id": list("abcdefgh") * 2, "system": ["A"] * 8 + ["B"] * 8,
        ...                    "passed": [1, 1, 0, 1, 0, 1, 1, 0] + [1, 1, 1, 1, 0, 1, 1, 1]})
        >>> row = compare(df, "A", by=None, case="case_id", metrics=["pass_rate"]).iloc[0]
        >>> row["system"], float(row["delta"]), row["test"], round(float(row["p_value"]), 3)
        ('B', 0.25, 'McNemar, exact', 0.5)
    """
    unknown = [m for m in metrics if m not in COMPARE_METRICS]
    if unknown or not metrics:
        raise StatsError(f"metrics must be among {', '.join(COMPARE_METRICS)}, got {list(metrics)}")
    by_cols = columns_of(by)
    for column in [*by_cols, system]:
        require(data, column, "by" if column != system else "system", "compared within or between")
    for column in columns_of(case):
        require(data, column, "case", "the unit of analysis")
    check_key_types(data, columns_of(case), system)
    if generalize is not None and (isinstance(generalize, str) or not len(generalize)):
        raise StatsError("generalize takes a list of facet columns, e.g. ['case', 'variant']")
    rows = []
    tables = {}
    value_of = {m: passed if m == "pass_rate" else score for m in metrics}
    for metric in metrics:
        value = passed if metric == "pass_rate" else score
        require(
            data, value, "passed" if metric == "pass_rate" else "score", f"the values of {metric}"
        )
        tables[metric] = _case_means(
            data,
            value,
            case=case,
            system=system,
            by=by_cols,
            repeat=repeat,
            metric=metric,
            scale=scale,
            within=[
                g
                for g in dict.fromkeys(generalize or ())
                if g != CASE_FACET and g not in columns_of(case) and g in data.columns
            ],
        )
    systems = sorted(data[system].dropna().astype(str).unique())
    for metric, (table, long) in tables.items():
        groups = (
            table.groupby(level=list(range(len(by_cols))), sort=True, dropna=False)
            if by_cols
            else [((), table)]
        )
        for key, group in groups:
            key = key if isinstance(key, tuple) else (key,)
            for left, right in _pairs(systems, baseline):
                if left not in group.columns or right not in group.columns:
                    continue
                x_all, y_all = group[left], group[right]
                both = x_all.notna() & y_all.notna()
                x, y = x_all[both].to_numpy(float), y_all[both].to_numpy(float)
                if both.sum() == 1:  # one shared case: compare its repeats, unpaired
                    only = both[both].index[0]
                    code = only[-1] if isinstance(only, tuple) else only
                    rows_of = long[long["_case"] == code]
                    x = rows_of.loc[rows_of["_system"] == left, "_v"].to_numpy(float)
                    y = rows_of.loc[rows_of["_system"] == right, "_v"].to_numpy(float)
                if both.sum() == 1 and min(x.size, y.size) < 2:
                    once = left if x.size < 2 else right
                    x = y = np.array([])  # no estimate: one case, run once by one side
                    reason = (
                        f"not estimable: one shared case, run once by {once!r}; a comparison "
                        "needs two or more paired cases, or repeats of the case on both sides"
                    )
                else:
                    reason = "not estimable: no case ran by both"
                row = {
                    **dict(zip(by_cols, key, strict=True)),
                    "system": left,
                    "baseline": right,
                    "metric": metric,
                    "n_paired": int(both.sum()),
                    "n_only_system": int((x_all.notna() & y_all.isna()).sum()),
                    "n_only_baseline": int((y_all.notna() & x_all.isna()).sum()),
                }
                estimate = (
                    _unpaired(metric, x, y, confidence, alpha, power)
                    if both.sum() == 1 and min(x.size, y.size) >= 2
                    else _estimate(
                        metric, x, y, confidence, alpha, power, n_resamples, seed, reason
                    )
                )
                if generalize is not None:
                    estimate.update(
                        difference_interval(
                            data,
                            by_cols,
                            key,
                            metric,
                            value_of[metric],
                            system,
                            left,
                            right,
                            generalize,
                            case,
                            estimate["delta"],
                            confidence,
                        )
                    )
                rows.append({**row, **estimate})
    extra = FACET_INTERVAL_COLUMNS if generalize is not None else []
    out = pd.DataFrame(rows, columns=[*by_cols, *COMPARE_COLUMNS, *extra])
    ok = out["p_value"].notna().to_numpy()
    out["p_holm"], out["p_bh"] = np.nan, np.nan
    if ok.any():
        out.loc[ok, "p_holm"] = multipletests(out.loc[ok, "p_value"], method="holm")[1]
        out.loc[ok, "p_bh"] = multipletests(out.loc[ok, "p_value"], method="fdr_bh")[1]
    return out


def _estimate(
    metric: str,
    x: np.ndarray,
    y: np.ndarray,
    confidence: float,
    alpha: float,
    power: float,
    n_resamples: int,
    seed: int | None,
    empty_reason: str = "not estimable: no case ran by both",
) -> dict:
    if x.shape != y.shape:  # never broadcast one side's runs against the other's
        raise StatsError(f"paired values differ in length ({x.size} and {y.size})")
    n = x.size
    if n == 0:
        return {
            "value": np.nan,
            "value_baseline": np.nan,
            "delta": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "test": None,
            "statistic": np.nan,
            "p_value": np.nan,
            "p_wilcoxon": np.nan,
            "effect_size": np.nan,
            "effect_size_name": None,
            "sd_diff": np.nan,
            "mde": np.nan,
            "method": empty_reason,
        }
    if metric == "win_rate":
        outcome = np.sign(x - y) * 0.5 + 0.5
        value, value_base, diffs = float(outcome.mean()), 0.5, outcome - 0.5
    else:
        value, value_base, diffs = float(x.mean()), float(y.mean()), x - y
    binary = metric == "pass_rate" and np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all()
    if binary:
        counts = [
            int(np.sum((x == 1) & (y == 1))),
            int(np.sum((x == 1) & (y == 0))),
            int(np.sum((x == 0) & (y == 1))),
            int(np.sum((x == 0) & (y == 0))),
        ]
        _, low, high = paired_proportion_ci(*counts, confidence=confidence)
        how = f"Newcombe paired interval over {n} cases"
    elif n >= 2 and np.ptp(diffs) > 0 and n < BOOTSTRAP_FROM:
        low, high, how = _t_interval(metric, diffs, confidence)
    elif n >= 2 and np.ptp(diffs) > 0:
        ci = bootstrap_ci(diffs, confidence=confidence, n_resamples=n_resamples, seed=seed)
        low, high, how = ci.low, ci.high, f"BCa bootstrap over {n} paired cases"
    elif n >= 2:
        # no spread in the sample is not a certainty: the bounded-data floor (Wilson)
        bound = 0.5 if metric == "win_rate" else 1.0
        low, high = no_spread_ci(
            float(diffs.mean()), n, bounds=(-bound, bound), confidence=confidence
        )
        how = (
            f"every paired case differs by the same amount ({n} cases): Wilson interval for a "
            f"difference bounded by +-{bound:g} (no sample spread)"
        )
    else:
        low, high, how = np.nan, np.nan, "n < 2: no interval"
    sd = float(np.std(diffs, ddof=1)) if n > 1 else np.nan
    mde = (
        minimum_detectable_effect(n, sd**2, alpha=alpha, power=power)
        if n > 1 and sd > 0
        else np.nan
    )
    return {
        "value": value,
        "value_baseline": value_base,
        "delta": float(diffs.mean()),
        "ci_low": low,
        "ci_high": high,
        **_test(metric, x, y),
        "sd_diff": sd,
        "mde": mde,
        "method": how,
    }


def _unpaired(
    metric: str, x: np.ndarray, y: np.ndarray, confidence: float, alpha: float, power: float
) -> dict:
    """One shared case run several times by each system: its repeats compared as two samples
    (the interval and the test are about that case alone)."""
    how = f"one case: its repeats compared unpaired ({x.size} and {y.size} runs)"
    base = {
        "value": float(x.mean()),
        "value_baseline": float(y.mean()),
        "delta": float(x.mean() - y.mean()),
        "p_wilcoxon": np.nan,
        "sd_diff": np.nan,
    }
    se2 = np.var(x, ddof=1) / x.size + np.var(y, ddof=1) / y.size  # squared standard error
    mde = minimum_detectable_effect(1, se2, alpha=alpha, power=power)
    mde = mde if mde > 0 else np.nan  # no spread on either side: nothing to power against
    if metric == "win_rate":
        return {
            **base,
            "value": np.nan,
            "value_baseline": 0.5,
            "delta": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "test": None,
            "statistic": np.nan,
            "p_value": np.nan,
            "effect_size": np.nan,
            "effect_size_name": None,
            "mde": np.nan,
            "method": "one case: a win rate needs several cases",
        }
    if metric == "pass_rate" and np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all():
        kx, ky = int(x.sum()), int(y.sum())
        low, high = confint_proportions_2indep(
            kx, x.size, ky, y.size, method="newcomb", alpha=1 - confidence
        )
        table = [[kx, x.size - kx], [ky, y.size - ky]]
        odds = ((kx + 0.5) * (y.size - ky + 0.5)) / ((x.size - kx + 0.5) * (ky + 0.5))
        return {
            **base,
            "ci_low": float(low),
            "ci_high": float(high),
            "test": "Fisher exact",
            "statistic": odds,
            "p_value": float(sps.fisher_exact(table)[1]),
            "effect_size": odds,
            "effect_size_name": "odds ratio (+0.5)",
            "mde": mde,
            "method": how + "; Newcombe interval",
        }
    spread = np.sqrt((np.var(x, ddof=1) + np.var(y, ddof=1)) / 2)
    statistic = np.nan
    if spread > 0:
        welch = sps.ttest_ind(x, y, equal_var=False)
        ci = welch.confidence_interval(confidence)
        low, high, p = float(ci.low), float(ci.high), float(welch.pvalue)
        statistic = float(welch.statistic)
        rank_p = float(sps.mannwhitneyu(x, y).pvalue)
    else:  # every run of each side scored the same: no spread to test against
        low, high = no_spread_ci(
            base["delta"], min(x.size, y.size), bounds=(-1.0, 1.0), confidence=confidence
        )
        p, rank_p = (1.0 if base["delta"] == 0 else np.nan), np.nan
        how += "; no spread within either side: Wilson floor for a difference bounded by +-1"
    return {
        **base,
        "ci_low": low,
        "ci_high": high,
        "test": "Welch t",
        "statistic": statistic,
        "p_value": p,
        "p_wilcoxon": rank_p,
        "effect_size": base["delta"] / spread if spread > 0 else np.nan,
        "effect_size_name": "Cohen's d",
        "mde": mde,
        "method": how + "; Welch interval",
    }
