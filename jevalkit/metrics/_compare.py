"""Is B better than A, by how much, and is it real? Paired comparisons of systems by case, with
tests, multiple-comparison adjustment and the smallest effect the data could detect.

This module holds the input step and the walk over groups and pairs; the test choice is
``_paired_tests``, the interval choice ``_paired_intervals``, the one-shared-case branch
``_unpaired``, the facet-aware interval ``_facet_interval``."""

from __future__ import annotations

import gc
import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from ..contract import CASE_COLUMNS, CaseSpec, columns_of, estimator, finish, prepare, require
from ..errors import StatsError
from ._facet_interval import (
    FACET_COLUMNS,
    check_nested,
    no_interval,
    other_facets,
    paired_facet_interval,
)
from ._paired_intervals import paired_estimate
from ._unpaired import unpaired_estimate

METRICS = ("pass_rate", "mean_score", "win_rate")
COLUMNS = [
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


def _scored(
    data: pd.DataFrame,
    value: str,
    *,
    metric: str,
    case: CaseSpec,
    system: str,
    by: list[str],
    repeat: str | None,
    scale: tuple[float, float] | None,
    facets: Sequence[str],
    pool: bool,
) -> tuple[pd.DataFrame, list[str]]:
    """The scored rows of one metric, checked (verdicts 0/1, scores in [0, 1] or ``scale``, case
    keys of one type, no duplicated row, a system's settings kept apart:
    :func:`jevalkit.contract.prepare`), one per row: the grouping columns, the ``facets``,
    ``_case`` (code), ``_system``, ``_v``; and the grouping columns (``by``, then the settings
    kept apart)."""
    verdicts = metric == "pass_rate"
    p = prepare(
        data,
        value,
        by=by or None,
        case=case,
        system=system,
        repeat=repeat,
        within=facets,
        kind="verdict" if verdicts else "score",
        scale=None if verdicts else scale,
        keyword="passed" if verdicts else "score",
        need_repeat=True,
        pool=pool,
    )
    frame = p.frame
    rows = pd.DataFrame(
        {
            **{c: frame[c].to_numpy() for c in [*p.by, *facets]},
            "_case": p.case,
            "_system": p.system,
            "_v": p.values,
        }
    )
    return rows, p.by


def _pairs(systems: Sequence[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is None:
        return list(itertools.combinations(sorted(systems), 2))
    if baseline not in systems:
        raise StatsError(f"baseline {baseline!r} not found; systems: {sorted(systems)}")
    return [(s, baseline) for s in sorted(systems) if s != baseline]


def _groups(rows: pd.DataFrame, by: list[str]):
    if not by:
        yield (), rows
        return
    for key, group in rows.groupby(by, sort=True, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), group


@estimator(
    unit="case",
    estimand="paired difference of case means (system - baseline)",
    interval="Newcombe paired (0/1) or BCa over paired cases",
    checks=(
        "order",
        "rename",
        "method",
        "scale",
        "keys",
        "duplicates",
        "one_case",
        "no_spread",
        "settings",
    ),
    call={"baseline": "A", "case": "case_id"},
    calibration="compare",
)
def compare(
    data: pd.DataFrame,
    baseline: str | None = None,
    *,
    by: CaseSpec = None,
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
    n_resamples: int = 2000,
    seed: int | None = 0,
    generalize: Sequence[str] | None = None,
    nested: Mapping[str, str] | None = None,
    pool: bool = False,
) -> pd.DataFrame:
    """Compare systems case by case: every system against ``baseline`` (or, without one, every
    pair), per group and metric, on the cases both ran.

    Args:
        data: results (or any frame with the named columns).
        baseline: the system the others are compared with; None compares every pair.
        by: column(s) to compare within (e.g. ``"probe"``; default: all rows together).
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
        nested: generalised facet -> its parent, e.g. ``{"variant": "case"}``.
        pool: pool a probe's versions and generation settings (``params_hash``) on purpose;
            by default those that differ within a system join the ``by`` columns (each
            version or setting compared on its own).

    Returns:
        One row per group, system and metric, with the ``by`` columns (then the settings kept
        apart), ``system``, ``baseline``,
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
        >>> row = compare(df, "A", case="case_id", metrics=["pass_rate"]).iloc[0]
        >>> row["system"], float(row["delta"]), row["test"], round(float(row["p_value"]), 3)
        ('B', 0.25, 'McNemar, exact', 0.5)
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        raise StatsError(f"metrics must be among {', '.join(METRICS)}, got {list(metrics)}")
    by_cols = columns_of(by)
    for column in [*by_cols, system]:
        require(data, column, "by" if column != system else "system", "compared within or between")
    facets = other_facets(generalize, case, data)
    check_nested(nested, generalize)
    with_case = generalize is not None and len(facets) < len(list(dict.fromkeys(generalize)))
    systems = sorted(data[system].dropna().astype(str).unique())
    rows = []
    for metric in metrics:
        value = passed if metric == "pass_rate" else score
        scored, groups = _scored(
            data,
            value,
            metric=metric,
            case=case,
            system=system,
            by=by_cols,
            repeat=repeat,
            scale=scale,
            facets=facets,
            pool=pool,
        )
        for key, long in _groups(scored, groups):
            wide = long.groupby(["_case", "_system"], sort=True)["_v"].mean().unstack("_system")
            for left, right in _pairs(systems, baseline):
                if left not in wide.columns or right not in wide.columns:
                    continue
                rows.append(
                    {
                        **dict(zip(groups, key, strict=True)),
                        **_pair(
                            metric,
                            long,
                            wide,
                            left,
                            right,
                            confidence,
                            alpha,
                            power,
                            n_resamples,
                            seed,
                        ),
                    }
                )
                if generalize is not None:
                    rows[-1].update(
                        no_interval("not estimable: a win rate has no facet-aware interval")
                        if metric == "win_rate"
                        else paired_facet_interval(
                            long,
                            left,
                            right,
                            facets,
                            with_case,
                            rows[-1]["delta"],
                            confidence,
                            nested=nested,
                        )
                    )
    extra = FACET_COLUMNS if generalize is not None else []
    by_cols = groups  # the by columns, then the settings kept apart (the same for every metric)
    out = pd.DataFrame(rows, columns=[*by_cols, *COLUMNS, *extra])
    ok = out["p_value"].notna().to_numpy()
    out["p_holm"], out["p_bh"] = np.nan, np.nan
    if ok.any():
        out.loc[ok, "p_holm"] = _adjusted(out.loc[ok, "p_value"], "holm")
        out.loc[ok, "p_bh"] = _adjusted(out.loc[ok, "p_value"], "fdr_bh")
    return finish(out, order=[*by_cols, *COLUMNS, *extra], estimate="delta")


def _adjusted(p_values: pd.Series, method: str) -> np.ndarray:
    """statsmodels' adjusted p-values. Its Holm branch calls ``gc.collect()`` on every call
    (statsmodels PR 8671), a full collection that costs a notebook holding big frames a
    fraction of a second per ``compare``; frozen objects are skipped by it, so the heap is
    frozen for the call and released after; garbage that collection would have found waits for
    the next automatic one. A heap the caller froze already is left as it is."""
    if gc.get_freeze_count():
        return multipletests(p_values, method=method)[1]
    gc.freeze()
    try:
        return multipletests(p_values, method=method)[1]
    finally:
        gc.unfreeze()


def _pair(
    metric: str,
    long: pd.DataFrame,
    wide: pd.DataFrame,
    left: str,
    right: str,
    confidence: float,
    alpha: float,
    power: float,
    n_resamples: int,
    seed: int | None,
) -> dict:
    """One (group, pair, metric) row: paired by case, or one shared case's repeats unpaired."""
    x_all, y_all = wide[left], wide[right]
    both = x_all.notna() & y_all.notna()
    x, y = x_all[both].to_numpy(float), y_all[both].to_numpy(float)
    row = {
        "system": left,
        "baseline": right,
        "metric": metric,
        "n_paired": int(both.sum()),
        "n_only_system": int((x_all.notna() & y_all.isna()).sum()),
        "n_only_baseline": int((y_all.notna() & x_all.isna()).sum()),
    }
    reason = "not estimable: no case ran by both"
    if both.sum() == 1:  # one shared case: compare its repeats, unpaired
        rows_of = long[long["_case"] == both[both].index[0]]
        x = rows_of.loc[rows_of["_system"] == left, "_v"].to_numpy(float)
        y = rows_of.loc[rows_of["_system"] == right, "_v"].to_numpy(float)
        if min(x.size, y.size) >= 2:
            return {**row, **unpaired_estimate(metric, x, y, confidence, alpha, power)}
        once = left if x.size < 2 else right
        x = y = np.array([])  # no estimate: one case, run once by one side
        reason = (
            f"not estimable: one shared case, run once by {once!r}; a comparison "
            "needs two or more paired cases, or repeats of the case on both sides"
        )
    estimate = paired_estimate(metric, x, y, confidence, alpha, power, n_resamples, seed, reason)
    return {**row, **estimate}
