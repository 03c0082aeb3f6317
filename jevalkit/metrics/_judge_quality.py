"""Is this judge any good? Agreement with gold labels, calibration, and coverage.

What is measured follows the judge file's ``kind``: ``rubric`` judges (levels 0..L) get the
error of the expected level and rank correlations; ``probability`` judges (two levels) get the
Brier score and calibration; every judge, deterministic ones included, gets exact agreement of
the verdict with gold and how many rows had no trustworthy judgment.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import estimator
from ..errors import JudgeFileError
from ..judges import load_judge_prompt
from ..stats import bootstrap_ci
from ._scores import mean_absolute_error

QUALITY_COLUMNS = [
    "probe",
    "kind",
    "n",
    "n_errors",
    "exact_agreement",
    "coverage_min",
    "coverage_median",
]


def _paired_ci(
    x: np.ndarray, y: np.ndarray, fn, seed: int = 0, n_resamples: int = 2000
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
    if len(values) < 10:
        return np.nan, np.nan
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def judge_kind(evaluator: str) -> str:
    """``rubric``, ``probability`` or ``classification`` from the judge file; ``deterministic``
    for evaluators without one (``tool_call_accuracy``).

    Example:
        >>> judge_kind("security"), judge_kind("tool_call_accuracy")
        ('probability', 'deterministic')
    """
    try:
        return load_judge_prompt(evaluator).kind
    except JudgeFileError:
        return "deterministic"


def _probability_pairs(df: pd.DataFrame, top_label: str) -> tuple[np.ndarray, np.ndarray]:
    ok = df[df["probs"].notna() & df["gold"].notna()]
    p = np.array([probs[-1] for probs in ok["probs"]], dtype=float)
    y = (ok["gold"].astype(str) == top_label).to_numpy(float)
    return p, y


@estimator(
    unit="case",
    estimand="observed rate per bin of predicted probability",
    interval="Wilson per bin",
    data="arrays",
    note="judge-specific frames; pinned in tests/metrics/test_judge_quality.py",
)
def reliability_curve(
    df: pd.DataFrame, *, top_label: str | None = None, bins: int = 10
) -> pd.DataFrame:
    """For a two-level (probability) judge: per bin of predicted p(top level), the mean prediction,
    the observed share of gold top labels, and n. ``top_label`` defaults to the judge's top level.

    Example:
        >>> df = pd.DataFrame({"probe": ["security"] * 2, "probs": [[0.9, 0.1], [0.2, 0.8]],
        ...                    "gold": ["safe", "unsafe"]})
        >>> reliability_curve(df, bins=2)[["n", "observed"]].values.tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    top = top_label or load_judge_prompt(str(df["probe"].iloc[0])).labels[-1]
    p, y = _probability_pairs(df, top)
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
    return pd.DataFrame(rows, columns=["bin_low", "bin_high", "n", "predicted", "observed"])


def _rubric(ok: pd.DataFrame) -> dict:
    gold = pd.to_numeric(ok["gold"], errors="coerce")
    usable = gold.notna() & ok["expected_level"].notna()
    if not usable.any():
        return {}
    x = ok.loc[usable, "expected_level"].astype(float).to_numpy()
    y = gold[usable].to_numpy(float)
    mae = mean_absolute_error(x, y).iloc[0]
    row = {"mae": mae["value"], "mae_ci_low": mae["ci_low"], "mae_ci_high": mae["ci_high"]}
    for name, fn in (("spearman", sps.spearmanr), ("kendall", sps.kendalltau)):
        stat = fn(x, y).statistic if x.size > 1 and np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
        low, high = _paired_ci(x, y, fn)
        row.update({name: float(stat), f"{name}_ci_low": low, f"{name}_ci_high": high})
    return row


def _probability(ok: pd.DataFrame, evaluator: str) -> dict:
    with_probs = ok[ok["probs"].notna()]
    if with_probs.empty:
        return {}
    top = load_judge_prompt(evaluator).labels[-1]
    p, y = _probability_pairs(with_probs, top)
    losses = (p - y) ** 2
    curve = reliability_curve(with_probs, top_label=top)
    ece = float(np.sum(curve["n"] * (curve["predicted"] - curve["observed"]).abs()) / len(p))
    ci = bootstrap_ci(losses, seed=0) if p.size >= 2 else None
    return {
        "brier": float(losses.mean()),
        "ece": ece,
        "brier_ci_low": ci.low if ci else np.nan,
        "brier_ci_high": ci.high if ci else np.nan,
    }


@estimator(
    unit="case",
    estimand="a judge's agreement with gold labels",
    interval="Wilson / bootstrap per measure",
    data="arrays",
    note="judge-specific frames (a judge prompt file); pinned in tests/metrics/test_judge_quality.py",
)
def quality(df: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluator: how well its judgments match gold labels.

    Rubric judges: ``mae`` of the expected level against gold with a BCa CI, ``spearman`` and
    ``kendall`` correlations with bootstrap CIs. Probability judges: ``brier`` score (with a CI),
    expected calibration error ``ece`` (10 bins, weighted by bin size). Every judge: ``kind``,
    ``n`` (judged rows with gold), ``n_errors`` (rows without a trustworthy judgment),
    ``exact_agreement`` of the verdict, and the coverage distribution (``coverage_min``,
    ``coverage_median``; NaN for deterministic evaluators).

    Example:
        >>> df = pd.DataFrame({"probe": "faithfulness", "gold": ["4", "0", "2", "3"], "verdict": ["4", "0", "3", "3"],
        ...                    "expected_level": [3.8, 0.4, 2.6, 3.0], "probs": [[0.2, 0.2, 0.2, 0.2, 0.2]] * 4,
        ...                    "coverage": [0.9] * 4, "error": [None] * 4})
        >>> round(float(quality(df)["mae"][0]), 2)
        0.3
    """
    rows = []
    for evaluator, group in df.groupby("probe", sort=True):
        kind = judge_kind(str(evaluator))
        errors = group["error"].notna() if "error" in group else pd.Series(False, index=group.index)
        ok = group[~errors & group["gold"].notna() & group["verdict"].notna()]
        coverage = (
            pd.to_numeric(ok["coverage"], errors="coerce").astype(float).dropna()
            if "coverage" in ok
            else pd.Series(dtype=float)
        )
        agree = (ok["verdict"].astype(str) == ok["gold"].astype(str)).mean() if len(ok) else np.nan
        row = {
            "probe": evaluator,
            "kind": kind,
            "n": len(ok),
            "n_errors": int(errors.sum()),
            "exact_agreement": float(agree),
            "coverage_min": float(coverage.min()) if len(coverage) else np.nan,
            "coverage_median": float(coverage.median()) if len(coverage) else np.nan,
        }
        if kind == "rubric":
            row.update(_rubric(ok))
        elif kind == "probability":
            row.update(_probability(ok, str(evaluator)))
        rows.append(row)
    return pd.DataFrame(rows)
