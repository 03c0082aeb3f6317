"""Is this judge any good? Agreement with gold labels, calibration, and coverage.

What is measured follows the judge file's ``kind``: ``rubric`` judges (levels 0..L) get the
error of the expected level and rank correlations; ``probability`` judges (two levels) get the
Brier score and calibration; every judge, deterministic ones included, gets exact agreement of
the verdict with gold and how many rows had no trustworthy judgment.

The unit is a judged row. Rows are put in the order of their identity (system, case, repeat)
before any bootstrap, so the order rows arrive in changes no number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import CASE_COLUMNS, CaseSpec, Prepared, estimator, finish, prepare
from ..errors import JudgeFileError
from ..judges import load_judge_prompt
from ..stats import bootstrap_ci
from ._scores import mean_absolute_error

CURVE_COLUMNS = ["bin_low", "bin_high", "n", "predicted", "observed"]


def _judged(
    df: pd.DataFrame,
    value: str,
    *,
    evaluator: str | None,
    case: CaseSpec,
    system: str | None,
    repeat: str | None,
    gold: str,
    pool: bool,
) -> tuple[Prepared, pd.DataFrame]:
    """The judged rows with gold (the input step), in the order of their identity; a judge's
    versions or settings kept apart (with an ``evaluator``), or refused (without one)."""
    p = prepare(
        df,
        value,
        by=evaluator,
        case=case,
        system=system,
        repeat=repeat,
        also=[gold],
        kind="any",
        keyword=value,
        pool=pool,
        apart=evaluator is not None,
    )
    keys = {"_g": p.group}
    if p.system is not None:
        keys["_s"] = p.system
    keys["_case"] = p.case
    if repeat is not None and repeat in p.frame.columns:
        keys["_r"] = p.frame[repeat].astype(str).to_numpy()
    order = pd.DataFrame(keys).sort_values([*keys], kind="stable").index.to_numpy()
    return p, p.frame.iloc[order].assign(_g=p.group[order])


def _paired_ci(
    x: np.ndarray,
    y: np.ndarray,
    fn: Callable[[np.ndarray, np.ndarray], Any],  # a scipy correlation: .statistic
    seed: int = 0,
    n_resamples: int = 2000,
) -> tuple[float, float]:
    if x.size < 4:
        return np.nan, np.nan
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        idx = rng.integers(0, x.size, x.size)
        if np.ptp(x[idx]) == 0 or np.ptp(y[idx]) == 0:
            continue
        values.append(fn(x[idx], y[idx]).statistic)
    low, high = np.percentile(values, [2.5, 97.5]) if len(values) >= 10 else (np.nan, np.nan)
    if not high > low:  # too few resamples varied, or every one gave the same value: none
        return np.nan, np.nan
    return float(low), float(high)


def _judge_kind(evaluator: str) -> str:
    """``rubric``, ``probability`` or ``classification`` from the judge file; ``deterministic``
    for evaluators without one (``tool_call_accuracy``)."""
    try:
        return load_judge_prompt(evaluator).kind
    except JudgeFileError:
        return "deterministic"


def _probability_pairs(
    ok: pd.DataFrame, gold: str, top_label: str
) -> tuple[np.ndarray, np.ndarray]:
    ok = ok[ok["probs"].notna()]
    p = np.array([probs[-1] for probs in ok["probs"]], dtype=float)
    y = (ok[gold].astype(str) == top_label).to_numpy(float)
    return p, y


def _curve(p: np.ndarray, y: np.ndarray, bins: int) -> pd.DataFrame:
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    rows = []
    for b in range(bins):
        mask = which == b
        if mask.any():
            rows.append(
                {
                    "bin_low": edges[b],
                    "bin_high": edges[b + 1],
                    "n": int(mask.sum()),
                    "predicted": float(p[mask].mean()),
                    "observed": float(y[mask].mean()),
                }
            )
    return finish(pd.DataFrame(rows, columns=CURVE_COLUMNS), order=CURVE_COLUMNS)


def _probability_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter input: a two-level judge's rows from a results frame."""
    p = frame["score"].clip(0.05, 0.95)
    return frame.assign(
        probe="security",
        probs=[[1 - v, v] for v in p],
        gold=np.where(frame["gold"] > 0.5, "unsafe", "safe"),
        verdict=np.where(p > 0.5, "unsafe", "safe"),
    )


def _reliability_curve_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return reliability_curve(_probability_frame(frame), case="case_id")


@estimator(
    unit="judged row",
    estimand="observed rate per bin of predicted probability",
    interval="none (a calibration table)",
    checks=("order", "rename", "keys", "duplicates", "settings"),
    adapter=_reliability_curve_adapter,
    note="pinned in tests/metrics/test_judge_quality.py",
)
def reliability_curve(
    df: pd.DataFrame,
    *,
    top_label: str | None = None,
    bins: int = 10,
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    repeat: str | None = "repeat",
    gold: str = "gold",
    pool: bool = False,
) -> pd.DataFrame:
    """For a two-level (probability) judge: per bin of predicted p(top level), the mean prediction,
    the observed share of gold top labels, and n. ``top_label`` defaults to the judge's top level.
    Two versions or generation settings of the judge are refused, naming the column
    (``pool=True`` pools them on purpose).

    Returns:
        One row per bin with rows: ``bin_low``, ``bin_high``, ``n``, ``predicted``, ``observed``.

    Example:
        >>> df = pd.DataFrame({"probe": ["security"] * 2, "probs": [[0.9, 0.1], [0.2, 0.8]],
        ...                    "gold": ["safe", "unsafe"]})
        >>> reliability_curve(df, bins=2, case=None, system=None)[["n", "observed"]].values.tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    _, ok = _judged(
        df, "probs", evaluator=None, case=case, system=system, repeat=repeat, gold=gold, pool=pool
    )
    if ok.empty:  # no row with gold: an empty table, not an error
        return _curve(np.zeros(0), np.zeros(0), bins)
    top = top_label or load_judge_prompt(str(ok["probe"].iloc[0])).labels[-1]
    return _curve(*_probability_pairs(ok, gold, top), bins)


def _rubric(ok: pd.DataFrame, gold: str, level: str) -> dict:
    values = pd.to_numeric(ok[gold], errors="coerce")
    usable = values.notna() & ok[level].notna()
    if not usable.any():
        return {}
    x = ok.loc[usable, level].astype(float).to_numpy()
    y = values[usable].to_numpy(float)
    mae = mean_absolute_error(x, y).iloc[0]
    row = {"mae": mae["value"], "mae_ci_low": mae["ci_low"], "mae_ci_high": mae["ci_high"]}
    for name, fn in (("spearman", sps.spearmanr), ("kendall", sps.kendalltau)):
        stat = fn(x, y).statistic if x.size > 1 and np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
        low, high = _paired_ci(x, y, fn)
        row.update({name: float(stat), f"{name}_ci_low": low, f"{name}_ci_high": high})
    return row


def _probability(ok: pd.DataFrame, evaluator: str, gold: str) -> dict:
    with_probs = ok[ok["probs"].notna()]
    if with_probs.empty:
        return {}
    top = load_judge_prompt(evaluator).labels[-1]
    p, y = _probability_pairs(with_probs, gold, top)
    losses = (p - y) ** 2
    curve = _curve(p, y, 10)
    ece = float(np.sum(curve["n"] * (curve["predicted"] - curve["observed"]).abs()) / len(p))
    ci = bootstrap_ci(losses, seed=0) if p.size >= 2 else None
    return {
        "brier": float(losses.mean()),
        "ece": ece,
        "brier_ci_low": ci.low if ci else np.nan,
        "brier_ci_high": ci.high if ci else np.nan,
    }


def _rubric_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter input: a five-level rubric judge's rows from a results
    frame."""
    level = frame["expected_level"] * 4
    return frame.assign(
        probe="faithfulness",
        expected_level=level,
        verdict=level.round().astype(int).astype(str),
        gold=(frame["score"] * 4).round().astype(int).astype(str),
        coverage=1.0,
    )


def _quality_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return quality(_rubric_frame(frame), case="case_id")


@estimator(
    unit="judged row",
    estimand="a judge's agreement with gold labels",
    interval="BCa bootstrap for the MAE and Brier score; percentile bootstrap for rank correlations",
    checks=("order", "rename", "keys", "duplicates", "settings"),
    adapter=_quality_adapter,
    note="pinned to scipy in tests/metrics/test_judge_quality.py",
)
def quality(
    df: pd.DataFrame,
    *,
    evaluator: str = "probe",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    repeat: str | None = "repeat",
    gold: str = "gold",
    verdict: str = "verdict",
    level: str = "expected_level",
    pool: bool = False,
) -> pd.DataFrame:
    """One row per evaluator: how well its judgments match gold labels.

    Rubric judges: ``mae`` of the expected level against gold with a BCa CI, ``spearman`` and
    ``kendall`` correlations with bootstrap CIs. Probability judges: ``brier`` score (with a CI),
    expected calibration error ``ece`` (10 bins, weighted by bin size). Every judge: ``kind``,
    ``n`` (judged rows with gold), ``n_errors`` (rows without a trustworthy judgment),
    ``exact_agreement`` of the verdict, and the coverage distribution (``coverage_min``,
    ``coverage_median``; NaN for deterministic evaluators).

    Args:
        df: judged results with gold labels.
        evaluator: the column naming the judge (results: ``probe``).
        case, system, repeat: the judged rows' identity (the data contract; ``None`` where a
            frame has no such column: then rows are taken in the order given).
        gold, verdict, level: the gold label, the judge's verdict and its expected level.
        pool: pool a judge's prompt versions or generation settings (``params_hash``) on
            purpose; by default those that differ are kept apart (columns after the
            ``evaluator`` column, one row each).

    Returns:
        One row per evaluator (and version or setting kept apart): the ``evaluator`` column,
        ``kind``, ``n``, ``n_errors``,
        ``exact_agreement``, ``coverage_min``, ``coverage_median``, then (rubric) ``mae``,
        ``mae_ci_low``, ``mae_ci_high``, ``spearman``, ``spearman_ci_low``,
        ``spearman_ci_high``, ``kendall``, ``kendall_ci_low``, ``kendall_ci_high`` or
        (probability) ``brier``, ``ece``, ``brier_ci_low``, ``brier_ci_high``.

    Example:
        >>> df = pd.DataFrame({"probe": "faithfulness", "gold": ["4", "0", "2", "3"], "verdict": ["4", "0", "3", "3"],
        ...                    "expected_level": [3.8, 0.4, 2.6, 3.0], "probs": [[0.2, 0.2, 0.2, 0.2, 0.2]] * 4,
        ...                    "coverage": [0.9] * 4, "error": [None] * 4})
        >>> round(float(quality(df, case=None, system=None)["mae"][0]), 2)
        0.3
    """
    p, ok = _judged(
        df,
        verdict,
        evaluator=evaluator,
        case=case,
        system=system,
        repeat=repeat,
        gold=gold,
        pool=pool,
    )
    errors = df["error"].notna() if "error" in df else pd.Series(False, index=df.index)
    rows = []
    for i, key in enumerate(p.groups.to_dict("records")):
        name = key[evaluator]
        group = ok[ok["_g"] == i]
        mine = np.ones(len(df), dtype=bool)
        for column, value in key.items():
            same = df[column].isna() if pd.isna(value) else df[column] == value
            mine &= same.to_numpy(dtype=bool)
        kind = _judge_kind(str(name))
        coverage = (
            pd.to_numeric(group["coverage"], errors="coerce").astype(float).dropna()
            if "coverage" in group
            else pd.Series(dtype=float)
        )
        agree = (
            (group[verdict].astype(str) == group[gold].astype(str)).mean() if len(group) else np.nan
        )
        row = {
            **key,
            "kind": kind,
            "n": len(group),
            "n_errors": int(errors[mine].sum()),
            "exact_agreement": float(agree),
            "coverage_min": float(coverage.min()) if len(coverage) else np.nan,
            "coverage_median": float(coverage.median()) if len(coverage) else np.nan,
        }
        if kind == "rubric":
            row.update(_rubric(group, gold, level))
        elif kind == "probability":
            row.update(_probability(group, str(name), gold))
        rows.append(row)
    return finish(pd.DataFrame(rows))
