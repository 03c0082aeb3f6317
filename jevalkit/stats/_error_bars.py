"""Standard errors and paired differences for eval scores (Miller 2024, "Adding Error Bars to
Evals", arXiv 2411.00640)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps

from ..contract import CASE_COLUMNS, CaseSpec, estimator, prepare
from ..errors import StatsError
from ._validate import as_clean_array, as_labels


def _standard_error_adapter(frame: pd.DataFrame) -> float:
    return standard_error(frame["score"].astype(float), frame["case_id"])


@estimator(
    unit="value",
    estimand="the standard error of a mean, cluster-aware",
    interval="normal / t",
    checks=("order", "rename", "one_case"),
    adapter=_standard_error_adapter,
    calibration="pass_rate",
)
def standard_error(
    scores: ArrayLike, cluster: ArrayLike | None = None, *, small_sample_correction: bool = False
) -> float:
    """Standard error of the mean score: the CLT form, or clustered when questions share a cluster.

    Args:
        scores: one score per question (or per sample).
        cluster: a cluster label per score (the case for repeats, the passage for reading
            comprehension, ...). None: independent questions.
        small_sample_correction: multiply the clustered variance by C / (C - 1) (C clusters), the
            usual finite-cluster correction (statsmodels applies it by default).

    Notes:
        CLT: SE = sqrt(s^2 / n), s^2 the sample variance (ddof=1), as ``scipy.stats.sem``.
        Clustered (Miller 2024, Appendix A, eq. 4): SE^2 = SE_CLT^2 + (1/n^2) sum_c sum_i sum_{j!=i}
        (s_ic - m)(s_jc - m), computed here in the equivalent cluster-sum form
        (1/n^2) sum_c (sum_i (s_ic - m))^2, i.e. with the 1/n (not 1/(n-1)) variance inside.
        With one value per cluster it reduces to sqrt(sum (s - m)^2) / n.

    Small n: n < 2 (or C < 2 clusters) raises :class:`StatsError`.

    Example:
        >>> from scipy import stats
        >>> x = [0.0, 1.0, 1.0, 0.0, 1.0]
        >>> bool(round(standard_error(x), 6) == round(stats.sem(x), 6))
        True
        >>> round(standard_error([1, 1, 0, 0], cluster=["a", "a", "b", "b"]), 3)  # > CLT's 0.289
        0.354
    """
    x = as_clean_array(scores, "scores", min_n=2)
    if cluster is None:
        return float(np.sqrt(x.var(ddof=1) / x.size))
    codes = as_labels(cluster, x.size, "cluster")
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise StatsError("a clustered standard error needs at least 2 clusters; got 1")
    totals = np.bincount(codes, weights=x - x.mean())
    variance = np.sum(totals**2) / x.size**2
    if small_sample_correction:
        variance *= n_clusters / (n_clusters - 1)
    return float(np.sqrt(variance))


def _paired_arrays(
    a: ArrayLike | pd.Series | pd.DataFrame,
    b: ArrayLike | pd.Series | None,
    *,
    systems: tuple[str, str] | None,
    case: CaseSpec,
    system: str,
    score: str,
    repeat: str | None,
    scale: tuple[float, float] | None,
    pool: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The two score vectors, paired: by index for Series, by case for a long DataFrame (through
    the one input step: a system's two versions or settings refused unless pooled), by position
    for arrays."""
    if isinstance(a, pd.DataFrame):
        if systems is None or len(systems) != 2:
            raise StatsError("for a long DataFrame give systems=(a, b), the two systems compared")
        p = prepare(
            a,
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
        names = [str(name) for name in systems]
        wide = (
            pd.DataFrame({"case": p.case, "system": p.system, "value": p.values})
            .groupby(["case", "system"], sort=True)["value"]
            .mean()
            .unstack()
        )
        for name in names:
            if name not in wide.columns:
                raise StatsError(f"system {name!r} not found in column {system!r}")
        pairs = wide[names].dropna()
        return pairs.iloc[:, 0].to_numpy(float), pairs.iloc[:, 1].to_numpy(float)
    if isinstance(a, pd.Series) or isinstance(b, pd.Series):
        if not (isinstance(a, pd.Series) and isinstance(b, pd.Series)):
            raise StatsError("give two pandas Series (paired by their index) or two arrays")
        for name, s in (("a", a), ("b", b)):
            if s.index.has_duplicates:
                raise StatsError(f"{name} has duplicated index labels; one score per case")
        only_a, only_b = a.index.difference(b.index), b.index.difference(a.index)
        if len(only_a) or len(only_b):
            raise StatsError(
                f"a and b index different cases ({len(only_a)} only in a, {len(only_b)} only "
                "in b); keep the cases both scored, e.g. a.loc[a.index.intersection(b.index)]"
            )
        return a.to_numpy(float), b.reindex(a.index).to_numpy(float)
    if b is None:
        raise StatsError("give b, the second system's scores")
    return np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()


def _paired_difference_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return paired_difference(
        frame, systems=tuple(sorted(frame["system"].unique())[1::-1]), case="case_id"
    )


@estimator(
    unit="pair",
    estimand="a paired mean difference",
    interval="t over pairs",
    checks=("order", "rename", "keys", "duplicates", "one_case", "no_spread", "method", "settings"),
    adapter=_paired_difference_adapter,
    calibration="compare",
)
def paired_difference(
    a: ArrayLike | pd.Series | pd.DataFrame,
    b: ArrayLike | pd.Series | None = None,
    cluster: ArrayLike | None = None,
    *,
    systems: tuple[str, str] | None = None,
    case: CaseSpec = CASE_COLUMNS,
    system: str = "system",
    score: str = "score",
    repeat: str | None = "repeat",
    confidence: float = 0.95,
    small_sample_correction: bool = False,
    scale: tuple[float, float] | None = None,
    pool: bool = False,
) -> pd.DataFrame:
    """Mean difference of two systems scored on the same questions, with its paired SE.

    Pairing removes the between-question variance both systems share (Miller 2024, section 4):
    SE is the (clustered) standard error of d = a - b. The interval and two-sided p-value use the
    normal distribution, as in the paper (large-n evals); for small n prefer a t-test.

    Args:
        a, b: two arrays (paired by position), two pandas Series (paired by index: a reordered
            Series gives the same answer; differing or duplicated indexes are an error), or a
            long DataFrame as ``a`` with ``systems=(name_a, name_b)`` and its columns ``case=``,
            ``system=``, ``score=``, ``repeat=`` (results' names by default; read by the one
            input step: rows with an error or no score are left out, duplicated rows, case
            keys of two types and a system's two probe versions or generation settings refused
            (``pool=True`` pools those); scores outside [0, 1] refused unless ``scale=(low,
            high)`` normalises them; repeats are averaged within a case; cases only one system
            ran are left out).
        cluster: a cluster label per pair (arrays only).

    Returns:
        One row: ``n``, ``mean_a``, ``mean_b``, ``value`` (mean of a - b), ``se``, ``ci_low``,
        ``ci_high``, ``z``, ``p_value``, ``corr`` (correlation of a and b: the gain from pairing),
        ``method``.

    Example:
        >>> r = paired_difference([0.9, 0.8, 0.7, 0.6], [0.8, 0.8, 0.5, 0.5])
        >>> round(float(r["value"][0]), 3), round(float(r["se"][0]), 4)
        (0.1, 0.0408)
        >>> x = pd.Series([0.9, 0.8], index=["q1", "q2"])
        >>> y = pd.Series([0.8, 0.9], index=["q2", "q1"])
        >>> float(paired_difference(x, y)["value"][0])
        0.0
    """
    left, right = _paired_arrays(
        a,
        b,
        systems=systems,
        case=case,
        system=system,
        score=score,
        repeat=repeat,
        scale=scale,
        pool=pool,
    )
    x = as_clean_array(left, "a", min_n=2)
    y = as_clean_array(right, "b", min_n=2)
    if x.size != y.size:
        raise StatsError(f"a and b must score the same questions: got {x.size} and {y.size} values")
    d = x - y
    se = standard_error(d, cluster, small_sample_correction=small_sample_correction)
    z_crit = sps.norm.ppf(0.5 + confidence / 2)
    mean = float(d.mean())
    z = mean / se if se > 0 else (0.0 if mean == 0 else np.inf * np.sign(mean))
    p = float(2 * sps.norm.sf(abs(z)))
    corr = float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else np.nan
    how = "normal interval, paired " + ("clustered SE" if cluster is not None else "SE")
    half = z_crit * se
    if se == 0:  # every pair differs alike: no spread is not a certainty
        half, how = np.nan, "no interval: every pair differs by the same amount (no spread)"
    return pd.DataFrame(
        [
            {
                "n": x.size,
                "mean_a": float(x.mean()),
                "mean_b": float(y.mean()),
                "value": mean,
                "se": se,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "z": float(z),
                "p_value": p,
                "corr": corr,
                "method": how,
            }
        ]
    )
