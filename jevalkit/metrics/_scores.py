"""mean_score, pass_rate and mean_absolute_error."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..stats import bimodality, bootstrap_ci, standard_error, wilson_ci
from ._frame import as_frame, by_groups, case_key, unit_values

HISTOGRAM_BINS = np.linspace(0.0, 1.0, 11)


def _t_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    if values.size < 2:
        return np.nan, np.nan, np.nan
    se = float(sps.sem(values))
    half = sps.t.ppf(0.5 + confidence / 2, values.size - 1) * se
    m = float(values.mean())
    return se, m - half, m + half


def mean_score(
    data: pd.DataFrame | Sequence[float] | np.ndarray,
    *,
    by: str | Iterable[str] | None = None,
    score: str = "score",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean of normalised 0-1 scores, one row per group, with n and a t interval.

    When cases were run several times the case is the unit: repeats are averaged within a case
    first and the interval is over cases (never pooled over samples as if independent).

    Returns columns: the ``by`` columns, ``n`` (units), ``unit``, ``n_samples``, ``n_unscored``,
    ``value``, ``se``, ``ci_low``, ``ci_high``, ``method``, ``histogram`` (counts of unit values
    in ten bins over [0, 1]), ``bimodal`` and ``dip_p`` (Hartigan's dip test: a mean hides a
    split; look at the histogram when it is True).

    Small n: with fewer than 2 units there is no interval (NaN) and ``method`` says so.

    Example:
        >>> mean_score([0.2, 0.4, 0.9, 0.5])[["n", "value"]].to_dict("records")
        [{'n': 4, 'value': 0.5}]
    """
    frame = as_frame(data, score)

    def compute(group: pd.DataFrame) -> dict:
        ok = group[~group["_unscored"]]
        values, unit = unit_values(ok, score) if len(ok) else (np.array([]), "case")
        se, low, high = _t_interval(values, confidence)
        counts, _ = np.histogram(np.clip(values, 0, 1), bins=HISTOGRAM_BINS)
        bimodal = bimodality(values) if values.size else None
        return {
            "n": int(values.size),
            "unit": unit,
            "n_samples": len(ok),
            "n_unscored": int(group["_unscored"].sum()),
            "value": float(values.mean()) if values.size else np.nan,
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "method": "t interval over " + unit if values.size >= 2 else "n < 2: no interval",
            "histogram": counts.tolist(),
            "bimodal": bool(bimodal["bimodal"][0]) if bimodal is not None else False,
            "dip_p": float(bimodal["p_value"][0]) if bimodal is not None else np.nan,
        }

    return by_groups(frame, by, compute)


def pass_rate(
    data: pd.DataFrame | Sequence[bool] | np.ndarray,
    *,
    by: str | Iterable[str] | None = None,
    passed: str = "passed",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """passed / total with a Wilson interval, case-clustered when cases have repeats.

    Clustered: the Wilson interval is computed at the effective sample size N / deff, where the
    design effect deff = (clustered SE / iid SE)^2 from :func:`jevalkit.stats.standard_error`
    (floored at 1). With a single case the repeats are treated as independent draws of that case.

    Returns columns: the ``by`` columns, ``n`` (samples scored), ``n_cases``, ``passed``,
    ``n_unscored``, ``value``, ``ci_low``, ``ci_high``, ``design_effect``, ``method``.

    Example:
        >>> pass_rate([True, True, False, True])[["n", "passed", "value"]].to_dict("records")
        [{'n': 4, 'passed': 3, 'value': 0.75}]
    """
    frame = as_frame(data, passed)

    def compute(group: pd.DataFrame) -> dict:
        ok = group[~group["_unscored"]]
        x = ok[passed].astype(float).to_numpy()
        n, k = x.size, float(x.sum())
        cases = case_key(ok)
        n_cases = int(cases.nunique())
        deff, method = 1.0, "Wilson"
        if n_cases >= 2 and n_cases < n and 0 < k < n:
            iid = standard_error(x)
            clustered = standard_error(x, cases.to_numpy())
            deff = max(1.0, (clustered / iid) ** 2) if iid > 0 else 1.0
            method = "Wilson, case-clustered (design effect)"
        elif n_cases == 1 and n > 1:
            method = "Wilson over repeats of one case"
        n_eff = n / deff
        low, high = wilson_ci(k / deff, n_eff, confidence) if n else (np.nan, np.nan)
        return {
            "n": n,
            "n_cases": n_cases,
            "passed": int(k),
            "n_unscored": int(group["_unscored"].sum()),
            "value": k / n if n else np.nan,
            "ci_low": low,
            "ci_high": high,
            "design_effect": deff,
            "method": method if n else "n = 0: no interval",
        }

    return by_groups(frame, by, compute)


def mean_absolute_error(
    predicted: pd.DataFrame | Sequence[float] | np.ndarray,
    gold: Sequence[float] | np.ndarray | None = None,
    *,
    by: str | Iterable[str] | None = None,
    prediction: str = "expected_level",
    gold_column: str = "gold",
    confidence: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Mean |predicted - gold| with a BCa bootstrap interval over cases.

    Give two arrays, or a results DataFrame with ``prediction`` and ``gold_column`` columns (rows
    without gold are skipped). Repeats of a case are averaged first.

    Returns columns: the ``by`` columns, ``n``, ``value``, ``ci_low``, ``ci_high``, ``method``.

    Example:
        >>> mean_absolute_error([3.2, 1.0, 4.0], [3, 2, 4])[["n", "value"]].round(3).values.tolist()
        [[3.0, 0.4]]
    """
    if not isinstance(predicted, pd.DataFrame):
        if gold is None:
            raise ValueError("give gold values, or a DataFrame with a gold column")
        frame = as_frame(np.abs(np.asarray(predicted, float) - np.asarray(gold, float)), "_ae")
    else:
        frame = as_frame(predicted, prediction)
        frame = frame[frame[gold_column].notna() & frame[prediction].notna()]
        frame["_ae"] = (frame[prediction].astype(float) - frame[gold_column].astype(float)).abs()

    def compute(group: pd.DataFrame) -> dict:
        values, unit = unit_values(group[~group["_unscored"]], "_ae")
        if values.size == 0:
            return {
                "n": 0,
                "value": np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "method": "no gold",
            }
        ci = bootstrap_ci(values, confidence=confidence, seed=seed)
        return {"n": values.size, "value": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
                "method": f"BCa bootstrap over {unit}"}  # fmt: skip

    return by_groups(frame, by, compute)
