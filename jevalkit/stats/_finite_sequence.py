"""Anytime-valid intervals for the mean of a finite population sampled without replacement.

A benchmark's N cases are a finite population. Drawn in a random order (a seeded permutation),
the first t of them are a simple random sample without replacement, and the mean of all N (what
a run of every case would report) is known exactly once t = N. A *confidence sequence* for that
mean holds at every t at once, so a design may look after every draw and stop whenever it likes
(a race stops sending cases to a system once its place is certain).

The bound is the predictable-mixture confidence sequence for sampling without replacement
(Waudby-Smith & Ramdas 2020, "Confidence sequences for sampling without replacement", NeurIPS
33, Theorems 2 and 3), in two forms (``method``):

- ``empirical_bernstein`` (default): for values in [0, 1] with mean mu, draw i has conditional
  mean m_i = (N mu - S_{i-1}) / (N - i + 1) given the draws before it (S: their sum), so for
  bets 0 <= lambda_i < 1 chosen before the draw,
  prod_i exp(lambda_i (x_i - m_i) - psi(lambda_i) (x_i - xbar_{i-1})^2), psi(l) = -log(1 - l) - l,
  is a non-negative supermartingale (Fan et al. 2015's inequality, as in Howard et al. 2021,
  Theorem 4), and Ville's inequality bounds it by 1/alpha at every t at once. Solving for mu:

      lower_t = [sum lambda_i (x_i + S_{i-1}/(N-i+1)) - log(1/alpha) - sum psi_i v_i]
                / sum lambda_i (1 + (i-1)/(N-i+1)),

  the bets those of Waudby-Smith & Ramdas (2024, JRSS-B 86(1), eq. 26: tuned to the running
  variance, lambda_t ~ 1/sqrt(t log t), capped at 1/2); the upper bound is the lower bound of
  1 - x; each side takes alpha/2. It narrows with the spread of the values (paired differences
  of similar systems are mostly 0).
- ``hoeffding``: the same with v_i = 1 and psi(l) = l^2 / 8 (Hoeffding's lemma): the
  anytime-valid form of the bound of Maron & Moore's Hoeffding races, the baseline.

The interval is then intersected with itself over time (every interval of a confidence
sequence holds at once) and with the *logical* bounds: the drawn values are known and the others
lie in [0, 1], so mu lies in [S_t / N, (S_t + N - t) / N]; at t = N the mean is exact.

A value that is unknown (a system errored, or a budget left the case unsent) enters as an
interval: the lower side reads its least possible value, the upper side its greatest. The
supermartingale still holds for the true mean (the least value is at most the true one, and the
draw order does not depend on which values are unknown), so the sequence stays valid whatever
caused the gap; it is only wider.

Pinned in ``tests/stats/test_finite_sequence.py`` to confseq 0.0.11's ``predmix`` functions
(Howard and Waudby-Smith's implementation) on the same draws.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..contract import estimator, finish
from ..errors import StatsError

FINITE_METHODS = ("empirical_bernstein", "hoeffding")
TRUNCATION = {"empirical_bernstein": 0.5, "hoeffding": 1.0}  # confseq's defaults
_COLUMNS = ["n", "population", "estimate", "ci_low", "ci_high", "method"]


def _first_system(frame: pd.DataFrame) -> np.ndarray:
    """The contract test's adapter input: the first system's repeat-0 scores by case."""
    first = frame[frame["system"] == sorted(frame["system"].unique())[0]]
    first = first[first["repeat"] == 0].sort_values("case_id")
    return first["score"].to_numpy(float)


def _fed(scores: np.ndarray) -> pd.DataFrame:
    seq = FiniteSequences(1, population=len(scores))
    for x in scores:
        seq.add(np.array([x]))
    return seq.table()


@estimator(
    unit="value",
    estimand="the mean of a finite population (all N cases), at every draw without replacement",
    interval="anytime-valid confidence sequence without replacement (predictable mixture)",
    checks=("order", "rename", "scale", "no_spread"),
    adapter=lambda frame: _fed(_first_system(frame)),
    note="the race's pairwise intervals (metrics.Race); pinned to confseq's predmix; the "
    "race's family-wise error simulated in benchmarks/bench_race.py",
)
class FiniteSequences:
    """Confidence sequences for the means of several finite populations of ``population``
    values in [0, 1], each sampled without replacement in the same random order (the module
    docstring gives the method): one *stream* per population, e.g. one per pair of systems in
    a race, each drawing only while it is still followed.

    Feed it with :meth:`add` (a value per stream, for the streams that drew); ask for the
    intervals after any draw with :meth:`interval`. Every interval holds at every draw at once
    with probability ``confidence`` (per stream: a family of streams needs a union bound, as
    :class:`jevalkit.metrics.Race` takes).

    Args:
        n_streams: how many populations.
        population: N, the values in each (a stream draws at most N times).
        confidence: of each stream's sequence, over all its draws at once.
        method: ``empirical_bernstein`` or ``hoeffding``.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> values = (rng.random(200) < 0.3).astype(float)
        >>> seq = FiniteSequences(1, population=200)
        >>> for x in rng.permutation(values)[:120]:
        ...     seq.add(np.array([x]))
        >>> low, high = seq.interval()
        >>> bool(low[0] < values.mean() < high[0]), bool(high[0] - low[0] < 0.2)
        (True, True)
    """

    def __init__(
        self,
        n_streams: int,
        *,
        population: int,
        confidence: float = 0.95,
        method: str = "empirical_bernstein",
    ) -> None:
        for name, value in (("n_streams", n_streams), ("population", population)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise StatsError(f"{name} must be a whole number of at least 1, got {value!r}")
        if not 0 < confidence < 1:
            raise StatsError(f"confidence must be between 0 and 1, got {confidence!r}")
        if method not in FINITE_METHODS:
            raise StatsError(f"method must be one of {', '.join(FINITE_METHODS)}, got {method!r}")
        self.n_streams, self.population = int(n_streams), int(population)
        self.confidence, self.method_name = float(confidence), method
        self.log_inv = math.log(2.0 / (1.0 - confidence))  # each side takes alpha / 2
        k = self.n_streams
        self.t = np.zeros(k, dtype=int)
        self.drawn = np.zeros(k)  # sum of the values' midpoints (the estimate)
        # per side: the values read (low: the least, high: 1 - the greatest) and the sums
        self._sum = {s: np.zeros(k) for s in ("low", "high")}
        self._sq = {s: np.zeros(k) for s in ("low", "high")}  # regularized squared residuals
        self._num = {s: np.zeros(k) for s in ("low", "high")}
        self._den = {s: np.zeros(k) for s in ("low", "high")}
        self._pen = {s: np.zeros(k) for s in ("low", "high")}
        self._best = {s: np.zeros(k) for s in ("low", "high")}  # running intersection

    def add(
        self, low: ArrayLike, high: ArrayLike | None = None, mask: ArrayLike | None = None
    ) -> None:
        """One draw of each stream in ``mask`` (default: all): its value, or (``low``,
        ``high``) bounds on an unknown one; the other streams do not draw."""
        lo = np.asarray(low, dtype=float)
        hi = lo if high is None else np.asarray(high, dtype=float)
        on = np.ones(self.n_streams, bool) if mask is None else np.asarray(mask, dtype=bool)
        if lo.shape != (self.n_streams,) or hi.shape != lo.shape or on.shape != lo.shape:
            raise StatsError(f"a draw has one value per stream ({self.n_streams})")
        lo, hi = lo[on], hi[on]
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise StatsError("a value is missing (NaN): give its bounds as low and high")
        outside = (lo < 0) | (hi > 1) | (lo > hi)
        if outside.any():
            bad = float(np.where((lo < 0) | (lo > hi), lo, hi)[outside][0])
            raise StatsError(
                f"values must lie in [0, 1] with low <= high: {bad:g} is outside; give "
                "normalised scores (pass/fail as 1/0)"
            )
        if np.any(self.t[on] >= self.population):
            raise StatsError(f"a stream drew more than its population of {self.population} values")
        t = self.t[on] + 1
        remaining = self.population - t + 1
        for side, x in (("low", lo), ("high", 1.0 - hi)):
            total = self._sum[side][on]
            # the bet and its variance weight, from the draws before this one (confseq's
            # lambda_predmix_eb / predmix_empbern_lower_cs, or the Hoeffding bet)
            if self.method_name == "empirical_bernstein":
                sigma2 = (0.25 + self._sq[side][on]) / t  # prior variance 1/4, one fake draw
                bet = np.sqrt(2 * self.log_inv / (t * np.log1p(t) * sigma2))
                bet = np.minimum(bet, TRUNCATION["empirical_bernstein"])
                before = np.where(t > 1, total / np.maximum(t - 1, 1), 0.0)
                penalty = (x - before) ** 2 * (-np.log1p(-bet) - bet)
            else:
                bet = np.minimum(np.sqrt(8 * self.log_inv / (t * np.log1p(t))), 1.0)
                penalty = bet**2 / 8
            self._num[side][on] += bet * (x + total / remaining)
            self._den[side][on] += bet * (1 + (t - 1) / remaining)
            self._pen[side][on] += penalty
            total = total + x
            self._sum[side][on] = total
            mean = np.minimum((0.5 + total) / (t + 1), 1.0)
            self._sq[side][on] += (x - mean) ** 2
            bound = (self._num[side][on] - self.log_inv - self._pen[side][on]) / self._den[side][on]
            self._best[side][on] = np.maximum(self._best[side][on], np.maximum(bound, 0.0))
        self.drawn[on] += (lo + hi) / 2
        self.t[on] = t

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """Each stream's interval of its population mean, valid at this and every other draw:
        the sequence's running intersection within the logical bounds (no draw: [0, 1])."""
        n = self.population
        logical_low = self._sum["low"] / n
        logical_high = 1.0 - self._sum["high"] / n  # (sum of highs + unseen) / N
        low = np.maximum(self._best["low"], logical_low)
        high = np.minimum(1.0 - self._best["high"], logical_high)
        # an empty intersection happens only off the coverage event: keep the logical bounds
        empty = low > high
        low[empty], high[empty] = logical_low[empty], logical_high[empty]
        return low, high

    def estimate(self) -> np.ndarray:
        """Each stream's mean of its draws (unknown values at their midpoint; NaN: no draw)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.t > 0, self.drawn / np.maximum(self.t, 1), np.nan)

    @property
    def kind(self) -> str:
        """The bound's name (``empirical Bernstein`` or ``Hoeffding``)."""
        return "empirical Bernstein" if self.method_name == "empirical_bernstein" else "Hoeffding"

    @property
    def method(self) -> str:
        """The ``method`` text of these intervals.

        Example:
            >>> FiniteSequences(1, population=9).method[:38]
            'anytime-valid 95% confidence sequence '
        """
        return (
            f"anytime-valid {100 * self.confidence:.6g}% confidence sequence ({self.kind}, "
            "predictable mixture, without replacement: Waudby-Smith & Ramdas 2020) for the mean "
            f"of all {self.population} value(s)"
        )

    def table(self) -> pd.DataFrame:
        """One row per stream: ``n`` (draws), ``population``, ``estimate`` (mean of the
        draws), ``ci_low``, ``ci_high`` and ``method``; a mean known exactly (every value
        drawn, none unknown) has no interval (NaN), ``method`` saying so.

        Example:
            >>> seq = FiniteSequences(2, population=2)
            >>> seq.add([1.0, 0.0])
            >>> seq.table()[["n", "estimate", "ci_low", "ci_high"]].values.tolist()
            [[1.0, 1.0, 0.5, 1.0], [1.0, 0.0, 0.0, 0.5]]
        """
        low, high = self.interval()
        exact = high - low <= 1e-12
        method = np.where(
            exact,
            f"every one of the {self.population} value(s) drawn: the mean is known exactly "
            "(no interval)",
            self.method,
        )
        return finish(
            {
                "n": self.t,
                "population": self.population,
                "estimate": self.estimate(),
                "ci_low": np.where(exact, np.nan, low),
                "ci_high": np.where(exact, np.nan, high),
                "method": method,
            },
            order=_COLUMNS,
            estimate="estimate",
        )


def _one_stream(frame: pd.DataFrame) -> pd.DataFrame:
    scores = _first_system(frame)
    return finite_confidence_sequence(scores, population=len(scores)).tail(1)


@estimator(
    unit="value",
    estimand="the mean of a finite population (all N cases), at every draw without replacement",
    interval="anytime-valid confidence sequence without replacement (predictable mixture)",
    checks=("order", "rename", "scale", "no_spread"),
    adapter=_one_stream,
    note="FiniteSequences for one population, a row per draw; pinned to confseq's predmix",
)
def finite_confidence_sequence(
    scores: ArrayLike,
    *,
    population: int,
    confidence: float = 0.95,
    method: str = "empirical_bernstein",
) -> pd.DataFrame:
    """The anytime-valid interval of the mean of a population of ``population`` values in
    [0, 1] after each of ``scores``, drawn from it without replacement in random order (see
    :class:`FiniteSequences`). Unlike a fixed-sample interval it stays valid when the number of
    draws was decided by looking at them, and it closes on the exact mean as the draws reach
    the whole population.

    Returns:
        One row per draw: ``n``, ``population``, ``estimate`` (mean of the draws so far),
        ``ci_low``, ``ci_high``, ``method`` (NaN interval once the mean is known exactly).

    Example:
        >>> rows = finite_confidence_sequence([1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 4, population=40)
        >>> last = rows.iloc[-1]
        >>> int(last["n"]), float(last["estimate"]), bool(np.isnan(last["ci_low"]))
        (40, 0.7, True)
        >>> bool(rows.iloc[29]["ci_low"] < 0.7 < rows.iloc[29]["ci_high"])
        True
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise StatsError("finite_confidence_sequence needs a non-empty 1-D array of scores")
    if np.isnan(x).any():
        raise StatsError("scores must not be missing (NaN): give the draws that were scored")
    if isinstance(population, bool) or not isinstance(population, int | np.integer):
        raise StatsError(f"population must be a whole number, got {population!r}")
    if x.size > population:
        raise StatsError(
            f"{x.size} draws without replacement from a population of {population}: the "
            "population is every case that could be drawn (at least the draws)"
        )
    seq = FiniteSequences(1, population=int(population), confidence=confidence, method=method)
    tables = []
    for value in x:
        seq.add(np.array([value]))
        tables.append(seq.table())
    return pd.concat(tables, ignore_index=True)
