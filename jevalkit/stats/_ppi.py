"""Estimators that correct a cheap predictor's mean with a few true labels: prediction-powered
inference (PPI, and the power-tuned PPI++) and the Rogan-Gladen prevalence correction.

These are the pure estimators on arrays: ``y`` the true values of the labelled items, ``yhat``
the predictor's values on the same items, ``yhat_unlabelled`` its values on the rest, optional
inverse-probability ``weights`` of the labelled items. Which items were labelled and how their
values are scored is :mod:`jevalkit.labels`' business.

References: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), Science 382 (PPI);
Angelopoulos, Duchi & Zrnic (2023), arXiv:2311.01453 (PPI++); Rogan & Gladen (1978),
Am. J. Epidemiol. 107; Greiner & Gardner (2000), Prev. Vet. Med. 45 (its delta-method variance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..contract import Result, estimator
from ..errors import StatsError


@dataclass(frozen=True)
class PpiEstimate(Result):
    """A prediction-powered mean: unpacks as ``(estimate, ci_low, ci_high, judged_variance,
    rectifier_variance)``; also ``lam``, ``n_labelled``, ``n_unlabelled``, ``df`` and ``method``.

    Example:
        >>> y, yhat = np.array([1.0, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 0.0])
        >>> r = ppi_interval(y, yhat, np.array([1.0, 0.0, 1.0] * 20), 1.0)
        >>> r.table()[["n", "n_unlabelled"]].to_dict("records")
        [{'n': 4, 'n_unlabelled': 60}]
    """

    estimate: float
    ci_low: float
    ci_high: float
    judged_variance: float
    rectifier_variance: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    df: float
    method: str
    _unpack = ("estimate", "ci_low", "ci_high", "judged_variance", "rectifier_variance")

    @property
    def labels_variance(self) -> float:
        """The variance of the labels-only (classical) mean, at ``lam`` 0."""
        return self.rectifier_variance

    def table(self) -> pd.DataFrame:
        """One row: ``n`` (labels), ``n_unlabelled``, ``value``, ``se``, ``ci_low``, ``ci_high``,
        ``lam``, ``df``, ``method``."""
        se = math.sqrt(self.judged_variance + self.rectifier_variance)
        return pd.DataFrame(
            [
                {
                    "n": self.n_labelled,
                    "n_unlabelled": self.n_unlabelled,
                    "value": self.estimate,
                    "se": se,
                    "ci_low": self.ci_low,
                    "ci_high": self.ci_high,
                    "lam": self.lam,
                    "df": self.df,
                    "method": self.method,
                }
            ]
        )


def _ppi_arrays(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The contract test's adapter: the cases sorted first a quarter are labelled (gold), the
    verdict ``passed`` is the prediction."""
    cases = np.sort(frame["case_id"].astype(str).unique())
    labelled = frame["case_id"].astype(str).isin(cases[: max(1, cases.size // 4)]).to_numpy()
    yhat = frame["passed"].astype(float).to_numpy()
    return frame["gold"].astype(float).to_numpy()[labelled], yhat[labelled], yhat[~labelled]


def _ppi_interval_adapter(frame: pd.DataFrame) -> PpiEstimate:
    return ppi_interval(*_ppi_arrays(frame), 1.0)


@estimator(
    unit="label",
    estimand="a prediction-powered mean (Hajek form when weighted)",
    interval="t with a small-sample floor",
    checks=("order", "rename", "scale", "no_spread", "method"),
    adapter=_ppi_interval_adapter,
    calibration="corrected_mean",
)
def ppi_interval(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    lam: float | None,
    *,
    weights: np.ndarray | None = None,
    confidence: float = 0.95,
) -> PpiEstimate:
    """The prediction-powered mean (``lam`` 1: PPI; 0: the labels alone; between: PPI++; None:
    PPI++ with the variance-minimising lambda, reported in ``lam``) and its interval, with a
    small-sample floor on the rectifier's variance.

    The point estimate is ppi-python's. The interval is its normal interval with two changes for
    small label sets, found necessary by simulation (``benchmarks/bench_ppi.py``: with 100
    labels and a biased judge, the plain interval covered 95.3% for PPI and 94.2% for PPI++,
    at or below the nominal 95%): the rectifier's variance is estimated with one extra
    pseudo-item split between the ends of its range (+1 and -1), in the spirit of Agresti &
    Caffo (2000) for proportions, so it cannot collapse when labels and judge disagree on only a
    few items; and the quantile is Student's t with n - 1 degrees of freedom.

    Unequal ``weights`` (labels drawn with unequal probabilities, 1 / probability each) use the
    Hajek form: lam x the judge's mean over all N judged items (labelled and not) + the weighted
    mean r_w of the rectifier r = y - lam yhat over the n labelled items. ppi-python's weighted
    point estimate takes the judge's mean over the unlabelled items only, which a non-uniform
    plan leaves unrepresentative (in simulation: bias z = -29, coverage 65% with a stratified
    plan). The estimand is the mean of y over the population the judged items were drawn from
    (the superpopulation, as PPI's), and the variance is that of a two-phase sample:

    - ``judged_variance``, lam^2 Var(yhat) / N over all judged items: the judged items are
      themselves a sample of the population;
    - ``rectifier_variance``, the design-based linearised variance of the Hajek mean under
      Poisson sampling of the labels from the judged items, in its with-replacement form
      sum w~_i^2 (r_i - r_w)^2 / (n (n + 1)), w~ the weights scaled to mean 1 (the form for the
      superpopulation: the finite-population correction's -Var(r) / N and the judged items'
      own sampling variance of r, +Var(r) / N, cancel). With equal weights this is the
      unweighted formula above. The covariance of the judged mean with the rectifier,
      2 lam Cov(yhat, r) / N, is left out: zero for a calibrated judge at lam 1, negative
      (so leaving it out errs wide) when the judge's errors run against its scores;
    - the same small-sample floor, its pseudo-item weighing as much as a typical label, the
      mean of w~^2 (so the floor is the unweighted one at Kish's effective number of labels,
      n_eff = n / mean(w~^2)), and the t quantile on n_eff - 1 degrees of freedom.

    The Hajek mean is a ratio, sum w r / sum w, and as in Fieller's (1954) interval for a ratio
    the labels' squared deviations are taken from each candidate value m of the rectifier's
    mean rather than from r_w: they grow by 2 (r_w - m) L + (r_w - m)^2 sum w~^2, where
    L = sum w~_i^2 (r_i - r_w) says how far the heavy labels' residuals lie from the weighted
    mean (0 with equal weights). The quadratic part is the one the t quantile already allows
    for with equal weights, so the interval keeps the linear part: it holds lam x the judge's
    mean + m for the m whose distance e = r_w - m satisfies
    e^2 <= t^2 (judged_variance + rectifier_variance + 2 e L / (n (n + 1))), that is
    estimate - s +/- sqrt(s^2 + t^2 (judged_variance + rectifier_variance)) with
    s = t^2 L / (n (n + 1)): the t interval when L is 0, shifted (and a little wider) when a few
    heavy labels pull the estimate and its variance estimate together. A judge wrong where it
    is surest, labelled by the uncertain plan, covered about 93.5% without the shift and 95.5%
    with it, at the same mean half-width (5,500 draws).

    The floor's weight matters. Weighing the pseudo-item as much as the heaviest label (the rule
    before) made active plans' intervals (``label_sample(strategy="active")``, where a few
    near-certain items carry weights 5-10 times the mean) 1.7 times as wide as their error
    needs: 100% coverage, and wider than random labels' although their error was lower. A
    pseudo-item of weight 1 (w~ = 1, the mean weight) is too light where the estimate rests on a
    few heavy labels: a stratified plan of 10 labels of 300 items, ~6 judged passes, covered 83%
    with it and n - 1 degrees of freedom, 86% with Kish's, and 97-99% with the typical label's
    weight. ``benchmarks/bench_ppi.py --only weighted`` measures every plan and judge against
    random labels on the same draws (1,000 per row): with a calibrated judge the active plan
    covers 97.2% [Monte Carlo 96.0, 98.1] (random labels 96.8%), at 0.92 times random labels'
    half-width for 0.89 times their error (with the heaviest label's weight: 100%, 1.59 times);
    the tiny stratum of 16 labels, where 5.8% of draws see no disagreement among the heavy
    labels, covers 94.0% [92.4, 95.3] (94.5% before), of 10 labels 98.0% (99.2%). Against the
    mean of the N judged items themselves (a finite population) the interval is conservative:
    it keeps the judged term.

    Returns:
        :class:`PpiEstimate`, which unpacks as ``(estimate, ci_low, ci_high, judged_variance,
        rectifier_variance)``, the last two the variance terms of the estimate (the judged
        items' and the labelled items').

    Raises:
        StatsError: no labels, no unlabelled items, or values outside [-1, 1] (the
            small-sample floor assumes normalised scores or their paired differences).

    Example:
        >>> y, yhat = np.array([1.0, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 0.0])
        >>> r = ppi_interval(y, yhat, np.array([1.0, 0.0, 1.0] * 20), 1.0)
        >>> round(r.estimate, 4), bool(r.ci_low < r.estimate < r.ci_high)
        (0.6667, True)
    """
    import ppi_py

    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    yhat_unlabelled = np.asarray(yhat_unlabelled, dtype=float)
    weights = None if weights is None else np.asarray(weights, dtype=float)
    n, big_n = y.size, yhat_unlabelled.size
    if n == 0 or big_n == 0 or yhat.size != n:
        raise StatsError(
            f"PPI needs labels with a prediction each and unlabelled predictions; got {n} labels, "
            f"{yhat.size} predictions of them and {big_n} unlabelled"
        )
    for name, values in (("labels", y), ("predictions", yhat), ("predictions", yhat_unlabelled)):
        if values.size and (np.nanmin(values) < -1 or np.nanmax(values) > 1):
            raise StatsError(
                f"PPI {name} range from {np.nanmin(values):g} to {np.nanmax(values):g}, outside "
                "[-1, 1]: give normalised scores in [0, 1] (or their paired differences)"
            )
    if lam is None:
        lam = _tuned_lambda(y, yhat, yhat_unlabelled, weights)
    df: float
    floor_weight, df, lean = 1.0, n - 1, 0.0
    if weights is not None and not np.allclose(weights, weights[0]):
        # Hajek form: the judge's mean over every judged item (the labelled ones are a
        # probability sample of them, so the unlabelled rest is not representative) plus the
        # weighted mean of the rectifier, whose variance is centred at that weighted mean
        w = weights / weights.sum() * n  # mean 1
        judged = np.concatenate([yhat, yhat_unlabelled])
        rectifier = y - lam * yhat
        centre = float(np.average(rectifier, weights=w))
        estimate = float(lam * judged.mean() + centre)
        deviations = w * (rectifier - centre)
        judged_var = float(np.var(lam * judged, ddof=1)) / judged.size
        # the pseudo-item weighs as much as a typical label (its mean squared weight: the
        # unweighted floor at Kish's effective number of labels), and the t quantile has that
        # effective number - 1 degrees of freedom
        floor_weight = float(np.mean(w**2))
        df = max(n**2 / float(np.sum(w**2)) - 1, 1.0)
        # how far the heavy labels' residuals lie from the weighted mean (zero when the
        # weights are equal): the squared deviations from a candidate value m grow by
        # 2 (centre - m) lean, which shifts the interval (Fieller)
        lean = float(np.sum(w**2 * (rectifier - centre)))
    else:
        estimate = float(
            np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabelled, lam=lam))
        )
        values = y - lam * yhat
        centre = float(values.mean())
        deviations = values - centre
        judged_var = float(np.var(lam * yhat_unlabelled, ddof=1)) / big_n if big_n > 1 else 0.0
    floor = 0.5 * ((1 - centre) ** 2 + (-1 - centre) ** 2)
    spread = np.sum(deviations**2) + floor_weight * floor
    rectifier_var = spread / n / (n + 1)
    q = stats.t.ppf(0.5 + confidence / 2, df)
    # the values theta whose distance e from the estimate satisfies
    # e^2 <= q^2 (variance + 2 e lean / (n (n + 1))): the t interval when lean is 0
    shift = q**2 * lean / (n * (n + 1))
    half = math.sqrt(shift**2 + q**2 * (judged_var + rectifier_var))
    weighted = weights is not None and not np.allclose(weights, weights[0])
    method = (
        f"{'PPI' if lam == 1 else ('labels only' if lam == 0 else 'PPI++')} mean"
        + (" (Hajek form, weighted labels)" if weighted else "")
        + f": t interval on {df:g} df with a small-sample floor over {n} labels"
        + (", the labels' deviations taken from each candidate value (Fieller)" if weighted else "")
    )
    return PpiEstimate(
        estimate,
        estimate - shift - half,
        estimate - shift + half,
        judged_var,
        rectifier_var,
        float(lam),
        int(n),
        int(big_n),
        float(df),
        method,
    )


def _tuned_lambda(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    weights: np.ndarray | None = None,
) -> float:
    """PPI++'s variance-minimising lambda for a mean, clipped to [0, 1]: the formula
    ``ppi_py.ppi_mean_ci`` applies with ``lam=None`` (Angelopoulos, Duchi & Zrnic 2023, eq. 6),
    computed here so a result can report it (``ppi_interval(..., lam=None).lam``).

    Example:
        >>> y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
        >>> round(_tuned_lambda(y, y, np.array([1.0, 0.0] * 50)), 3)  # a perfect predictor: near 1
        0.906
        >>> _tuned_lambda(y, np.array([0.5, 0.5, 0.5, 0.5, 0.5]), np.array([0.5] * 100))  # a constant
        0.0
    """
    n, big_n = y.size, yhat_unlabelled.size
    w = np.ones(n) if weights is None else weights / weights.sum() * n
    point = yhat_unlabelled.mean() + np.mean(w * (y - yhat))
    grads, grads_hat = w * (y - point), w * (yhat - point)
    cov = np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean()))
    var_hat = np.var(np.concatenate([grads_hat, yhat_unlabelled - point]), ddof=1)
    lam = cov / ((1 + n / big_n) * var_hat) if var_hat > 0 else 0.0
    return float(np.clip(lam, 0.0, 1.0))


@dataclass(frozen=True)
class RoganGladen(Result):
    """A prevalence corrected for a classifier's errors, with its delta-method interval
    (unpacks as its six numbers; ``method`` says how).

    Example:
        >>> y = np.array([1.0] * 10 + [0.0] * 10)
        >>> rg = rogan_gladen_interval(y, y, np.array([1.0, 0.0] * 20), np.ones(20))
        >>> rg.table()[["value", "sensitivity"]].to_dict("records")
        [{'value': 0.5, 'sensitivity': 1.0}]
    """

    estimate: float
    ci_low: float
    ci_high: float
    variance: float
    sensitivity: float
    specificity: float
    method: str = "Rogan-Gladen correction, delta-method normal interval"
    _unpack = ("estimate", "ci_low", "ci_high", "variance", "sensitivity", "specificity")

    def table(self) -> pd.DataFrame:
        """One row: ``value``, ``se``, ``ci_low``, ``ci_high``, ``sensitivity``,
        ``specificity``, ``method``."""
        return pd.DataFrame(
            [
                {
                    "value": self.estimate,
                    "se": math.sqrt(self.variance),
                    "ci_low": self.ci_low,
                    "ci_high": self.ci_high,
                    "sensitivity": self.sensitivity,
                    "specificity": self.specificity,
                    "method": self.method,
                }
            ]
        )


def _rogan_gladen_interval_adapter(frame: pd.DataFrame) -> RoganGladen:
    return rogan_gladen_interval(
        frame["passed"].astype(float).to_numpy(),
        (frame["score"].astype(float) >= 0.5).astype(float).to_numpy(),
        frame["passed"].astype(float).to_numpy(),
        np.ones(len(frame)),
    )


@estimator(
    unit="label",
    estimand="a prevalence corrected for Se and Sp",
    interval="delta method",
    checks=("order", "rename", "method", "scale", "no_spread"),
    adapter=_rogan_gladen_interval_adapter,
    calibration="rogan_gladen",
)
def rogan_gladen_interval(
    y: np.ndarray,
    yhat: np.ndarray,
    predicted: np.ndarray,
    weights: np.ndarray,
    *,
    confidence: float = 0.95,
) -> RoganGladen:
    """The true pass rate from a classifier's pass rate on all items (``predicted``) and its
    sensitivity and specificity on the labelled items (``y`` true, ``yhat`` the classifier's,
    both in [0, 1], a pass at 0.5 or more; ``weights`` 1 / sampling probability):
    pi = (p + Sp - 1) / (Se + Sp - 1), with a delta-method normal interval (the variances of p,
    Se and Sp propagated, Se and Sp over Kish's effective sizes of the weighted labels).

    Raises:
        StatsError: values outside [0, 1]; no labelled passes or no labelled failures; the
            classifier is no better than chance on the labels (Se + Sp <= 1).

    Example:
        >>> y = np.array([1.0] * 10 + [0.0] * 10)
        >>> yhat = np.array([1.0] * 9 + [0.0] + [0.0] * 8 + [1.0] * 2)
        >>> rg = rogan_gladen_interval(y, yhat, np.array([1.0] * 50 + [0.0] * 50), np.ones(20))
        >>> round(rg.sensitivity, 2), round(rg.specificity, 2), round(rg.estimate, 3)
        (0.9, 0.8, 0.429)
    """
    for name, values in (("y", y), ("yhat", yhat), ("predicted", predicted)):
        values = np.asarray(values, dtype=float)
        if values.size and not (
            np.isfinite(values).all() and 0 <= values.min() <= values.max() <= 1
        ):
            raise StatsError(
                f"{name} ranges from {np.nanmin(values):g} to {np.nanmax(values):g}, outside "
                "[0, 1]: give verdicts (0/1) or scores in [0, 1]"
            )
    positive, called = y >= 0.5, yhat >= 0.5
    weight_pos, weight_neg = weights[positive].sum(), weights[~positive].sum()
    if weight_pos == 0 or weight_neg == 0:
        raise StatsError("Rogan-Gladen needs labelled passes and labelled failures")
    se = float(weights[positive & called].sum() / weight_pos)
    sp = float(weights[~positive & ~called].sum() / weight_neg)
    youden = se + sp - 1
    if youden <= 0:
        raise StatsError(
            f"the judge is no better than chance on the labels (sensitivity {se:.2f}, specificity "
            f"{sp:.2f}): Rogan-Gladen cannot correct it"
        )
    p = float((predicted >= 0.5).mean())
    n_pos = weight_pos**2 / (weights[positive] ** 2).sum()  # Kish's effective sizes
    n_neg = weight_neg**2 / (weights[~positive] ** 2).sum()
    pi = (p + sp - 1) / youden
    var = (
        p * (1 - p) / predicted.size
        + pi**2 * se * (1 - se) / n_pos
        + (1 - pi) ** 2 * sp * (1 - sp) / n_neg
    ) / youden**2
    half = stats.norm.ppf(0.5 + confidence / 2) * math.sqrt(var)
    return RoganGladen(pi, pi - half, pi + half, var, se, sp)
