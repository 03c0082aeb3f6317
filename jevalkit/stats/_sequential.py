"""Anytime-valid intervals for the mean over cases of each case's expected score.

Adaptive repeats look at the data after every round and decide how many more repeats to send,
to which cases, and when to stop. A fixed-sample interval computed at such a data-dependent
moment does not cover at its nominal rate: every look is another chance to stop on a lucky
streak. A *confidence sequence* covers the truth at every moment at once, so it stays valid
whatever the stopping rule.

Design. The data come in *sweeps*: one score per case, every case. The estimand is
theta = mean_i p_i, p_i being case i's expected score in [0, 1] (its pass probability), for *these*
cases: what the run's headline would converge to with unlimited repeats. (Repeats cannot narrow
between-case variation; the case-clustered intervals of :mod:`jevalkit.metrics` answer the
question about other cases.) A sweep may skip a *settled* case (one whose scores so far barely
vary) with a predictable probability: it is then sent with probability pi_i and enters as the
inverse-probability pseudo-score z_i = c_i + 1[sent] (x_i - c_i) / pi_i, where c_i is the case's
running mean before the sweep. E[z_i | past] = p_i, so every sweep is an unbiased look at theta
while settled cases cost pi_i requests instead of one.

The bound is the predictable-plug-in empirical-Bernstein confidence sequence (Waudby-Smith &
Ramdas 2024, "Estimating means of bounded random variables by betting", JRSS-B 86(1), Theorem 2;
Howard et al. 2021, Ann. Statist. 49(2), Theorem 4), written for unequal ranges: for a bet
lambda >= 0 and a predictable centre c with z - c >= -m,
E exp(lambda (z - p) - psi(lambda m) (z - c)^2 / m^2) <= 1, psi(g) = -log(1 - g) - g (Fan et al.
2015), so the product over the stream is a non-negative supermartingale and Ville's inequality
bounds it by 1/alpha for all time at once. Each sweep uses one bet for every case (chosen before
the sweep, capped at lambda m < 1/2), so the weighted mean of the p's it covers is exactly theta;
the lower and upper bounds each take alpha/2. Sweeps with an error in a sent case are left out
(valid when errors do not depend on what the answer would have scored).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..contract import estimator, not_a_statistic
from ..errors import StatsError

TRUNCATION = 0.5
_COLUMNS = [
    "n_cases",
    "n_sweeps",
    "n_scores",
    "estimate",
    "ci_low",
    "ci_high",
    "half_width",
    "method",
]


def _psi(g: np.ndarray | float) -> np.ndarray | float:
    return -np.log1p(-g) - g


def _sweeps(frame: pd.DataFrame) -> np.ndarray:
    """The contract test's adapter input: one system's scores as sweeps (repeats) x cases."""
    first = frame[frame["system"] == sorted(frame["system"].unique())[0]]
    wide = first.pivot_table(index="repeat", columns="case_id", values="score", aggfunc="first")
    return wide.to_numpy(float)


def _fed(sweeps: np.ndarray) -> SweepSequence:
    seq = SweepSequence(sweeps.shape[1])
    for sweep in sweeps:
        seq.add_sweep(sweep)
    return seq


@estimator(
    unit="case",
    estimand="the mean over cases of each case's expected score, at every sweep",
    interval="anytime-valid confidence sequence (betting)",
    checks=("order", "rename", "scale", "no_spread"),
    adapter=lambda frame: _fed(_sweeps(frame)).table(),
    note="the adaptive runner's stopping rule; calibrated by benchmarks/bench_adaptive.py",
)
class SweepSequence:
    """A confidence sequence for the mean over cases of each case's expected score in [0, 1].

    Feed it sweeps (one score per case, or a skip for a case that was not sent) with
    :meth:`add_sweep`; ask for the interval after any sweep with :meth:`interval`. The interval
    is valid at every sweep simultaneously, so a run may stop whenever it likes. The module
    docstring gives the method and its references.

    Args:
        n_cases: the number of cases.
        confidence: coverage, simultaneous over all sweeps.
        horizon: the most sweeps the run may take; bets are tuned to be tightest by then.
        target_half_width: the width the run stops at; bets are tuned for the sweeps it needs.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> p = np.array([0.1, 0.5, 0.9, 0.95])
        >>> seq = SweepSequence(4)
        >>> for _ in range(200):
        ...     seq.add_sweep((rng.random(4) < p).astype(float))
        >>> low, high = seq.interval()
        >>> bool(low < p.mean() < high), bool(high - low < 0.2)
        (True, True)
    """

    def __init__(
        self,
        n_cases: int,
        *,
        confidence: float = 0.95,
        horizon: int | None = None,
        target_half_width: float | None = None,
    ) -> None:
        if isinstance(n_cases, bool) or not isinstance(n_cases, int) or n_cases < 1:
            raise StatsError(f"n_cases must be a whole number of at least 1, got {n_cases!r}")
        if not 0 < confidence < 1:
            raise StatsError(f"confidence must be between 0 and 1, got {confidence!r}")
        if horizon is not None and (
            isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1
        ):
            raise StatsError(f"horizon must be a whole number of sweeps, got {horizon!r}")
        self.horizon = horizon
        self.target_half_width = target_half_width
        self.n_cases = n_cases
        self.alpha = 1.0 - confidence
        self.n_sweeps = 0
        self.n = np.zeros(n_cases, dtype=int)  # scores seen per case
        self.total = np.zeros(n_cases)
        self._sq = np.full(n_cases, 0.25)  # squared residuals, with a prior of 1/4
        self._count = 1  # pseudo-scores seen (plus the prior's one)
        self._pooled_sq = 0.25 * n_cases  # squared residuals summed over a sweep, prior 1/4 each
        self._weight = 0.0  # sum of bets times cases
        self._sum = {"low": 0.0, "high": 0.0}  # sum of bet * pseudo-score
        self._penalty = {"low": 0.0, "high": 0.0}
        self._bets = {"low": 0.0, "high": 0.0}
        self._side_weight = {"low": 0.0, "high": 0.0}

    def centres(self) -> np.ndarray:
        """Each case's running mean with a prior of 1/2 (the predictable centre)."""
        return (0.5 + self.total) / (self.n + 1)

    def case_variance(self) -> np.ndarray:
        """Each case's running variance of its scores (the prior 1/4 counted as one score)."""
        return self._sq / (self.n + 1)

    def add_sweep(self, scores: ArrayLike, sent_probability: ArrayLike | None = None) -> None:
        """One sweep: a score in [0, 1] per case, NaN for a case the sweep did not send.

        ``sent_probability`` is the probability each case had of being sent, fixed before the
        sweep's draws (default 1: every case sent, no NaN allowed).
        """
        x = np.asarray(scores, dtype=float)
        pi = (
            np.ones(self.n_cases)
            if sent_probability is None
            else np.asarray(sent_probability, dtype=float)
        )
        if x.shape != (self.n_cases,) or pi.shape != (self.n_cases,):
            raise StatsError(f"a sweep has one score per case ({self.n_cases})")
        if np.any((pi <= 0) | (pi > 1)):
            raise StatsError("sent probabilities must lie in (0, 1]")
        sent = ~np.isnan(x)
        if np.any(~sent & (pi >= 1)):
            raise StatsError("a case sent with probability 1 has no score in this sweep")
        if np.any((x[sent] < 0) | (x[sent] > 1)):
            raise StatsError(
                f"scores must lie in [0, 1]: {float(x[sent][(x[sent] < 0) | (x[sent] > 1)][0]):g} "
                "is outside; give normalised scores (pass/fail as 1/0)"
            )
        c = self.centres()
        z = c.copy()
        z[sent] = c[sent] + (x[sent] - c[sent]) / pi[sent]
        # how far a pseudo-score can fall below / rise above its centre (known before the sweep)
        below = np.maximum(c / pi, 1e-12)
        above = np.maximum((1.0 - c) / pi, 1e-12)
        variance = self._pooled_sq / self._count
        t = self._count
        for side, reach in (("low", below), ("high", above)):
            scale = self._tuning(variance, t)
            bet = math.sqrt(2.0 * math.log(2.0 / self.alpha) / (variance * scale))
            bet = min(bet, TRUNCATION / float(reach.max()))
            self._bets[side] = bet
            self._sum[side] += bet * float(z.sum())
            self._side_weight[side] += bet * self.n_cases
            self._penalty[side] += float(np.sum(_psi(bet * reach) * ((z - c) / reach) ** 2))
        # update the running statistics after the sweep
        self._pooled_sq += float(np.sum((z - c) ** 2))
        self._count += 1
        self.n_sweeps += 1
        self.n[sent] += 1
        self.total[sent] += x[sent]
        new_c = self.centres()
        self._sq[sent] += (x[sent] - new_c[sent]) ** 2

    def _tuning(self, variance: float, t: int) -> float:
        """The sweep count the next bet is tuned for (any predictable choice keeps validity):
        the sweeps the target needs at the variance seen so far, within [t, horizon]; else the
        horizon; else the anytime schedule t log(1 + t)."""
        if self.target_half_width:
            needed = (
                2
                * math.log(2.0 / self.alpha)
                * variance
                / (self.n_cases * self.target_half_width) ** 2
            )
            return float(min(max(needed, t), self.horizon or math.inf))
        if self.horizon:
            return float(self.horizon)
        return t * math.log1p(t)

    def estimate(self) -> float:
        """The mean over cases of each case's mean score (a case without scores counts 0.5)."""
        means = np.divide(self.total, self.n, out=np.full(self.n_cases, 0.5), where=self.n > 0)
        return float(means.mean())

    def interval(self) -> tuple[float, float]:
        """The interval of the mean over cases, valid at this and every other sweep."""
        if self.n_sweeps == 0:
            return 0.0, 1.0
        bound = math.log(2.0 / self.alpha)
        w_low, w_high = self._side_weight["low"], self._side_weight["high"]
        low = (self._sum["low"] - bound - self._penalty["low"]) / w_low if w_low > 0 else 0.0
        high = (self._sum["high"] + bound + self._penalty["high"]) / w_high if w_high > 0 else 1.0
        return max(0.0, low), min(1.0, high)

    @property
    def method(self) -> str:
        """The ``method`` text of this interval.

        Example:
            >>> SweepSequence(3).method[:30]
            'anytime-valid 95% confidence s'
        """
        return (
            f"anytime-valid {1 - self.alpha:.0%} confidence sequence (empirical Bernstein, "
            f"Waudby-Smith & Ramdas 2024) for the mean over these {self.n_cases} case(s)"
        )

    def table(self) -> pd.DataFrame:
        """The interval after the sweeps so far, one row: ``n_cases``, ``n_sweeps``,
        ``n_scores``, ``estimate`` (mean of case means), ``ci_low``, ``ci_high``,
        ``half_width``, ``method``.

        Example:
            >>> seq = SweepSequence(2)
            >>> seq.add_sweep([1.0, 0.0])
            >>> seq.table()[["n_sweeps", "n_scores", "estimate"]].values.tolist()
            [[1.0, 2.0, 0.5]]
        """
        low, high = self.interval()
        row = {
            "n_cases": self.n_cases,
            "n_sweeps": self.n_sweeps,
            "n_scores": int(self.n.sum()),
            "estimate": self.estimate(),
            "ci_low": low,
            "ci_high": high,
            "half_width": (high - low) / 2,
            "method": self.method,
        }
        return pd.DataFrame([row], columns=_COLUMNS)


def _confidence_sequence_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return confidence_sequence(_sweeps(frame))


@estimator(
    unit="value",
    estimand="a running mean, valid at every look",
    interval="anytime-valid confidence sequence",
    checks=("order", "rename", "scale", "no_spread"),
    adapter=_confidence_sequence_adapter,
    note="calibrated by benchmarks/bench_adaptive.py",
)
def confidence_sequence(scores: ArrayLike, *, confidence: float = 0.95) -> pd.DataFrame:
    """The anytime-valid interval of the mean over cases of each case's expected score.

    ``scores``: a sweeps x cases array of scores in [0, 1] (pass/fail as 1/0), in the order the
    sweeps were run; one case is a 1-D array. Unlike a fixed-sample interval it stays valid when
    the number of repeats was decided by looking at the data (adaptive repeats stopping once the
    interval is narrow). See :class:`SweepSequence`.

    Returns:
        One row: ``n_cases``, ``n_sweeps``, ``n_scores``, ``estimate`` (mean of case means),
        ``ci_low``, ``ci_high``, ``half_width``, ``method``.

    Example:
        >>> row = confidence_sequence([1, 0, 1, 1, 0, 1, 1, 1] * 25).iloc[0]
        >>> int(row["n_scores"]), float(row["estimate"]), bool(row["ci_low"] < 0.75 < row["ci_high"])
        (200, 0.75, True)
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.size == 0:
        raise StatsError("confidence_sequence needs a non-empty sweeps x cases array of scores")
    if np.isnan(x).any():
        raise StatsError("scores must not be missing (NaN); drop the sweeps with errors first")
    seq = SweepSequence(x.shape[1], confidence=confidence)
    for sweep in x:
        seq.add_sweep(sweep)
    return seq.table()


@not_a_statistic(
    "a boundary: how far a martingale may stray at every time at once, not an estimate"
)
def normal_mixture_radius(
    variance: ArrayLike, *, tuned_at: float, confidence: float = 0.95
) -> np.ndarray:
    """The two-sided normal-mixture boundary: a martingale S_t with variance process V_t stays
    within +/- this radius of 0 at every t at once with probability ``confidence``.

    radius(V) = sqrt((V + rho) (log(1 + V / rho) + 2 log(1 / alpha))), the crossing boundary of
    Robbins' (1970) normal mixture of exponential martingales (mixture variance rho; Howard,
    Ramdas, McAuliffe & Sekhon 2021, Ann. Statist. 49(2), for sub-Gaussian martingales), exact
    for Gaussian increments. With V_t estimated from the data it is an asymptotic confidence
    sequence (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas 2024, "Time-uniform central limit
    theory and asymptotic confidence sequences", Ann. Statist. 52(6); their martingale form
    allows changing variances): the time-uniform analogue of the CLT interval, so a run may
    stop whenever the interval is narrow enough.
    rho = tuned_at / (2 log(1 / alpha) + log(1 + 2 log(1 / alpha))) makes the radius tightest
    at V = ``tuned_at``, where it is 1.55 times the fixed-time normal interval's at 95%.
    Pinned in tests/stats/test_sequential.py to the reference values of confseq (Howard's
    implementation): radius 30.35209 at V = 100 tuned at 100, alpha = 0.05.

    Args:
        variance: V_t, the martingale's (estimated) variance so far, one value or many.
        tuned_at: the variance at which the radius is to be tightest (e.g. the horizon's).
        confidence: simultaneous over all times.

    Example:
        >>> float(normal_mixture_radius(100.0, tuned_at=100.0).round(5))
        30.35209
        >>> r = normal_mixture_radius([25.0, 100.0, 400.0], tuned_at=100.0)
        >>> bool(r[1] / 10 < r[0] / 5 and r[1] / 10 < r[2] / 20)  # tightest per SD at 100
        True
    """
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence!r}")
    if not tuned_at > 0:
        raise StatsError(f"tuned_at must be a positive variance, got {tuned_at!r}")
    v = np.asarray(variance, dtype=float)
    if np.any(v < 0) or np.any(np.isnan(v)):
        raise StatsError("variance must be a number of at least 0")
    log_inv = math.log(1.0 / (1.0 - confidence))
    rho = tuned_at / (2.0 * log_inv + math.log1p(2.0 * log_inv))
    return np.sqrt((v + rho) * (np.log1p(v / rho) + 2.0 * log_inv))
