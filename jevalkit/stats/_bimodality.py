"""Is a score distribution split in two? A test that fits the data's scale.

Graded data (levels 1..10, 0..4, pass counts over k repeats) are discrete, with ties everywhere.
Hartigan's dip test assumes a continuous distribution: on tied data it rejects unimodality for
clearly one-peaked samples (a 1-10 grade sample piled on the top grades gave p = 0.0000; in
simulation one-peaked 3-, 5- and 10-level samples were flagged every time). So:

- **discrete** (a level set, given or found): a likelihood-ratio test of "the level
  probabilities are unimodal" against "they are unrestricted", with a parametric-bootstrap null
  drawn from the best-fitting unimodal distribution;
- **continuous** (many distinct values, no ties): Hartigan's dip test (``diptest`` package).

``method`` names which one ran. Sarle's bimodality coefficient is reported beside either.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..contract import estimator
from ..errors import StatsError
from ._validate import as_clean_array

MAX_DISCRETE_LEVELS = 20
BIMODALITY_COLUMNS = ["n", "levels", "statistic", "p_value", "sarle_b", "bimodal", "method"]


def _increasing_fits(props: np.ndarray) -> np.ndarray:
    """For every prefix end m, the increasing isotonic regression of ``props[..., :m+1]``
    (equal weights), by the max-min formula; shape (..., K, K): [..., m, i] for i <= m."""
    k = props.shape[-1]
    csum = np.concatenate([np.zeros((*props.shape[:-1], 1)), np.cumsum(props, -1)], -1)
    j = np.arange(k)[:, None]
    e = np.arange(k)[None, :]
    width = np.where(e >= j, e - j + 1, 1)
    means = (csum[..., None, 1:] - csum[..., :k, None]) / width  # [..., j, e] = mean(j..e)
    means = np.where(e >= j, means, np.inf)
    # tail[..., j, i] = min over e in [i, m] of mean(j..e), updated as the prefix end m grows:
    # each step only brings in the column e = m
    tail = np.full(means.shape, np.inf)
    below = j <= e  # [j, i]: start j at or before level i
    fits = np.full((*props.shape[:-1], k, k), np.nan)
    for m in range(k):
        tail[..., : m + 1] = np.minimum(tail[..., : m + 1], means[..., :, m : m + 1])
        tail[..., m] = means[..., :, m]
        fits[..., m, : m + 1] = np.where(below[:, : m + 1], tail[..., : m + 1], -np.inf).max(-2)
    return fits


def unimodal_fit(counts: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood unimodal level probabilities for level counts (last axis = levels),
    and the log-likelihood ratio statistic G = 2 sum n_i log(p_hat_i / p_unimodal_i).

    The unimodal fit with the peak between levels m and m + 1 is the increasing isotonic
    regression of the proportions up to m and the decreasing one after it (the multinomial MLE
    under an order restriction is the isotonic regression of the sample proportions; Robertson,
    Wright and Dykstra 1988, ch. 5); the best split wins.

    Example:
        >>> p, g = unimodal_fit([5, 1, 5])
        >>> [round(float(x), 3) for x in p], round(float(g), 3)
        ([0.455, 0.273, 0.273], 2.911)
    """
    n = np.asarray(counts, dtype=float)
    total = n.sum(axis=-1, keepdims=True)
    props = n / total
    k = n.shape[-1]
    up = _increasing_fits(props)  # [..., m, i]: increasing fit of levels 0..m
    down = _increasing_fits(props[..., ::-1])  # [..., m', i']: levels K-1-i' of the last m'+1
    # every split at once: fits[..., m, i] is the increasing fit of levels 0..m for i <= m, and
    # for i > m the decreasing fit of levels m+1..K-1 (the increasing fit of their reverse,
    # reversed: down[..., K-2-m, K-1-i], which is the reversed array's [..., m+1, i])
    after = np.concatenate([down[..., ::-1, ::-1], np.full_like(down[..., :1, :], np.nan)], -2)
    level, split = np.arange(k)[None, :], np.arange(k)[:, None]
    fits = np.where(level <= split, up, after[..., 1:, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        counted = (n > 0)[..., None, :]
        ll = np.sum(
            np.where(counted, n[..., None, :] * np.log(np.where(fits > 0, fits, 1e-300)), 0.0),
            axis=-1,
        )
        ll_free = np.sum(np.where(n > 0, n * np.log(np.where(props > 0, props, 1.0)), 0.0), axis=-1)
    best_split = np.argmax(ll, axis=-1)  # the first of equally good splits, as before
    best = np.take_along_axis(fits, best_split[..., None, None], axis=-2)[..., 0, :]
    best_ll = np.take_along_axis(ll, best_split[..., None], axis=-1)[..., 0]
    g = np.maximum(0.0, 2.0 * (ll_free - best_ll))
    return best, g


def _sarle(x: np.ndarray) -> float:
    """Sarle's coefficient from the bias-corrected sample skewness G1 and excess kurtosis G2,
    the formulas of ``scipy.stats.skew`` / ``kurtosis`` with ``bias=False`` written out (the
    scipy calls cost a millisecond each, per group; the tests pin this against them).

    Example:
        >>> import numpy as np
        >>> from scipy import stats as sps
        >>> x = np.random.default_rng(0).gamma(2.0, size=50)
        >>> g, k = sps.skew(x, bias=False), sps.kurtosis(x, bias=False)
        >>> bool(np.isclose(_sarle(x), (g**2 + 1) / (k + 3 * 49**2 / (48 * 47))))
        True
    """
    n = x.size
    if n < 4 or np.ptp(x) == 0:
        return np.nan
    d = x - x.mean()
    d2 = d * d
    m2, m3, m4 = d2.mean(), (d2 * d).mean(), (d2 * d2).mean()
    g = m3 / m2**1.5 * np.sqrt(n * (n - 1)) / (n - 2)
    k = ((n + 1) * (m4 / m2**2 - 3) + 6) * (n - 1) / ((n - 2) * (n - 3))
    return float((g**2 + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


def least_favourable_null(fit: ArrayLike) -> np.ndarray:
    """The null the discrete test resamples from: the unimodal fit with its peak kept and each
    side of the peak made flat (its mass spread evenly over its levels).

    Flat stretches are where unimodality is hardest to tell from chance (every order constraint
    there is active), so a null that is flat beside the peak is the least favourable one for the
    fitted peak. Resampling from the fit itself, which follows the noise in a truly flat
    stretch, under-estimated the null and flagged one-peaked samples up to 13% of the time at
    alpha = 0.05 (a flat tail beside a tall top level); flattening the sides brought every
    configuration in benchmarks/bench_bimodality.py to about 5%.

    Example:
        >>> least_favourable_null([0.1, 0.2, 0.7]).round(2).tolist()
        [0.15, 0.15, 0.7]
    """
    q = np.asarray(fit, dtype=float).copy()
    top = q.max()
    peak = np.flatnonzero(np.abs(q - top) <= 1e-8 + 1e-5 * abs(top))  # np.isclose's rule, inline
    for side in (slice(0, peak[0]), slice(peak[-1] + 1, q.size)):
        if side.stop > side.start:
            q[side] = q[side].mean()
    return q / q.sum()


STOP_AFTER = 10  # null statistics at or above G before a p-value is settled (Besag-Clifford)


def discrete_bimodality_many(
    counts: ArrayLike, *, n_resamples: int = 2000, seed: int | None = 0
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`discrete_bimodality` for many count vectors at once (rows of ``counts``, one level
    count per column): their G statistics and p-values.

    Each row draws from its own generator seeded with ``seed``, so a row's p-value does not
    depend on the other rows; the null statistics of every row still waiting for its answer are
    computed together, in one vectorised fit per round. The bootstrap is sequential (Besag &
    Clifford 1991): a row stops as soon as ``STOP_AFTER`` null statistics reach its G, with
    p = STOP_AFTER / (resamples drawn), which is a valid p-value; a row that never gets there
    draws all ``n_resamples`` and has p = (1 + hits) / (n_resamples + 1). Clearly unimodal
    samples settle after a few dozen draws, so testing every group of a large frame is cheap.

    References:
        Besag, J. & Clifford, P. (1991). Sequential Monte Carlo p-values. Biometrika 78, 301-304.

    Example:
        >>> g, p = discrete_bimodality_many([[40, 2, 3, 2, 40], [3, 9, 30, 9, 3]])
        >>> [round(float(v), 1) for v in g], [bool(v < 0.01) for v in p]
        ([75.6, 0.0], [True, False])
    """
    n = np.asarray(counts, dtype=float)
    if n.ndim != 2 or n.shape[1] < 3 or (n < 0).any():
        raise StatsError("counts must be one non-negative count per level, at least 3 levels")
    fit, g = unimodal_fit(n)
    p = np.ones(len(n))
    active = [int(i) for i in np.flatnonzero(g > 1e-9)]
    totals = n.sum(axis=1).astype(np.int64)
    nulls = {i: least_favourable_null(fit[i]) for i in active}
    rngs = {i: np.random.default_rng(seed) for i in active}
    drawn = dict.fromkeys(active, 0)
    hits = dict.fromkeys(active, 0)
    batch = 2 * STOP_AFTER - 4  # a near-unimodal sample settles within its first draws
    while active:
        sizes = [min(batch, n_resamples - drawn[i]) for i in active]
        draws = [
            rngs[i].multinomial(totals[i], nulls[i], size=b)
            for i, b in zip(active, sizes, strict=True)
        ]
        _, g_null = unimodal_fit(np.concatenate(draws).astype(float))
        waiting, start = [], 0
        for i, b in zip(active, sizes, strict=True):
            reached = np.cumsum(g_null[start : start + b] >= g[i] - 1e-9) + hits[i]
            start += b
            if reached.size and reached[-1] >= STOP_AFTER:
                p[i] = STOP_AFTER / (drawn[i] + int(np.argmax(reached >= STOP_AFTER)) + 1)
                continue
            hits[i] = int(reached[-1]) if reached.size else hits[i]
            drawn[i] += b
            if drawn[i] >= n_resamples:
                p[i] = (1 + hits[i]) / (n_resamples + 1)
            else:
                waiting.append(i)
        active, batch = waiting, batch * 2
    return g, p


def discrete_bimodality(
    counts: ArrayLike, *, n_resamples: int = 2000, seed: int | None = 0
) -> tuple[float, float]:
    """The unimodality likelihood-ratio statistic of level counts and its parametric-bootstrap
    p-value: resamples of the same size are drawn from :func:`least_favourable_null`, stopping
    early once the answer is settled (:func:`discrete_bimodality_many`).

    Example:
        >>> g, p = discrete_bimodality([40, 2, 3, 2, 40])
        >>> round(g, 1), p < 0.01
        (75.6, True)
        >>> discrete_bimodality([3, 9, 3, 3, 2, 7, 17, 21, 68, 164])[1] > 0.05
        True
    """
    n = np.asarray(counts, dtype=float)
    if n.ndim != 1:
        raise StatsError("counts must be one non-negative count per level, at least 3 levels")
    g, p = discrete_bimodality_many(n[None, :], n_resamples=n_resamples, seed=seed)
    return float(g[0]), float(p[0])


def _bimodality_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return bimodality(frame["score"].astype(float), n_resamples=199)


@estimator(
    unit="value",
    estimand="is a distribution split in two",
    interval="a test: sequential parametric bootstrap / dip",
    checks=("order", "rename", "one_case", "method"),
    adapter=_bimodality_adapter,
    calibration="bimodality",
)
def bimodality(
    scores: ArrayLike,
    *,
    levels: ArrayLike | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Test ``scores`` for more than one mode, with a test that fits their scale.

    Args:
        scores: the values (NaN is an error: drop it first).
        levels: the possible levels of graded data (``range(1, 11)`` for 1-10 grades), so a
            level nobody used still counts as a dip between two peaks. Without it, data with at
            most 20 distinct values and ties are treated as graded on their distinct values;
            other data as continuous.
        alpha: the test's level; ``bimodal`` is ``p_value < alpha``.
        n_resamples: bootstrap resamples of the discrete test.
        seed: of the discrete test's bootstrap (fixed by default: the same data, the same p).

    Returns:
        One row: ``n``, ``levels`` (number of levels; NaN for continuous data), ``statistic``
        (G, or the dip), ``p_value``, ``sarle_b``, ``bimodal``, ``method``.

    Notes:
        Discrete test: H0 is that the level probabilities p_1..p_K are unimodal (non-decreasing
        up to a peak, non-increasing after). The statistic is the likelihood ratio
        G = 2 sum_i n_i log(p_hat_i / p_tilde_i), with p_hat the observed proportions and p_tilde
        the maximum-likelihood unimodal fit (isotonic regressions either side of the best peak;
        Robertson, Wright & Dykstra 1988). Its null distribution depends on where the null
        boundary lies, so it is simulated: a parametric bootstrap from p_tilde with each side of its
        peak made flat (:func:`least_favourable_null`: flat stretches are the least favourable
        configuration of order-restricted likelihood-ratio tests, Robertson, Wright & Dykstra 1988,
        ch. 2; resampling from the fit itself was anti-conservative). Data that are already
        unimodal (G = 0) get p = 1. The bootstrap is sequential (Besag & Clifford 1991): it
        stops once 10 null statistics reach G (p = 10 / draws), so clear answers are cheap.
        Values equal to 12 decimals are one level (means of rescaled grades differ in the last
        bit). Data with more than 20 distinct values but heavy ties (fewer distinct values
        than half the sample) are not tested: the dip test assumes continuous data, and
        ``method`` asks for ``levels``.
        Calibration is checked by ``benchmarks/bench_bimodality.py``: the false-positive rate on
        unimodal 3-, 5-, 7- and 10-level samples (symmetric, skewed, piled on the top level, n from
        30 to 2,000) and the power on two-peaked samples.

        Continuous data: Hartigan & Hartigan (1985) dip test, p-value from the ``diptest``
        package's tables. Sarle's coefficient b = (g^2 + 1) / (k + 3 (n-1)^2 / ((n-2)(n-3))),
        b > 5/9 suggesting bimodality, is descriptive only.

        With fewer than 4 values, or a single distinct value, nothing is tested: ``bimodal`` is
        False and ``method`` says why.

    References:
        Hartigan, J. A. & Hartigan, P. M. (1985). The dip test of unimodality. Ann. Statist. 13.
        Robertson, T., Wright, F. T. & Dykstra, R. L. (1988). Order Restricted Statistical
        Inference. Wiley.
        Silverman, B. W. (1981). Using kernel density estimates to investigate multimodality.
        JRSS B 43.

    Example:
        >>> split = [0.0] * 50 + [1.0] * 50 + [0.5] * 5
        >>> row = bimodality(split).iloc[0]
        >>> bool(row["bimodal"]), row["method"]
        (True, 'discrete unimodality likelihood-ratio test, parametric bootstrap (3 levels)')
        >>> piled = [1] * 3 + [2] * 9 + [3] * 3 + [4] * 3 + [5] * 2 + [6] * 7 + [7] * 17 + [8] * 21 + [9] * 68 + [10] * 164
        >>> bool(bimodality(piled, levels=range(1, 11))["bimodal"][0])
        False
        >>> import numpy as np
        >>> bool(bimodality(np.random.default_rng(0).normal(size=200))["bimodal"][0])
        False
    """
    return bimodality_groups(
        [scores], levels=[levels], alpha=alpha, n_resamples=n_resamples, seed=seed
    )


def _plan(x: np.ndarray, levels: ArrayLike | None) -> tuple[dict, np.ndarray | None]:
    """One sample's row before testing, and its level counts when the discrete test applies
    (None: continuous, or not tested with the reason in the row's method)."""
    row = {
        "n": int(x.size),
        "levels": np.nan,
        "statistic": np.nan,
        "p_value": np.nan,
        "sarle_b": _sarle(x),
        "bimodal": False,
        "method": "Hartigan's dip test (continuous)",
    }
    # equal values that differ in the last bit (means of rescaled grades) are one level
    x = np.round(x, 12)
    distinct = np.unique(x)
    if levels is not None:
        grid = np.unique(np.round(as_clean_array(levels, "levels", min_n=2), 12))
        outside = np.setdiff1d(distinct, grid)
        if outside.size:
            raise StatsError(f"scores hold values that are not levels: {outside[:5].tolist()}")
        discrete = True
    else:
        grid = distinct
        discrete = distinct.size <= MAX_DISCRETE_LEVELS and distinct.size < x.size
    if x.size < 4 or distinct.size < 2:
        row["method"] = "not tested: fewer than 4 values or a single value"
        return row, None
    if discrete and grid.size < 3:
        row.update(levels=int(grid.size), method="not tested: two levels cannot have two modes")
        return row, None
    if not discrete and distinct.size < x.size / 2:
        row["method"] = (
            f"not tested: {x.size} values on {distinct.size} tied levels; the dip test needs "
            "continuous data and the levels are too many to treat as grades (pass levels=)"
        )
        return row, None
    if discrete:
        row.update(
            levels=int(grid.size),
            method="discrete unimodality likelihood-ratio test, parametric bootstrap "
            f"({grid.size} levels)",
        )
        return row, np.bincount(np.searchsorted(grid, x), minlength=grid.size).astype(float)
    return row, None


def _bimodality_groups_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return bimodality_groups(
        [g["score"].astype(float) for _, g in frame.groupby("system", sort=True)],
        n_resamples=199,
    )


@estimator(
    unit="value",
    estimand="bimodality of several samples",
    interval="as bimodality",
    checks=("order", "rename", "one_case", "method"),
    adapter=_bimodality_groups_adapter,
    calibration="bimodality",
)
def bimodality_groups(
    samples: Sequence[ArrayLike],
    *,
    levels: Sequence[ArrayLike | None] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """:func:`bimodality` for several samples in one call (one row each, in order): the
    discrete tests of samples with the same number of levels share vectorised bootstrap rounds
    (:func:`discrete_bimodality_many`), and each sample gets exactly the p-value
    :func:`bimodality` gives it alone.

    Args:
        samples: the samples (each as in :func:`bimodality`).
        levels: one level set (or None) per sample; None: none for any.

    Example:
        >>> out = bimodality_groups([[0.0] * 50 + [1.0] * 50 + [0.5] * 5, [1, 2, 2, 3, 3, 3, 4]])
        >>> out["bimodal"].tolist()
        [True, False]
    """
    levels = [None] * len(samples) if levels is None else list(levels)
    if len(levels) != len(samples):
        raise StatsError(f"{len(levels)} level sets for {len(samples)} samples; give one each")
    rows: list[dict] = []
    counts: dict[int, list[tuple[int, np.ndarray]]] = {}  # samples by their number of levels
    for i, (sample, grid) in enumerate(zip(samples, levels, strict=True)):
        x = as_clean_array(sample, "scores", min_n=0)
        row, count = _plan(x, grid)
        rows.append(row)
        if count is not None:
            counts.setdefault(count.size, []).append((i, count))
        elif row["method"].startswith("Hartigan"):
            import diptest

            dip, p = diptest.diptest(x)
            row.update(statistic=float(dip), p_value=float(p))
    for batch in counts.values():
        g, p = discrete_bimodality_many(
            np.stack([c for _, c in batch]), n_resamples=n_resamples, seed=seed
        )
        for (i, _), gi, pi in zip(batch, g, p, strict=True):
            rows[i].update(statistic=float(gi), p_value=float(pi))
    for row in rows:
        row["bimodal"] = bool(row["p_value"] < alpha)  # NaN (not tested) is never bimodal
    return pd.DataFrame(rows, columns=BIMODALITY_COLUMNS)
