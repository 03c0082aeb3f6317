"""Active evaluation: a new system's full-benchmark score from a few cases drawn where the item
model is least sure of its answer, with an interval that stays valid whatever the model gets
wrong (active statistical inference, Zrnic & Candes, ICML 2024).

The plan (:func:`select` with ``method="active"``): cases are drawn in ``waves``. Before each
wave the new system's ability is updated from its own answers so far (the posterior of the
fitted item model), every case not yet drawn gets a prediction of the system's score on it,
and the wave draws cases with probability proportional to the predicted standard deviation of
that score (the allocation that minimises the estimate's variance when the model is right),
mixed with a uniform ``floor`` so that no probability is tiny. Between waves the predictions
are also recalibrated on the answers so far (a logistic line through the model's
leave-one-out predictions, pulled towards "the model is right"): a model that predicts badly
for this system is flattened towards the mean, so it steers the draws less.

Two designs, both recording each case's probability when it was drawn:

- ``fixed`` (the default): exactly k cases, one at a time without replacement, each draw's
  probability among the cases not yet drawn. The estimate is Des Raj's ordered estimator
  (1956) with predictions: for the t-th draw (case i, probability q, predictions yhat in force)

      z_t = (sum of the scores drawn before t) + (sum of yhat over the cases not yet drawn)
            + (y_i - yhat_i) / q

  is unbiased for the benchmark's total given everything before t, whatever the predictions,
  so the z_t - total are martingale differences. Their mean, each weighted by one over the
  square root of the variance the model predicted for it before its draw (the stabilising
  weights of Hadad, Hirshberg, Zhan, Wager & Athey, PNAS 2021), divided by the number of
  cases, estimates the full-benchmark score; the weighted spread of the z_t gives its standard
  error, its variance at least the one the model predicts for the draws (a plan that has not
  yet drawn a rare surprise sees too little spread, exactly when it needs width: on AlpacaEval
  the spread alone was 2-5 times too small, and the 8-wave plan covered 83-86% at k = 25, 50,
  100), and a t interval on k - 1 degrees of freedom, corrected for skewness: a case the model
  is nearly sure of is drawn with a small probability, so its rare surprise is a large term of
  one sign, and the estimate is then skewed (high when no surprise was drawn, with a small
  spread). The model's own third moment of each z_t (:func:`_term_moments`) gives the
  estimate's skewness, and Hall's (1992) monotone cubic transformation of the t statistic
  removes it to second order: the interval reaches further on the side of the rare surprise.
  When the model's variance is the larger (the standard error then fixed before the draws'
  values are seen) the statistic is standardized, not studentized, and the Cornish-Fisher
  shift applies instead (:func:`_fixed_interval`).
  Only the interval's shape uses the model; a wrong model's skewness moves its ends by a
  fraction of a standard error (the skewness is capped at 1 / (2 t), where one end moves out by
  at most about 27% of the t interval's half-width, the other in by 15%). On the same 2,600
  intervals of the 8-wave plan at k = 100 (simulated 2PL, held-out systems) the t interval
  covered 93.7%, the corrected one 94.4%, 0.3% wider (k = 25: 96.0% and 97.3%, 1.8% wider).
- ``poisson``: each wave includes every case not yet drawn independently, with inclusion
  probability pi_j (the wave's expected size split as above), so the number of cases varies.
  Each wave's difference estimator, Z_w = (scores drawn before) + (sum of yhat over the cases
  left) + sum over the wave's cases of (y - yhat) / pi, is unbiased given the earlier waves,
  with the unbiased variance estimate sum (1 - pi) (y - yhat)^2 / pi^2; the waves are combined
  with weights fixed in advance (their expected sizes over k). The t interval is corrected for
  the skewness the model predicts in the same way (:func:`_poisson_moments`). Measured
  (``bench_items.py --active-coverage 20 10 --poisson``, 200 intervals a cell, 8 waves): 95.0 /
  94.5 / 94.0% at k = 25 / 50 / 100 on simulate_2pl, but 91.5% (Monte Carlo 86.8-94.6%) /
  92.5% / 95.0% on a benchmark of sharp items (90.5% at k = 25 before the skew correction): at
  small k prefer the fixed design, the default and the runner's.

Two guards, for every design. Draws that all scored 0 (or 1) give an interval reaching 0 (or
1) (:func:`jevalkit.items._bounded.reach_agreed`): a benchmark scoring 0 everywhere gives only
such draws, and the model-assisted estimate of them is the predictions' sum, above 0 (the
AlpacaEval reference system, which wins none of its 805 instructions, was reported at 2.9%
[1.5%, 4.9%] after 25 losses in 25 draws). And a system the model has not seen the like of:
before each wave the answers so far are checked against the fitted systems' abilities
(:meth:`IrtFit.beyond_range`, a likelihood ratio against the range from the second-lowest to
the second-highest fitted system); once they put the system above or below it, that wave and
every later one draw uniformly (the model's SDs there are extrapolations), the draws and waves
record the side (``beyond_range``), and the fixed design's estimate scores the cases drawn
before exactly and estimates the rest from the uniform draws after as a simple random sample
(:func:`_after_flag`: their mean, Wilson at the effective n for pass/fail scores; the flag is
decided before its wave, so the estimate stays unbiased), the model unused. The estimate says
so (``outside_range`` and a warning in ``method``), also when only the plan's last answers put
it beyond (its interval then takes no skewness from the model). A new system of ability 3.5
on a sharp 200-item benchmark whose past systems are N(0, 1) was covered 83 / 82 / 77% at
k = 10 / 25 / 50 before, biased low, the model's skewness pointing the wrong way.

``estimate(..., method="ht")`` leaves the predictions out (yhat = 0: the Horvitz-Thompson form
of the same design). The estimand is the mean over the benchmark's cases of the score each case
gets when run (its repeats averaged), as :func:`estimate` has it for anchors.

Why these probabilities: a draw's term carries the residual y_i - yhat_i against the
prediction in force when it was drawn, whose variance under the model is yhat_i (1 - yhat_i)
(the posterior predictive's); probabilities proportional to its square root are Neyman's
allocation for that residual, the floor the guard against a model that is wrong.

When it pays: against uniform random cases (their plain mean) a plan gains twice: from the
predictions (the model-assisted estimate's residuals vary less than the scores) and from the
allocation (probabilities in proportion to the residuals' SDs). The allocation's gain over
uniform draws with the same predictions is bounded by how unequal the per-case SDs are,
sqrt(1 - CV^2) of the error with the model exactly right (the mean SD over the root mean square
SD): binary cases of middling difficulty for the system all have an SD near 0.5 and nothing is
gained; a benchmark on which most cases are nearly certain for a given system (strong
discriminations, a wide spread of difficulties) gains much. :attr:`ActivePlan.design_effect`
and :meth:`ActivePlan.requests` predict both before anything is run, with the model's
predictions taken as exact (:func:`_predicted`): a bound the plan approaches only when the
model is right for the system (its ability learnt from a few answers, its item parameters from
tens of past systems cost more; ``benchmarks/bench_items.py --alpaca`` prints the predicted
beside the measured). Tried in
benchmarks/bench_items.py and not kept, as they did not narrow the interval by more than
about 1%: power tuning (the predictions scaled by a lambda fitted to the draws, PPI++; the
recalibration already flattens a bad model's predictions), inverse-variance or equal weights
instead of the stabilising ones, 16 waves instead of 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, get_args

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.special import expit, log_expit

from ..contract import Result, not_a_statistic, score_matrix
from ..errors import StatsError
from ..stats import capped_inclusion, no_spread_ci, normal_mixture_radius
from ._bounded import effective_wilson, reach_agreed
from ._irt import NODES, PRIOR, IrtFit

ActiveDesign = Literal["fixed", "poisson"]  # exactly k cases, or k expected
DESIGNS: tuple[ActiveDesign, ...] = get_args(ActiveDesign)


class ActiveSettings(TypedDict):
    """The settings of an active plan beside ``k`` and ``seed`` (see :func:`select`)."""

    waves: int | None
    floor: float
    design: ActiveDesign
    recalibrate: bool


# select(method="active")'s defaults (leave_systems_out and the runner use the same)
# (waves None: see waves_for)
ACTIVE_DEFAULTS: ActiveSettings = {
    "waves": None,
    "floor": 0.2,
    "design": "fixed",
    "recalibrate": True,
}
DEFAULT_WAVES = 8
_DRAW_COLUMNS = [
    "case",
    "step",
    "wave",
    "probability",
    "prediction",
    "remaining_prediction",
    "weight",
    "variance",
    "third_moment",
    "ht_variance",
    "beyond_range",
]
_WAVE_COLUMNS = [
    "wave",
    "n_remaining",
    "expected_size",
    "n_drawn",
    "remaining_prediction",
    "weight",
    "slope",
    "intercept",
    "ability",
    "beyond_range",
    "variance",
    "third_moment",
]
RECALIBRATION_PRIOR = (1.0, 0.5)  # intercept ~ N(0, 1^2), slope ~ N(1, 0.5^2)
_LOGIT_CLIP = 1e-3
# a fixed plan flagged beyond the fitted range is estimated from its uniform draws after the
# flag when they are at least this share of its k (and 2); else from every draw's term
AFTER_FLAG_SHARE = 0.5


@dataclass(frozen=True)
class ActivePlan(Result):
    """Which cases to run for one new system, in waves, with the probability each had when it
    was drawn (:func:`select` with ``method="active"``); :func:`estimate` reads it.

    Attributes:
        k: cases to draw (``fixed``), or their expected number (``poisson``).
        n_waves: how many times the ability is updated between draws.
        floor: the uniform share of each draw's probability.
        design: ``fixed`` or ``poisson``.
        seed: of the draws (the same fit, seed and answers give the same plan).
        n_items: the benchmark's cases.
        draws: one row per drawn case: ``case`` (the item id), ``step`` (draw order),
            ``wave``, ``probability`` (``fixed``: of that case at its draw, among the cases
            not yet drawn; ``poisson``: its inclusion probability in its wave),
            ``prediction`` (the system's predicted score on it then), ``remaining_prediction``
            (the predictions summed over the cases not yet drawn, it included), ``weight``
            (``fixed``: its stabilising weight; ``poisson``: its wave's), and under the model,
            given the draws before it, the ``variance`` and ``third_moment`` of the draw's
            z_t about the total (``fixed`` only; they weight it and shape the interval) and
            the ``ht_variance`` of its Horvitz-Thompson term (the ``ht`` interval's floor),
            ``beyond_range`` (``"above"`` or ``"below"`` when its wave drew uniformly because
            the answers before it put the system beyond the fitted systems' range, else "").
        waves: one row per wave drawn: ``wave``, ``n_remaining`` (cases not drawn before it),
            ``expected_size``, ``n_drawn``, ``remaining_prediction``, ``weight``, the
            recalibration in force (``slope``, ``intercept``), the ``ability`` (posterior mean)
            and ``beyond_range`` (as the draws') the answers before it gave, and under the
            model, given the
            waves before it, the ``variance`` and ``third_moment`` of the wave's estimate of
            the total about the total (``poisson`` only; they shape its interval).
        complete: every wave is drawn (a later wave waits for the answers to the earlier ones).
        design_effect: Kish's design effect against uniform random cases: the variance of
            the plan's estimate over that of the plain mean of k uniform random cases, as the
            model predicts them from its prior before anything is run (its predictions taken
            as exact): about the share of uniform random cases' requests the plan needs for
            the same half-width (:meth:`requests` for a target; below 1 the plan is expected
            to pay, near 1 it will not).
        predicted: the model's predicted variance of the mean score's estimate at k, one row
            per design (``design``: ``active plan``, ``uniform draws, model-assisted``,
            ``uniform random cases``; ``variance``), which :meth:`requests` reads.
        method: how the cases were drawn, with the predicted saving.
    """

    k: int
    n_waves: int
    floor: float
    design: ActiveDesign
    seed: int
    n_items: int
    draws: pd.DataFrame = field(repr=False)
    waves: pd.DataFrame = field(repr=False)
    complete: bool
    design_effect: float
    predicted: pd.DataFrame = field(repr=False)
    method: str

    def table(self) -> pd.DataFrame:
        """The draws, with ``method``."""
        return self.draws.assign(method=self.method)

    @property
    def beyond_range(self) -> str:
        """``"above"`` or ``"below"`` once a wave found the system's answers beyond the
        fitted systems' range (:meth:`IrtFit.beyond_range`; the waves from then on drew
        uniformly), else ``""``."""
        sides = [side for side in self.waves["beyond_range"] if side]
        return str(sides[0]) if sides else ""

    def requests(self, half_width: float | None = None, *, confidence: float = 0.95):
        """The requests each design is expected to need for a target half-width, as the item
        model predicts them before anything is run (:attr:`design_effect`): the active plan,
        uniform draws with the same model-assisted estimate, uniform random cases with their
        plain mean. A prediction with the model taken as exact at every ability of its prior:
        the waves' own uncertainty about the system, and a model that is wrong for it, cost
        more (``benchmarks/bench_items.py`` prints the measured half-widths beside it).

        Args:
            half_width: the target half-width of the interval on the score's scale (the
                default: the one the plan is expected to reach at its k).
            confidence: of the interval (a normal quantile).

        Returns:
            One row per design: ``design``, ``half_width_at_k`` (expected at the plan's k),
            ``requests`` (cases expected to reach ``half_width``, whole, at most the
            benchmark's), ``ratio`` (its requests over uniform random cases').

        Example:
            >>> from jevalkit.items import fit_irt, select, simulate_2pl
            >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=100, seed=0), case="case_id")
            >>> plan = select(fit, 20, method="active")
            >>> table = plan.requests()
            >>> table["design"].tolist()
            ['active plan', 'uniform draws, model-assisted', 'uniform random cases']
            >>> int(table["requests"].iloc[0]), bool(table["ratio"].iloc[2] == 1.0)
            (20, True)
        """
        if not 0 < confidence < 1:
            raise StatsError(f"confidence must be in (0, 1), got {confidence!r}")
        z = float(sps.norm.ppf(0.5 + confidence / 2))
        variance = self.predicted["variance"].to_numpy(float)
        at_k = z * np.sqrt(variance)
        target = at_k[0] if half_width is None else half_width
        if (
            isinstance(target, bool)
            or not isinstance(target, int | float)
            or not 0 < target < np.inf
        ):
            raise StatsError(f"half_width must be a positive number, got {half_width!r}")
        # each design's variance at k' cases is taken as c (1/k' - 1/n), c from its k (exact
        # for the uniform designs; for the plan, whose probabilities also change with k', the
        # Kish approximation)
        n, k = self.n_items, self.k
        scale = variance / (1 / k - 1 / n)
        need = 1 / ((target / z) ** 2 / scale + 1 / n)
        need = np.minimum(np.ceil(need - 1e-9), n).astype(int)
        return pd.DataFrame(
            {
                "design": list(self.predicted["design"]),
                "half_width_at_k": at_k,
                "requests": need,
                "ratio": need / need[-1],
            }
        )

    @property
    def cases(self) -> list:
        """The cases drawn so far, in draw order (run these; then ask for the next wave)."""
        return self.draws["case"].tolist()


@dataclass(frozen=True)
class _Answers:
    """One new system's scores (repeats averaged) and repeat counts, by item index."""

    scores: dict[int, float]
    weight: dict[int, float]


def _answers(fit: IrtFit, new_results: pd.DataFrame | None) -> _Answers:
    if new_results is None or len(new_results) == 0:
        return _Answers({}, {})
    matrix = score_matrix(new_results, **fit.matrix.columns, weighted=True)
    if len(matrix.systems) != 1:
        raise StatsError(
            f"an active plan scores one new system at a time; the results hold "
            f"{len(matrix.systems)}: {matrix.systems[:5]}"
        )
    index = {item: j for j, item in enumerate(fit.matrix.item_ids())}
    scores, weight = {}, {}
    for j, item in enumerate(matrix.item_ids()):
        if matrix.weight[0, j] <= 0:
            continue
        if item not in index:
            raise StatsError(
                f"case {item!r} of the new results is not an item of the fitted benchmark "
                "(read with the fit's columns, fit.matrix.columns)"
            )
        scores[index[item]] = float(matrix.scores[0, j])
        weight[index[item]] = float(matrix.weight[0, j])
    return _Answers(scores, weight)


class _Model:
    """The fitted item model's predictions for one new system, given its answers so far."""

    def __init__(self, fit: IrtFit):
        self.fit = fit
        items = fit.items
        self.ok = items["status"].eq("ok").to_numpy()
        a = np.nan_to_num(items["discrimination"].to_numpy(float))
        c = np.nan_to_num(items["intercept"].to_numpy(float))
        self.past = items["mean_score"].fillna(0.5).to_numpy(float)
        self.p = expit(np.outer(a, NODES) + c[:, None])  # items x ability nodes
        self.log_p = log_expit(np.outer(a, NODES) + c[:, None])
        self.log_q = log_expit(-(np.outer(a, NODES) + c[:, None]))

    def _loglik(self, items: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Each answered item's log-likelihood over the ability nodes (0 if not calibrated)."""
        ll = w[:, None] * (y[:, None] * self.log_p[items] + (1 - y[:, None]) * self.log_q[items])
        return np.where(self.ok[items][:, None], ll, 0.0)

    def loglik(self, answers: _Answers, drawn: list[int]) -> np.ndarray:
        """The answered items' log-likelihood, each over the ability nodes (items x nodes)."""
        items = np.asarray(drawn, dtype=int)
        y = np.array([answers.scores[j] for j in drawn], dtype=float)
        w = np.array([answers.weight[j] for j in drawn], dtype=float)
        return self._loglik(items, y, w).reshape(items.size, NODES.size)

    def predict(self, answers: _Answers, drawn: list[int], recalibrate: bool):
        """Predicted scores on every item, the recalibration (slope, intercept) used, the
        ability (EAP) and where the answers put it against the fitted systems' range
        (:meth:`IrtFit.beyond_range`)."""
        items = np.asarray(drawn, dtype=int)
        y = np.array([answers.scores[j] for j in drawn], dtype=float)
        w = np.array([answers.weight[j] for j in drawn], dtype=float)
        ll = self.loglik(answers, drawn)
        total = ll.sum(axis=0) + np.log(PRIOR)
        post = np.exp(total - total.max())
        post /= post.sum()
        pred = np.where(self.ok, self.p @ post, self.past)
        ability, side = float(post @ NODES), self.fit.beyond_range(ll.sum(axis=0))
        if not recalibrate or items.size < 2:
            return pred, 1.0, 0.0, ability, side
        loo = total[None, :] - ll  # each answered item's prediction without it (cross-fitted)
        loo = np.exp(loo - loo.max(axis=1, keepdims=True))
        loo /= loo.sum(axis=1, keepdims=True)
        held = np.where(self.ok[items], (self.p[items] * loo).sum(axis=1), self.past[items])
        slope, intercept = _recalibration(_logit(held), y, w)
        return expit(intercept + slope * _logit(pred)), slope, intercept, ability, side


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, _LOGIT_CLIP, 1 - _LOGIT_CLIP)
    return np.log(p) - np.log1p(-p)


def _recalibration(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """The MAP logistic line y ~ expit(intercept + slope x) (fractional y, weights w), under
    intercept ~ N(0, 1) and slope ~ N(1, 0.5^2), the slope kept in [0, 1]: a model that
    predicts this system well keeps its predictions, one that does not is flattened towards
    the mean (never sharpened by the noise of a few answers).

    The loss is strictly convex (the priors), so damped Newton steps find its minimum; when the
    unconstrained slope leaves [0, 1] the constrained minimum has the slope at that bound
    (minimising over the intercept keeps the loss convex in the slope), and the intercept is
    found again with the slope held there."""
    sd_a, sd_b = RECALIBRATION_PRIOR
    prior_mean = np.array([0.0, 1.0])
    prior_precision = np.array([1 / sd_a**2, 1 / sd_b**2])

    def loss(t):
        eta = t[0] + t[1] * x
        nll = -np.sum(w * (y * log_expit(eta) + (1 - y) * log_expit(-eta)))
        return nll + 0.5 * np.sum(prior_precision * (t - prior_mean) ** 2)

    def newton(t, free):
        for _ in range(100):
            eta = t[0] + t[1] * x
            mu = expit(eta)
            r, v = w * (y - mu), w * mu * (1 - mu)
            grad = -np.array([r.sum(), (r * x).sum()]) + prior_precision * (t - prior_mean)
            hess = np.array([[v.sum(), (v * x).sum()], [(v * x).sum(), (v * x * x).sum()]])
            hess += np.diag(prior_precision)
            step = np.zeros(2)
            step[free] = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
            before, scale = loss(t), 1.0
            while loss(t - scale * step) > before and scale > 1e-8:
                scale /= 2
            t = t - scale * step
            if np.max(np.abs(scale * step)) < 1e-10:
                break
        return t

    t = newton(prior_mean.copy(), [0, 1])
    if not 0.0 <= t[1] <= 1.0:
        t[1] = min(max(t[1], 0.0), 1.0)
        t = newton(t, [0])
    return float(t[1]), float(min(max(t[0], -10.0), 10.0))


def _probabilities(sd: np.ndarray, floor: float) -> np.ndarray:
    return (1 - floor) * sd / sd.sum() + floor / sd.size


@not_a_statistic("a plan setting: the number of waves an active plan is drawn in")
def waves_for(k: int, waves: int | None = None) -> int:
    """How many waves an active plan of ``k`` cases is drawn in: ``waves`` if given, else 8, or
    ``k`` when k is smaller (one case a wave). The runner names its plans with it.

    Example:
        >>> waves_for(100), waves_for(5), waves_for(100, 3)
        (8, 5, 3)
    """
    return min(DEFAULT_WAVES, int(k)) if waves is None else waves


def _term_moments(p: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """The variance and third central moment of one draw's z_t - total under the model, given
    the draws before it: scores y_j ~ Bernoulli(p_j) independent over the cases left, case j
    drawn with probability q_j. With r_j = y_j - p_j and d = r_I / q_I - sum_j r_j (I the
    drawn case), the cross moments vanish but for one case at a time:

        E d^2 = sum_j m2_j (1/q_j - 1),   E d^3 = sum_j m3_j (1/q_j^2 - 3/q_j + 2),

    with m2 = p (1 - p), m3 = p (1 - p) (1 - 2p) the residual's central moments."""
    m2 = np.clip(p * (1 - p), 1e-6, None)
    m3 = p * (1 - p) * (1 - 2 * p)
    return float(np.sum(m2 * (1 / q - 1))), float(np.sum(m3 * (1 / q**2 - 3 / q + 2)))


def _ht_variance(p: np.ndarray, q: np.ndarray) -> float:
    """The variance of one draw's Horvitz-Thompson term (no predictions) about the total under
    the model, given the draws before it: with d = y_I / q_I - sum_j y_j over the cases left,
    E d^2 = sum_j p_j / q_j - (E S^2), S = sum_j y_j, so

        E d^2 = sum_j p_j / q_j - sum_j p_j (1 - p_j) - (sum_j p_j)^2

    (y_j ~ Bernoulli(p_j) independent, y_j^2 = y_j)."""
    return float(max(np.sum(p / q) - np.sum(p * (1 - p)) - np.sum(p) ** 2, 0.0))


def _poisson_moments(p: np.ndarray, pi: np.ndarray) -> tuple[float, float]:
    """The variance and third central moment of a Poisson wave's estimate of the total about
    the total, under the model, given the waves before it: Z - total = sum_j (I_j / pi_j - 1)
    r_j over the cases left, I_j ~ Bernoulli(pi_j) independent of r_j = y_j - p_j, so

        E (Z - total)^2 = sum_j m2_j (1/pi_j - 1),
        E (Z - total)^3 = sum_j m3_j (1 - pi_j) (1 - 2 pi_j) / pi_j^2,

    with m2, m3 the residual's central moments (as in :func:`_term_moments`)."""
    m2 = np.clip(p * (1 - p), 1e-6, None)
    m3 = p * (1 - p) * (1 - 2 * p)
    return float(np.sum(m2 * (1 / pi - 1))), float(np.sum(m3 * (1 - pi) * (1 - 2 * pi) / pi**2))


def _hall_bounds(critical: float, skewness: float) -> tuple[float, float]:
    """The studentised statistic's quantiles (lower, upper) for a two-sided interval, by Hall's
    (1992) monotone cubic transformation of the t statistic: g(T) = T + a T^2 + a^2 T^3 / 3 + b
    with a = skewness / 3, b = skewness / 6 (``skewness`` is the estimate's own, the terms'
    over sqrt(n)), so that g(T) is t distributed to second order. The interval is
    [value - se * upper, value - se * lower]."""
    a, b = skewness / 3, skewness / 6
    if abs(a) < 1e-12:  # no skewness: the t interval's
        return -critical - b, critical - b

    def inverse(x):
        return (np.cbrt(1 + 3 * a * (x - b)) - 1) / a

    return float(inverse(-critical)), float(inverse(critical))


def _predicted(model: _Model, k: int, floor: float) -> pd.DataFrame:
    """The variance of the full-benchmark score estimated from k cases under three designs, as
    the item model predicts it before anything is run (its predictions exact at each ability of
    its prior, averaged over the prior; Bernoulli scores), one row per design:

    - ``active plan``: one wave drawn with probability in proportion to each case's predicted
      SD, mixed with the uniform ``floor``; the model-assisted estimate, whose drawn case
      carries its residual's variance p (1 - p): sum_j p_j (1 - p_j) (1 / pi_j - 1) / n^2,
      pi_j = min(k q_j, 1);
    - ``uniform draws, model-assisted``: the same estimate from uniform draws, (1/k - 1/n)
      sum_j p_j (1 - p_j) / n (the residuals' spread): what the predictions gain without the
      allocation (the active plan's at floor 1);
    - ``uniform random cases``: their plain mean, (1/k - 1/n) S^2 with S^2 the cases' expected
      spread, (sum_j p_j (1 - p_j) (1 - 1/n) + sum_j (p_j - mean p)^2) / (n - 1): what a run
      without the model does.
    """
    p = np.where(model.ok[:, None], model.p, model.past[:, None])  # items x nodes
    n = p.shape[0]
    s2 = np.clip(p * (1 - p), 1e-6, None)
    sd = np.sqrt(s2)
    pi = np.minimum(k * ((1 - floor) * sd / sd.sum(axis=0) + floor / n), 1.0)
    between = ((p - p.mean(axis=0)) ** 2).sum(axis=0)
    fpc = 1 / k - 1 / n
    variance = [
        float(PRIOR @ (s2 * (1 - pi) / pi).sum(axis=0)) / n**2,
        fpc * float(PRIOR @ s2.sum(axis=0)) / n,
        fpc * float(PRIOR @ (s2.sum(axis=0) * (1 - 1 / n) + between)) / (n - 1),
    ]
    return pd.DataFrame({"design": list(PREDICTED_DESIGNS), "variance": variance})


PREDICTED_DESIGNS = ("active plan", "uniform draws, model-assisted", "uniform random cases")


def _pays(predicted: pd.DataFrame) -> str:
    """The plan's predicted saving, in words, for its ``method``."""
    v = predicted["variance"].to_numpy(float)
    return (
        f"; the model predicts {v[0] / v[2]:.2f} of uniform random cases' requests for the same "
        f"half-width ({v[1] / v[2]:.2f} for uniform draws, model-assisted; taking its "
        "predictions as exact)"
    )


def active_plan(
    fit: IrtFit,
    k: int,
    *,
    new_results: pd.DataFrame | None,
    waves: int | None,
    floor: float,
    design: ActiveDesign,
    recalibrate: bool,
    seed: int,
) -> ActivePlan:
    """:func:`select`'s ``active`` method (see there, and the module docstring)."""
    n = len(fit.items)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 2 <= k < n:
        raise StatsError(
            f"k must be a whole number from 2 to {n - 1} (the benchmark has {n} items), got {k!r}"
        )
    waves = waves_for(k, waves)
    if isinstance(waves, bool) or not isinstance(waves, int | np.integer) or not 1 <= waves <= k:
        raise StatsError(f"waves must be a whole number from 1 to k={k}, got {waves!r}")
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0 < floor <= 1:
        raise StatsError(f"floor must be a number in (0, 1] (1 draws uniformly), got {floor!r}")
    if design not in DESIGNS:
        raise StatsError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
    ids = fit.matrix.item_ids()
    answers = _answers(fit, new_results)
    model = _Model(fit)
    sizes = [len(part) for part in np.array_split(np.arange(int(k)), int(waves))]
    remaining = np.ones(n, dtype=bool)
    drawn: list[int] = []
    rows: list[dict[str, Any]] = []
    wave_rows: list[dict[str, Any]] = []
    complete, beyond = True, ""
    for wave, size in enumerate(sizes):
        if any(j not in answers.scores for j in drawn):
            complete = False  # the next wave waits for the answers to this one
            break
        pred, slope, intercept, ability, side = model.predict(answers, drawn, recalibrate)
        # once the answers put the system beyond the fitted systems, the model's SDs there are
        # extrapolations: this wave and every later one draw uniformly (the side is kept)
        beyond = beyond or side
        s2 = np.clip(pred * (1 - pred), 1e-6, None)
        sd = np.ones_like(s2) if beyond else np.sqrt(s2)
        rng = np.random.default_rng([int(seed), wave])
        rem = np.flatnonzero(remaining)
        wave_row = {
            "wave": wave,
            "n_remaining": int(rem.size),
            "expected_size": size,
            "remaining_prediction": float(pred[rem].sum()),
            "slope": slope,
            "intercept": intercept,
            "ability": ability,
            "beyond_range": beyond,
        }
        if design == "poisson":
            # earlier waves may have drawn every case (Poisson sizes vary): nothing is left to
            # draw, and this wave's estimate is the total itself
            pi = capped_inclusion(_probabilities(sd[rem], floor), size) if rem.size else sd[rem]
            picked = rem[rng.random(rem.size) < pi]
            weight = size / k
            prob = dict(zip(rem, pi, strict=True))
            for item in picked:
                rows.append(_draw(ids, item, len(rows), wave, prob[item], pred, wave_row, weight))
                rows[-1]["beyond_range"] = beyond
            remaining[picked] = False
            drawn.extend(int(i) for i in picked)
            variance, third = _poisson_moments(pred[rem], pi)
            wave_rows.append(
                {
                    **wave_row,
                    "n_drawn": int(picked.size),
                    "weight": weight,
                    "variance": variance,
                    "third_moment": third,
                }
            )
            continue
        for _ in range(size):
            rem = np.flatnonzero(remaining)
            q = _probabilities(sd[rem], floor)
            pick = int(rng.choice(rem.size, p=q / q.sum()))
            # the model's variance of this draw's z_t, fixed before the draw: its weight;
            # and its third central moment, for the interval's skewness correction
            variance, third = _term_moments(pred[rem], q)
            item = int(rem[pick])
            row = _draw(ids, item, len(rows), wave, float(q[pick]), pred, None, 0.0)
            row["remaining_prediction"] = float(pred[rem].sum())
            row["weight"] = 1 / np.sqrt(max(variance, 1e-12))
            row["variance"] = variance
            row["third_moment"] = third
            row["ht_variance"] = _ht_variance(pred[rem], q)
            row["beyond_range"] = beyond
            rows.append(row)
            remaining[item] = False
            drawn.append(item)
        wave_rows.append({**wave_row, "n_drawn": size, "weight": np.nan})
    draws = pd.DataFrame(rows, columns=_DRAW_COLUMNS)
    predicted = _predicted(model, int(k), float(floor))
    how = (
        f"{'exactly' if design == 'fixed' else 'on average'} {k} of {n} cases in {waves} "
        f"wave(s) ({'draws without replacement' if design == 'fixed' else 'Poisson sampling'}), "
        f"probability proportional to the predicted SD of the score ({fit.model.upper()} "
        f"posterior{', recalibrated between waves' if recalibrate else ''}), {floor:.0%} uniform"
        + _pays(predicted)
    )
    if beyond:
        how += (
            f"; WARNING: the answers put the system's ability {beyond} the fitted systems' "
            "range (the model extrapolates there): the waves from then on drew uniformly"
        )
    return ActivePlan(
        k=int(k),
        n_waves=int(waves),
        floor=float(floor),
        design=design,
        seed=int(seed),
        n_items=n,
        draws=draws,
        waves=pd.DataFrame(wave_rows, columns=_WAVE_COLUMNS),
        complete=complete,
        design_effect=float(predicted["variance"].iloc[0] / predicted["variance"].iloc[2]),
        predicted=predicted,
        method=how,
    )


def complete_plan(fit: IrtFit, k: int, new_results: pd.DataFrame, **options) -> ActivePlan:
    """Every wave of an active plan for a system whose results on every case are at hand
    (simulations and leave-systems-out): each wave sees only its answers to the earlier
    draws, as a run would."""
    columns = list(fit.matrix.items.columns)
    missing = [c for c in columns if c not in new_results.columns]
    if missing:
        raise StatsError(f"the new results lack the fit's case column(s) {missing}")
    keys = (
        new_results[columns[0]]
        if len(columns) == 1
        else pd.Series(
            list(new_results[columns].itertuples(index=False, name=None)), index=new_results.index
        )
    )
    plan = active_plan(fit, k, new_results=None, **options)
    for _ in range(plan.n_waves):
        if plan.complete:
            return plan
        drawn = set(plan.cases)
        plan = active_plan(fit, k, new_results=new_results[keys.isin(drawn)], **options)
    if not plan.complete:  # a drawn case the results do not answer
        missing = [c for c in plan.cases if c not in set(keys)][:1] or plan.cases[-1:]
        raise StatsError(
            f"the results have no score on drawn case {missing[0]!r}: an active plan needs "
            "every drawn case answered before its next wave"
        )
    return plan


def _draw(ids, item, step, wave, probability, pred, wave_row, weight) -> dict:
    return {
        "case": ids[item],
        "step": step,
        "wave": wave,
        "probability": probability,
        "prediction": float(pred[item]),
        "remaining_prediction": wave_row["remaining_prediction"] if wave_row else np.nan,
        "weight": weight,
    }


def active_estimate(
    fit: IrtFit,
    plan: ActivePlan,
    new_results: pd.DataFrame,
    *,
    method: str,
    confidence: float,
    anytime: bool = False,
) -> dict:
    """:func:`estimate` for an :class:`ActivePlan` (see the module docstring): one row."""
    if method not in ("active", "ht"):
        raise StatsError(f"method must be 'active' or 'ht' for an active plan, got {method!r}")
    if anytime and plan.design != "fixed":
        raise StatsError(
            "an anytime-valid interval needs the fixed design (one draw at a time); a "
            "design='poisson' plan is combined wave by wave: drop anytime or draw with "
            "design='fixed'"
        )
    if plan.n_items != len(fit.items):
        raise StatsError(
            f"the plan was drawn from a benchmark of {plan.n_items} items, the fit has "
            f"{len(fit.items)}: pass the fit the plan was drawn from"
        )
    if plan.draws.empty and plan.complete:
        raise StatsError(
            f"the Poisson plan drew no case in any of its {plan.n_waves} wave(s) (k={plan.k} "
            "expected): nothing to estimate from; use design='fixed' (exactly k cases) or a "
            "larger k"
        )
    if plan.draws.empty:
        raise StatsError("the plan has drawn no case yet: run its first wave")
    matrix = score_matrix(new_results, **fit.matrix.columns, weighted=True)
    if len(matrix.systems) != 1:
        raise StatsError(
            f"an active plan scores one new system at a time; the results hold "
            f"{len(matrix.systems)}: {matrix.systems[:5]}"
        )
    found = {
        item: float(matrix.scores[0, j])
        for j, item in enumerate(matrix.item_ids())
        if matrix.weight[0, j] > 0
    }
    missing = [c for c in plan.draws["case"] if c not in found]
    if missing:
        raise StatsError(
            f"{len(missing)} drawn case(s) have no score (e.g. {missing[0]!r}): run every drawn "
            "case (leaving the hard ones out biases the estimate)"
        )
    draws = plan.draws
    y = np.array([found[c] for c in draws["case"]], dtype=float)
    pred = draws["prediction"].to_numpy(float) if method == "active" else np.zeros(y.size)
    n_total = plan.n_items
    side = _beyond(fit, plan, y)
    if anytime:
        return _warned(_anytime(plan, y, pred, method, confidence), side, plan, y)
    flagged = draws["beyond_range"].astype(bool).to_numpy() if "beyond_range" in draws else None
    if (
        plan.design == "fixed"
        and flagged is not None
        and flagged.sum() >= max(2, AFTER_FLAG_SHARE * plan.k)
    ):
        row = _after_flag(flagged, y, n_total, confidence)
        return _warned(row, side, plan, y)
    if plan.design == "fixed":
        total, se, skewness, how, terms, known = _ordered(draws, y, pred, method)
    else:
        total, se, skewness, how, known = _poisson(plan, y, pred, method)
        terms = y.size
    value = total / n_total
    se = se / n_total
    how = f"{how} over {y.size} of {n_total} cases"
    skewness = 0.0 if side else skewness
    row = _fixed_interval(value, se, skewness, terms, how, confidence, standardized=known)
    return _warned({**row, "n_items": y.size}, side, plan, y)


def _after_flag(flagged: np.ndarray, y: np.ndarray, n_total: int, confidence: float) -> dict:
    """The estimate of a fixed plan that found the system beyond the fitted systems' range,
    from then on drawing uniformly: the cases drawn before are scored exactly, the uniform
    draws after are a simple random sample of the cases left then, and neither uses the model.

    With B the scores drawn before the flag, R the cases left then and m uniform draws of mean
    ybar, the full score is estimated by (B + R ybar) / N, unbiased as the flag is decided on
    the answers before its wave (a stopping time); the interval is the sample's for the mean of
    the R cases (pass/fail: the Wilson interval at the effective n, :func:`effective_wilson`;
    otherwise the t interval, both finite-population corrected), mapped through the same line.
    Why not the model's terms there: where the model extrapolates its predictions are wrong in
    one direction, and the terms carry a rare large surprise of one sign that a few draws
    seldom show; a new system far above the past ones was covered 88-92% at k = 25 and 50 with
    the model-assisted terms even when only the uniform draws' were averaged
    (``benchmarks/bench_items.py --far-outside``). Only when the draws after the flag are at
    least half the plan's k (``AFTER_FLAG_SHARE``; whether they are is fixed at the flag): a
    flag in the last waves leaves a handful of them, whose interval is wider than the one of
    every draw's term (with 2 or more: 0.154 against 0.118 at k = 25 on the far-outside
    benchmark, coverage the same)."""
    first = int(np.argmax(flagged))
    before, sample = float(y[:first].sum()), y[first:]
    left, m = n_total - first, sample.size
    mean = float(sample.mean())
    var = (1 - m / left) * float(sample.var(ddof=1)) / m
    if np.isin(sample, (0.0, 1.0)).all():
        low, high, interval = effective_wilson(
            mean, var, m, left, m - 1, confidence, unit="draws after the flag"
        )
    elif var > 0:
        half = float(sps.t.ppf(0.5 + confidence / 2, m - 1) * np.sqrt(var))
        low, high = max(mean - half, 0.0), min(mean + half, 1.0)
        interval = f"t interval on {m - 1} df"
    else:  # no spread among them is not a certainty
        low, high = no_spread_ci(float(np.clip(mean, 0.0, 1.0)), m, confidence=confidence)
        interval = "no spread among them: Wilson interval at their mean"
    how = (
        f"the {first} cases drawn before the system was found beyond the fitted systems' range "
        f"scored as they are, the {left} left then estimated from its {m} uniform draws after "
        f"(their mean, the model's predictions unused; {interval})"
    )
    value, low, high = ((before + left * v) / n_total for v in (mean, low, high))
    return _row(value, low, high, y.size, how)


def _beyond(fit: IrtFit, plan: ActivePlan, y: np.ndarray) -> str:
    """Where the system's ability lies against the fitted systems' range: the side a wave of
    the plan found (its later waves drew uniformly), else the side its answers to every drawn
    case put it on (:meth:`IrtFit.beyond_range`), else ``""``."""
    flagged = [s for s in plan.draws.get("beyond_range", pd.Series(dtype=object)) if s]
    if flagged:
        return str(flagged[0])
    model = _Model(fit)
    index = {item: j for j, item in enumerate(fit.matrix.item_ids())}
    drawn = [index[c] for c in plan.draws["case"]]
    answers = _Answers(dict(zip(drawn, y, strict=True)), dict.fromkeys(drawn, 1.0))
    return fit.beyond_range(model.loglik(answers, drawn).sum(axis=0))


def _warned(row: dict, side: str, plan: ActivePlan, y: np.ndarray) -> dict:
    """The estimate's row with its ``outside_range`` flag and the warning in ``method``, its
    interval reaching the score every draw agreed on (:func:`reach_agreed`)."""
    row["ci_low"], row["ci_high"], note = reach_agreed(row["ci_low"], row["ci_high"], y)
    row["method"] += note
    _within_known(row, plan, y)
    if side:
        uniform = plan.draws.get("beyond_range", pd.Series(dtype=object)).astype(bool)
        drew = (
            f"; the {int(uniform.sum())} draws after it was found drew uniformly"
            if uniform.any()
            else ""
        )
        row["method"] += (
            f"; WARNING: the system's answers put its ability {side} the fitted systems' range "
            f"(the item model extrapolates there{drew}; the interval takes no shape from the "
            "model)"
        )
    return {**row, "outside_range": bool(side)}


def _within_known(row: dict, plan: ActivePlan, y: np.ndarray) -> None:
    """Keep the estimate within what the drawn cases already fix: with B the sum of the m
    distinct drawn cases' scores (in [0, 1]) of the benchmark's N, its mean lies in
    [B / N, (B + N - m) / N] for certain. Near k = N the ordered estimator still carries its
    first draws' noise and was outside it (19 of 20 cases drawn: 0.314 where the truth could
    only be in [0.35, 0.40]). The value is clipped into it, the interval intersected with it
    (which never uncovers the truth, as the truth is inside); the interval is replaced by it
    when it is the narrower one or the two do not meet."""
    if y.size == 0 or not np.all((y >= 0) & (y <= 1)):
        return
    first = ~plan.draws["case"].duplicated().to_numpy()
    n, m, known = plan.n_items, int(first.sum()), float(y[first].sum())
    low, high = known / n, (known + n - m) / n
    value, ci_low, ci_high = row["value"], row["ci_low"], row["ci_high"]
    if m == n:  # every case drawn: the score is known, and an interval would have no width
        row.update(value=known / n, ci_low=np.nan, ci_high=np.nan)
        row["method"] += f"; every one of the {n} cases drawn: the score is known exactly"
        return
    inside = low - 1e-12 <= value <= high + 1e-12
    row["value"] = float(np.clip(value, low, high))
    if np.isnan(ci_low) or np.isnan(ci_high):
        contained = True
    elif ci_high - ci_low >= high - low or ci_high < low or ci_low > high:
        contained = ci_low >= low - 1e-12 and ci_high <= high + 1e-12
        row["ci_low"], row["ci_high"] = low, high
    else:
        contained = ci_low >= low - 1e-12 and ci_high <= high + 1e-12
        row["ci_low"], row["ci_high"] = max(ci_low, low), min(ci_high, high)
    if not (inside and contained):
        row["method"] += (
            f"; kept within what the {m} of {n} cases drawn already fix ([{low:.4g}, "
            f"{high:.4g}]: the scores drawn, the others anywhere in [0, 1])"
        )


def _fixed_interval(value, se, skewness, n, how, confidence, *, standardized=False) -> dict:
    """The t interval at n draws about ``value`` with standard error ``se``, corrected for the
    ``skewness`` the model predicts, kept in [0, 1].

    The correction depends on where the standard error came from. From the draws' spread the
    statistic is studentized, and Hall's (1992) transformation corrects it (:func:`_hall_bounds`:
    for a right-skewed estimate the interval reaches further up, as the spread is small exactly
    when no large term was drawn). From the model (``standardized``: its variance for the draws
    is the larger, so the standard error is fixed before the draws' values are seen) the
    statistic is standardized, and its quantiles are Cornish-Fisher's, z + skewness (z^2 - 1) / 6:
    the interval is shifted, not stretched (down for a right-skewed estimate: its rare large
    term pulls it up). Hall's correction there stretched the interval by 3-8% more with the
    same coverage (26 AlpacaEval systems held out, 2 plans each, k = 25, 50, 100)."""
    if n < 2:
        return _row(value, np.nan, np.nan, n, how + "; one case: no interval")
    critical = sps.t.ppf(0.5 + confidence / 2, n - 1)
    half = critical * se
    # Hall's inverse stretches fast once |skewness| * critical nears 1: kept to at most half of
    # that, where one end moves out by at most about 27%, the other in by 15%
    skewness = float(np.clip(skewness, -0.5 / critical, 0.5 / critical))
    if standardized:
        shift = skewness * (critical**2 - 1) / 6
        lower, upper = -critical + shift, critical + shift
    else:
        lower, upper = _hall_bounds(critical, skewness)
    low, high = value - se * upper, value - se * lower
    how += f"; t interval on {n - 1} df"
    if skewness and standardized:
        how += (
            f", shifted for the skewness the model predicts ({skewness:+.3f}, Cornish-Fisher: "
            "the model's variance binds)"
        )
    elif skewness:
        how += f", corrected for the skewness the model predicts ({skewness:+.3f}, Hall's transformation)"
    if not half > 0:  # no spread among the draws is not a certainty
        value = float(np.clip(value, 0.0, 1.0))
        low, high = no_spread_ci(value, n, confidence=confidence)
        how += "; no spread among the draws: Wilson interval at the same estimate"
        return _row(value, low, high, n, how)
    return _row(*_within_range(value, low, high, n, how, confidence))


def _within_range(value, low, high, n, how, confidence):
    """The estimate and interval kept in [0, 1], the score's range: an end past it is cut to it
    (the truth lies in [0, 1], so the cut interval covers whenever the uncut one does). An
    interval wholly outside [0, 1] (on a few draws one large Des Raj term of one sign can put it
    there) has no part left to cut to: the bounded-data floor, the Wilson interval at the
    clipped estimate over the n draws, stands in for a point or an inside-out interval."""
    if low >= 0 and high <= 1 and 0 <= value <= 1:
        return value, low, high, n, how
    clipped = float(np.clip(value, 0.0, 1.0))
    if high <= 0 or low >= 1:
        wilson_low, wilson_high = no_spread_ci(clipped, n, confidence=confidence)
        how += (
            f"; the interval [{low:.3f}, {high:.3f}] lies outside [0, 1] (unclipped estimate "
            f"{value:.3f}): Wilson interval at the clipped estimate over the {n} draws"
        )
        return clipped, float(wilson_low), float(wilson_high), n, how
    how += f", clipped to [0, 1] (unclipped {value:.3f})"
    return clipped, max(low, 0.0), min(high, 1.0), n, how


def _row(value, low, high, n, how) -> dict:
    return {"value": value, "ci_low": low, "ci_high": high, "n_items": n, "method": how}


_ORDERED = {
    "active": "model-assisted active estimate (Des Raj's ordered estimator with the model's "
    "predictions, stabilising weights)",
    "ht": "Horvitz-Thompson active estimate (Des Raj's ordered estimator, stabilising weights)",
}


def _terms(draws: pd.DataFrame, y: np.ndarray, pred: np.ndarray, method: str):
    """Each draw's z_t (Des Raj's term, unbiased for the benchmark's total given the draws
    before it) and its stabilising weight (fixed before the draw)."""
    q = draws["probability"].to_numpy(float)
    before = np.concatenate([[0.0], np.cumsum(y)[:-1]])
    rest = draws["remaining_prediction"].to_numpy(float) if method == "active" else 0.0
    z = before + rest + (y - pred) / q
    return z, draws["weight"].to_numpy(float)


def _anytime(plan: ActivePlan, y: np.ndarray, pred: np.ndarray, method: str, confidence: float):
    """The asymptotic confidence sequence of the weighted mean of the z_t (see
    :func:`jevalkit.stats.normal_mixture_radius`): sum_t h_t (z_t - total) is a martingale,
    its variance process estimated by sum_t h_t^2 (z_t - estimate)^2; the normal mixture is
    tuned at the plan's k draws (under the model each h_t^2 (z_t - total)^2 is 1 on average,
    so the variance process reaches about k at the k-th draw). Valid at every draw at once:
    a run may stop as soon as the interval is narrow enough.

    Two small-sample guards, each only widening it. The variance process is at least the one
    the model predicts for the draws, sum_t h_t^2 v_t (``active`` only; the recorded v_t are of
    its terms): a plan that has not yet drawn a rare surprise (a case the model is nearly sure
    of, drawn with a small probability) sees little spread, exactly when the interval needs its
    width. And the radius is stretched by the t quantile on n - 1 degrees of freedom over the
    normal one, as a fixed-time interval from n draws is. Without them, plans of 8 draws (one
    a wave) under a shuffled item model missed the truth at some wave in 35% of 80 seeded plans
    (tests/items/test_active.py), and at k = 12 on the benchmarks of ``bench_items.py`` the
    interval held at every wave's end in 83-93% of 180 plans (the runner's stop at a target of
    0.2: 89-97%)."""
    z, h = _terms(plan.draws, y, pred, method)
    n, n_total = z.size, plan.n_items
    how = f"{_ORDERED[method]} over {n} of {n_total} cases"
    total = float(np.sum(h * z) / h.sum())
    value = total / n_total
    if n < 2:
        return _row(value, np.nan, np.nan, n, how + "; one case: no interval")
    variance = float(np.sum(h**2 * (z - total) ** 2)) * n / (n - 1)
    model = float(np.sum(h**2 * _model_variance(plan.draws, method)))
    variance = max(variance, model)
    stretch = sps.t.ppf(0.5 + confidence / 2, n - 1) / sps.norm.ppf(0.5 + confidence / 2)
    radius = float(normal_mixture_radius(variance, tuned_at=plan.k, confidence=confidence))
    half = stretch * radius / float(h.sum()) / n_total
    low, high = value - half, value + half
    how += (
        f"; anytime-valid {confidence:.0%} interval (an asymptotic confidence sequence, normal "
        f"mixture tuned at the plan's {plan.k} draws; Waudby-Smith et al. 2024"
        + ("; variance at least the model's for the draws" if model > 0 else "")
        + f"; stretched by the t quantile on {n - 1} df): valid at every draw at once, so the "
        "plan may stop at a width it reached"
    )
    return _row(*_within_range(value, low, high, n, how, confidence))


def _ordered(draws: pd.DataFrame, y: np.ndarray, pred: np.ndarray, method: str):
    """Des Raj's ordered estimator (with predictions), stabilising weights: total, SE, the
    model's skewness, how, and the number of terms it rests on."""
    z, h = _terms(draws, y, pred, method)
    n = z.size
    total = float(np.sum(h * z) / h.sum())
    spread = float(np.sum(h**2 * (z - total) ** 2)) * n / max(n - 1, 1)
    # the variance is at least the one the model predicts for the draws (as the anytime
    # interval's): a plan that has not yet drawn a rare surprise sees too little spread
    model = float(np.sum(h**2 * _model_variance(draws, method)))
    se = float(np.sqrt(max(spread, model)) / h.sum())
    skewness = 0.0
    if method == "active":  # the estimate's skewness under the model: sum h^3 k3 / (sum h^2 v)^1.5
        third = float(np.sum(h**3 * draws["third_moment"].to_numpy(float)))
        if model > 0:
            skewness = third / model**1.5
    how = _ORDERED[method]
    how += "; variance at least the model's for the draws" if model > 0 else ""
    how += " (it binds)" if model > spread else ""
    return total, se, skewness, how, n, model > spread


def _model_variance(draws: pd.DataFrame, method: str) -> np.ndarray:
    """Each draw's variance of its term about the total under the model (given the draws
    before it): of the model-assisted term, or of the Horvitz-Thompson one (0 where a plan
    drawn before these were recorded lacks them)."""
    column = "variance" if method == "active" else "ht_variance"
    if column not in draws.columns:
        return np.zeros(len(draws))
    return np.nan_to_num(draws[column].to_numpy(float))


def _poisson(plan: ActivePlan, y: np.ndarray, pred: np.ndarray, method: str):
    """Each wave's difference (or HT) estimator of the total, combined with fixed weights."""
    draws = plan.draws
    wave_of = draws["wave"].to_numpy()
    pi = draws["probability"].to_numpy(float)
    total, var, before = 0.0, 0.0, 0.0
    for row in plan.waves.itertuples(index=False):
        mine = wave_of == row.wave
        r = y[mine] - pred[mine]
        rest = row.remaining_prediction if method == "active" else 0.0
        z = before + rest + float(np.sum(r / pi[mine]))
        total += row.weight * z
        var += row.weight**2 * float(np.sum((1 - pi[mine]) * r**2 / pi[mine] ** 2))
        before += float(y[mine].sum())
    # the weights are each wave's expected share of k: they sum to 1 over a complete plan
    waves = plan.waves
    share = float(waves["weight"].sum())
    skewness = 0.0
    how = (
        "model-assisted active estimate (difference estimator per Poisson wave)"
        if method == "active"
        else "Horvitz-Thompson active estimate (per Poisson wave)"
    )
    known = False
    if method == "active":  # the model's skewness of the combined estimate, as for draws
        w = waves["weight"].to_numpy(float)
        variance = float(np.sum(w**2 * waves["variance"].to_numpy(float)))
        if variance > 0:
            skewness = float(np.sum(w**3 * waves["third_moment"].to_numpy(float))) / variance**1.5
            # the variance at least the model's for the waves, as the fixed design's
            known = variance > var
            var = max(var, variance)
            how += "; variance at least the model's for the waves" + (
                " (it binds)" if known else ""
            )
    return total / share, float(np.sqrt(var)) / share, skewness, how, known
