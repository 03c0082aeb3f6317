"""Is this judge any good? Agreement with gold labels, calibration, and coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..metrics import mean_absolute_error
from ..stats import bootstrap_ci
from ._prompts import load_judge_prompt


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


def _top_label(df: pd.DataFrame) -> str:
    return load_judge_prompt(str(df["probe"].iloc[0])).labels[-1]


def _probability_pairs(df: pd.DataFrame, top_label: str) -> tuple[np.ndarray, np.ndarray]:
    ok = df[df["probs"].notna() & df["gold"].notna()]
    p = np.array([probs[-1] for probs in ok["probs"]], dtype=float)
    y = (ok["gold"].astype(str) == top_label).to_numpy(float)
    return p, y


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
    p, y = _probability_pairs(df, top_label or _top_label(df))
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    rows = []
    for b in range(bins):
        mask = which == b
        if mask.any():
            rows.append({"bin_low": edges[b], "bin_high": edges[b + 1], "n": int(mask.sum()),
                         "predicted": float(p[mask].mean()), "observed": float(y[mask].mean())})  # fmt: skip
    return pd.DataFrame(rows)


def quality(df: pd.DataFrame, *, levels: list[str] | None = None) -> pd.DataFrame:
    """One row per evaluator: how well its judgments match gold labels.

    Ordinal judges (3+ levels with numeric labels): ``mae`` of the expected level against gold
    with a BCa CI, ``spearman`` and ``kendall`` correlations with bootstrap CIs, ``exact_agreement``
    of the verdict. Two-level judges: ``brier`` score, expected calibration error ``ece``
    (10 bins, weighted by bin size), and the same exact agreement. Always: ``n`` (judged rows with
    gold), ``n_errors``, and the coverage distribution (``coverage_min``, ``coverage_median``).

    Example:
        >>> df = pd.DataFrame({"probe": "f", "gold": ["4", "0", "2", "3"], "verdict": ["4", "0", "3", "3"],
        ...                    "expected_level": [3.8, 0.4, 2.6, 3.0], "probs": [[0.2, 0.8]] * 4,
        ...                    "coverage": [0.9] * 4, "error": [None] * 4})
        >>> round(float(quality(df)["mae"][0]), 2)
        0.3
    """
    rows = []
    for evaluator, group in df.groupby("probe", sort=True):
        errors = (
            group["error"].notna()
            if "error" in group.columns
            else pd.Series(False, index=group.index)
        )
        ok = group[~errors & group["gold"].notna() & group["verdict"].notna()]
        row = {"probe": evaluator, "n": len(ok), "n_errors": int(errors.sum()),
               "exact_agreement": float((ok["verdict"].astype(str) == ok["gold"].astype(str)).mean()) if len(ok) else np.nan,
               "coverage_min": float(ok["coverage"].min()) if len(ok) and "coverage" in ok else np.nan,
               "coverage_median": float(ok["coverage"].median()) if len(ok) and "coverage" in ok else np.nan}  # fmt: skip
        numeric = pd.to_numeric(ok["gold"], errors="coerce")
        if (
            len(ok)
            and numeric.notna().all()
            and "expected_level" in ok
            and ok["expected_level"].notna().all()
        ):
            x, y = ok["expected_level"].astype(float).to_numpy(), numeric.to_numpy(float)
            mae = mean_absolute_error(x, y).iloc[0]
            row.update(mae=mae["value"], mae_ci_low=mae["ci_low"], mae_ci_high=mae["ci_high"])
            for name, fn in (("spearman", sps.spearmanr), ("kendall", sps.kendalltau)):
                stat = fn(x, y).statistic if np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
                low, high = _paired_ci(x, y, fn)
                row.update({name: float(stat), f"{name}_ci_low": low, f"{name}_ci_high": high})
        elif len(ok) and ok["probs"].map(len).eq(2).all():
            top = _top_label(ok)
            p, y = _probability_pairs(ok, top)
            row["brier"] = float(np.mean((p - y) ** 2))
            curve = reliability_curve(ok, top_label=top)
            row["ece"] = float(
                np.sum(curve["n"] * (curve["predicted"] - curve["observed"]).abs())
                / curve["n"].sum()
            )
            row["brier_ci_low"], row["brier_ci_high"] = (
                (bootstrap_ci((p - y) ** 2, seed=0).low, bootstrap_ci((p - y) ** 2, seed=0).high)
                if p.size >= 2
                else (np.nan, np.nan)
            )
        rows.append(row)
    return pd.DataFrame(rows)
