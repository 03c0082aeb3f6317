"""The D-study: what a G-study's components imply for a planned design (the error of a mean, G
and Phi coefficients, the noise floor of two runs), by Brennan's (2001, ch. 4) rules.

A design gives the number of levels of each facet (a nested facet: per parent level) and
``repeats``, the observations per cell. A component counts toward an error when it involves a
random facet (one the claim generalises over) or is the residual, and is divided by the number of
levels of every facet it involves (the residual: by every observation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import estimator
from ..errors import StatsError
from ._gstudy import RESIDUAL, _closure, ems_vectors, expected_mean_squares


def _parse(table: pd.DataFrame, design: Mapping[str, int]):
    comps = [frozenset(f) for f in table["facets"] if len(f)]
    order = list(dict.fromkeys(f for s in table["facets"] for f in s))
    missing = [f for f in order if f not in design]
    if missing:
        raise StatsError(f"design has no size for facet(s) {missing}; give each facet a count")
    bad = {k: v for k, v in design.items() if int(v) < 1}
    if bad:
        raise StatsError(f"design sizes must be at least 1, got {bad}")
    has_residual = RESIDUAL in set(table["component"])
    reps = int(design.get("repeats", 1))
    if reps > 1 and not has_residual:
        raise StatsError(
            "the pilot had one observation per cell, so repeats cannot be planned: "
            "its residual is confounded with the top interaction"
        )
    variances = dict(zip(table["component"], table["variance"].astype(float), strict=True))
    by_set = {}
    for row in table.itertuples():
        by_set[frozenset(row.facets) if row.component != RESIDUAL else RESIDUAL] = row.variance
    return comps, order, reps, has_residual, variances, by_set


def _divisor(facets: Sequence[str], design: Mapping[str, int], order, reps: int) -> float:
    if facets == RESIDUAL:
        return float(np.prod([design[f] for f in order])) * reps
    return float(np.prod([design[f] for f in facets]))


@estimator(
    unit="design",
    estimand="error variance of the grand mean of a design",
    interval="Satterthwaite df",
    data="arrays",
    note="D-study arithmetic; pinned in tests/stats/test_gstudy.py",
)
def design_error(
    table: pd.DataFrame,
    design: Mapping[str, int],
    generalize: Sequence[str],
    *,
    nested: Mapping[str, str] | None = None,
) -> tuple[float, float]:
    """Variance of the grand mean of a planned balanced design, and its Satterthwaite degrees of
    freedom (from the expected mean squares at that design).

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> var, df = design_error(t, {"case": 50, "repeats": 4}, ["case"])
        >>> round(var, 5), round(df)
        (0.0018, 49)
    """
    nested = dict(nested or {})
    comps, order, reps, has_residual, _, by_set = _parse(table, design)
    keys = [*comps, RESIDUAL] if reps > 1 else list(comps)
    levels = {f: int(design[f]) for f in order}
    vec = ems_vectors(comps, keys, order, levels, reps)
    true = dict(by_set)
    ems = expected_mean_squares(comps, true, order, levels, reps)
    df = np.array(
        [_df(s, levels, nested) for s in comps]
        + ([_cells(levels) * (reps - 1)] if reps > 1 else [])
    )
    top = max(comps, key=len)
    folded = dict(true)
    if has_residual and reps == 1:  # one observation per cell: the residual joins the top effect
        folded[top] = true[top] + true[RESIDUAL]
        ems = expected_mean_squares(comps, folded, order, levels, reps)
    var = 0.0
    combo = np.zeros(len(keys))
    for s in comps:
        if set(s) & set(generalize) and true[s] > 0:
            var += true[s] / _divisor(tuple(s), design, order, reps)
            share = true[s] / folded[s]  # < 1 only for a top effect holding the residual
            combo += vec[s] / _divisor(tuple(s), design, order, reps) * share
    if has_residual and true[RESIDUAL] > 0:
        var += true[RESIDUAL] / _divisor(RESIDUAL, design, order, reps)
        if reps > 1:
            combo += vec[RESIDUAL] / _divisor(RESIDUAL, design, order, reps)
        else:  # its share of the top mean square
            combo += (
                vec[top] / _divisor(RESIDUAL, design, order, reps) * (true[RESIDUAL] / folded[top])
            )
    denom = np.sum((combo * ems) ** 2 / np.where(df > 0, df, np.inf))
    dof = float(np.sum(combo * ems) ** 2 / denom) if denom > 0 else np.inf
    return float(var), max(dof, 1.0)


def _cells(levels: Mapping[str, int]) -> float:
    return float(np.prod(list(levels.values())))


def _df(s: frozenset, levels: Mapping[str, int], nested: Mapping[str, str]) -> float:
    parents = {p for f in s for p in _closure(frozenset([f]), nested) if p != f}
    return float(np.prod([levels[f] if f in parents else levels[f] - 1 for f in s]))


@estimator(
    unit="design",
    estimand="G and Phi coefficients",
    interval="none (D-study coefficients)",
    data="arrays",
    note="pinned to Brennan (2001) in tests/stats/test_gstudy.py",
)
def g_coefficients(
    table: pd.DataFrame,
    design: Mapping[str, int],
    *,
    object: str,
    generalize: Sequence[str],
) -> dict[str, float]:
    """Generalizability (E rho^2) and dependability (Phi) coefficients for ``object`` (the facet
    being measured) over a design, by Brennan's rules: tau = components of the object with no
    random facet, delta = components of the object with one, Delta = every component with a
    random facet; each divided by the levels of its facets other than the object.

    Returns ``g``, ``phi``, ``tau``, ``delta``, ``Delta``.

    Example (Brennan 2001, synthetic data set No. 3, p x i x o, n_i = 4, n_o = 2):
        >>> t = pd.DataFrame({"component": ["p", "i", "o", "p x i", "p x o", "i x o", "p x i x o"],
        ...     "facets": [("p",), ("i",), ("o",), ("p", "i"), ("p", "o"), ("i", "o"), ("p", "i", "o")],
        ...     "variance": [0.5528, 0.4417, 0.0074, 0.5750, 0.1009, 0.1565, 0.9352]})
        >>> c = g_coefficients(t, {"p": 10, "i": 4, "o": 2}, object="p", generalize=["i", "o"])
        >>> round(c["g"], 2), round(c["phi"], 2)
        (0.64, 0.55)
    """
    comps, order, reps, has_residual, _, by_set = _parse(table, {**{object: 1}, **design})
    if object not in order:
        raise StatsError(f"object {object!r} is not a facet of these components: {order}")
    random = set(generalize) - {object}
    tau = delta = big_delta = 0.0
    for s in comps:
        divisor = float(np.prod([design[f] for f in s if f != object]))
        part = by_set[s] / divisor
        if object in s and not s & random:
            tau += part
        if object in s and s & random:
            delta += part
        if s & random:
            big_delta += part
    if has_residual:
        part = by_set[RESIDUAL] / (float(np.prod([design[f] for f in order if f != object])) * reps)
        delta += part
        big_delta += part
    g = tau / (tau + delta) if tau + delta > 0 else np.nan
    phi = tau / (tau + big_delta) if tau + big_delta > 0 else np.nan
    return {"g": g, "phi": phi, "tau": tau, "delta": delta, "Delta": big_delta}


@estimator(
    unit="design",
    estimand="the noise floor of two runs",
    interval="none (a threshold)",
    data="arrays",
    note="pinned in tests/stats/test_gstudy.py",
)
def noise_floor(
    table: pd.DataFrame,
    design: Mapping[str, int],
    *,
    redrawn: Sequence[str] = (),
    confidence: float = 0.95,
    nested: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """The smallest difference between the means of two single runs of one system on the same
    design levels (same cases, same variants) that exceeds their joint noise: the components
    re-drawn by a new run (the residual, and every component of a facet in ``redrawn``, e.g. a
    judge's samples) count twice; shared facets cancel.

    Returns ``noise_floor`` (t quantile x the SD of the difference), ``sd_difference``, ``df``,
    ``method``. Nothing redrawn varied (every repeat identical): ``noise_floor`` is NaN, "not
    estimable", never 0.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> round(noise_floor(t, {"case": 100, "repeats": 1})["noise_floor"], 3)
        0.125
    """
    var, df = design_error(table, design, list(redrawn), nested=nested)
    if not var > 0:
        return {
            "noise_floor": np.nan,
            "sd_difference": np.nan,
            "df": np.nan,
            "method": "not estimable: what a new run redraws never varied in the pilot",
        }
    sd = float(np.sqrt(2 * var))
    q = (
        float(sps.t.ppf(0.5 + confidence / 2, df))
        if np.isfinite(df)
        else float(sps.norm.ppf(0.5 + confidence / 2))
    )
    redraws = ", ".join(["repeats", *redrawn])
    return {
        "noise_floor": q * sd,
        "sd_difference": sd,
        "df": df,
        "method": f"t quantile x SD of the difference of two runs redrawing {redraws}",
    }
