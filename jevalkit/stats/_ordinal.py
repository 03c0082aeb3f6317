"""Are ordinal levels equally spaced? The evidence for averaging level numbers.

A mean of levels 0..L treats the step 0->1 like the step 3->4. An ordered logit model (statsmodels
``OrderedModel``) places the levels on a latent scale through thresholds tau_1 < ... < tau_L; if the
gaps between thresholds are equal, level numbers are a linear function of the latent scale and the
mean is a fair summary. We fit the thresholds freely and with equal gaps (tau_j = tau_1 + (j-1) d,
fitted by maximum likelihood here: statsmodels has no such option) and compare them with a
likelihood-ratio test on L - 2 degrees of freedom.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize
from scipy import stats as sps
from statsmodels.miscmodels.ordinal_model import OrderedModel

from ..contract import Result, estimator
from ..errors import StatsError


@dataclass(frozen=True)
class OrdinalSpacing(Result):
    """The spacing diagnostic: ``.table()`` is the thresholds (with ``method``),
    ``.scalars()`` the test's numbers and verdict.

    Attributes:
        thresholds: one row per threshold ``j-1/j``: ``flexible``, ``equidistant``, ``gap``
            (flexible tau_j - tau_{j-1}), ``equal_gap`` (the fitted d).
        lr_stat, df, p_value: likelihood-ratio test of flexible against equidistant thresholds.
        equal_spacing_plausible: p_value >= alpha.
        gap_ratio: largest / smallest flexible gap.
        verdict: one sentence to act on.
        n: ratings used.
        categories: the level set tested, lowest first (labels as given).
        merged: levels of the set that never occur: each is merged with its neighbours (its two
            thresholds cannot be told apart), and the test runs on the levels that occur.
        method: the models fitted and the test.

    Example:
        >>> r = ordinal_spacing(np.repeat([0, 1, 2, 3, 4], [30, 60, 80, 60, 30]))
        >>> r.table().columns.tolist()
        ['threshold', 'flexible', 'equidistant', 'gap', 'equal_gap', 'method']
        >>> r.scalars()["df"], r.scalars()["n"]
        (2, 260)
    """

    thresholds: pd.DataFrame
    lr_stat: float
    df: int
    p_value: float
    equal_spacing_plausible: bool
    gap_ratio: float
    verdict: str
    n: int
    categories: tuple = ()
    merged: tuple = ()
    method: str = ""

    def table(self) -> pd.DataFrame:
        """One row per threshold ``j-1/j``: ``threshold``, ``flexible``, ``equidistant``,
        ``gap``, ``equal_gap``, ``method``."""
        return self.thresholds.assign(method=self.method)


def _design(groups: ArrayLike | None, n: int) -> np.ndarray:
    if groups is None:
        return np.zeros((n, 0))
    dummies = pd.get_dummies(
        pd.Series(np.asarray(groups)).astype(str), drop_first=True, dtype=float
    )
    if len(dummies) != n:
        raise StatsError(f"groups has {len(dummies)} labels for {n} levels; give one per rating")
    return dummies.to_numpy()


def _equidistant_fit(
    y: np.ndarray, x: np.ndarray, n_thresholds: int, start: np.ndarray
) -> tuple[float, np.ndarray]:
    steps = np.arange(n_thresholds)

    def nll(params: np.ndarray) -> float:
        tau1, log_d, beta = params[0], params[1], params[2:]
        cuts = np.concatenate([[-np.inf], tau1 + np.exp(log_d) * steps, [np.inf]])
        xb = x @ beta if beta.size else 0.0
        p = sps.logistic.cdf(cuts[y + 1] - xb) - sps.logistic.cdf(cuts[y] - xb)
        return -float(np.sum(np.log(np.clip(p, 1e-300, None))))

    best = optimize.minimize(nll, start, method="BFGS")
    if not best.success:
        best = optimize.minimize(nll, best.x, method="Nelder-Mead", options={"maxiter": 20000})
    return -best.fun, best.x


def _quarter_levels(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The contract test's adapter input: scores in [0, 1] as levels 0..4, with their system."""
    scores = frame["score"].astype(float).to_numpy()
    return np.round(scores * 4).astype(int), frame["system"].to_numpy()


def _ordinal_spacing_adapter(frame: pd.DataFrame) -> OrdinalSpacing:
    return ordinal_spacing(*_quarter_levels(frame))


@estimator(
    unit="rating",
    estimand="the spacing of ordinal levels",
    interval="none (a likelihood-ratio test of equal spacing)",
    checks=("order", "rename", "one_case", "no_spread", "method"),
    adapter=_ordinal_spacing_adapter,
    note="pinned to statsmodels' OrderedModel in tests/stats",
)
def ordinal_spacing(
    levels: ArrayLike,
    groups: ArrayLike | None = None,
    *,
    categories: Iterable[int] | None = None,
    alpha: float = 0.05,
) -> OrdinalSpacing:
    """Test whether ordinal levels are equally spaced on the latent scale.

    Args:
        levels: the observed levels, one per rating (integers, any range: 1-10 grades are fine).
        groups: optional group per rating (model, evaluator), entered as covariates so that
            differences between groups are not mistaken for uneven spacing.
        categories: the full level set in order (``range(1, 11)`` for 1-10 grades); default: the
            integers from the lowest to the highest level observed. A level of the set that never
            occurs is merged with its neighbours and reported in ``merged`` (its thresholds
            cannot be estimated); the test runs on the levels that occur.
        alpha: the test's level.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> latent = rng.logistic(size=3000)
        >>> even = np.digitize(latent, [-1.5, -0.5, 0.5, 1.5])
        >>> ordinal_spacing(even).equal_spacing_plausible
        True
        >>> uneven = np.digitize(latent, [-3.0, -2.6, 0.0, 2.8])
        >>> ordinal_spacing(uneven).equal_spacing_plausible
        False
        >>> grades = np.digitize(latent, [-1.5, -0.5, 0.5, 1.5, 2.5]) + 1  # levels 1-6; 7 never used
        >>> ordinal_spacing(grades, categories=range(1, 8)).merged
        (7,)
    """
    y_raw = np.asarray(levels)
    if y_raw.size == 0 or np.isnan(y_raw.astype(float)).any():
        raise StatsError("levels must be non-empty integers without NaN")
    if not np.all(np.equal(np.mod(y_raw.astype(float), 1), 0)):
        raise StatsError("levels must be integers")
    observed = np.unique(y_raw.astype(int))
    if categories is None:
        grid = np.arange(observed.min(), observed.max() + 1)
    else:
        grid = np.asarray(list(categories))
        if grid.size < 2 or not np.all(np.equal(np.mod(grid.astype(float), 1), 0)):
            raise StatsError("categories must be at least two integer levels, lowest first")
        grid = grid.astype(int)
        if np.any(np.diff(grid) <= 0):
            raise StatsError("categories must be in increasing order without repeats")
        outside = np.setdiff1d(observed, grid)
        if outside.size:
            raise StatsError(f"levels {outside.tolist()} are not in categories {grid.tolist()}")
    merged = tuple(int(g) for g in grid if g not in set(observed.tolist()))
    codes = {int(v): i for i, v in enumerate(observed)}
    y = np.array([codes[int(v)] for v in y_raw.astype(int)])
    top = int(y.max())
    n_thresholds = top
    if n_thresholds < 3:
        raise StatsError(
            f"{top + 1} levels occur, giving {n_thresholds} threshold(s); spacing can be tested "
            "from 4 levels that occur"
        )
    x = _design(groups, y.size)
    endog = pd.Series(pd.Categorical(y, categories=range(top + 1), ordered=True))
    model = OrderedModel(endog, x, distr="logit")
    flex = model.fit(method="bfgs", disp=False, maxiter=2000)
    k = x.shape[1]
    taus = model.transform_threshold_params(flex.params)[1:-1]
    gaps = np.diff(taus)
    start = np.concatenate([[taus[0], np.log(max(gaps.mean(), 1e-3))], flex.params[:k]])
    ll_eq, eq_params = _equidistant_fit(y, x, n_thresholds, start)
    eq_taus = eq_params[0] + np.exp(eq_params[1]) * np.arange(n_thresholds)
    lr = max(0.0, 2.0 * (flex.llf - ll_eq))
    df = n_thresholds - 2
    p = float(sps.chi2.sf(lr, df))
    ratio = float(gaps.max() / gaps.min())
    plausible = p >= alpha
    if plausible:
        verdict = f"Equal spacing fits (likelihood-ratio p = {p:.3g}): the mean of levels is a fair summary."
    else:
        verdict = (
            f"Levels are unevenly spaced (likelihood-ratio p = {p:.3g}; the largest gap is "
            f"{ratio:.1f}x the smallest): report the level distribution or an ordinal model "
            "alongside the mean, and do not compare means across rubrics."
        )
    if merged:
        verdict += f" Levels {list(merged)} never occur and were merged with their neighbours."
    table = pd.DataFrame(
        {
            "threshold": [f"{observed[j]}/{observed[j + 1]}" for j in range(n_thresholds)],
            "flexible": taus,
            "equidistant": eq_taus,
            "gap": np.concatenate([[np.nan], gaps]),
            "equal_gap": np.concatenate(
                [[np.nan], np.full(n_thresholds - 1, np.exp(eq_params[1]))]
            ),
        }
    )
    method = (
        f"ordered logit (statsmodels OrderedModel) with free thresholds against equal gaps, "
        f"likelihood-ratio test on {df} df over {int(y.size)} ratings"
        + (", groups as covariates" if groups is not None else "")
        + "; no interval"
    )
    return OrdinalSpacing(
        table,
        float(lr),
        df,
        p,
        plausible,
        ratio,
        verdict,
        int(y.size),
        tuple(int(g) for g in grid),
        merged,
        method,
    )
