"""The D-study arithmetic: what a G-study's components imply for a planned design, by Brennan's
(2001, ch. 4) rules, and the expected-mean-squares algebra the G-study's ANOVA fit shares.

A design gives the number of levels of each facet (a nested facet: per parent level) and
``repeats``, the observations per cell. A component counts toward an error when it involves a
random facet (one the claim generalises over) or is the residual, and is divided by the number of
levels of every facet it involves (the residual: by every observation). The public face is
:meth:`jevalkit.stats.GStudy.error_variance`; the coefficients, noise floors and designs built on
it are :mod:`jevalkit.metrics`' (``reliability``, ``run_noise_floor``, ``choose_design``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..errors import StatsError

RESIDUAL = "residual"
Key = frozenset[str] | str  # a variance component: the set of its facets, or RESIDUAL


def closure(facets: frozenset[str], nested: Mapping[str, str]) -> frozenset[str]:
    out = set(facets)
    changed = True
    while changed:
        changed = False
        for f in list(out):
            parent = nested.get(f)
            if parent is not None and parent not in out:
                out.add(parent)
                changed = True
    return frozenset(out)


def ems_vectors(
    comps: Sequence[frozenset[str]],
    keys: Sequence,
    order: Sequence[str],
    levels: Mapping[str, float],
    reps: int,
) -> dict:
    """Each component's ANOVA estimator as coefficients on the mean squares (in ``keys`` order:
    the components, then the residual when ``reps`` > 1), for a balanced design with these
    ``levels`` (per parent level for nested facets) and ``reps`` observations per cell.

    E MS(s) = sigma2_e + sum over effects u containing s of c(u) sigma2_u, with c(u) the number
    of observations at a level of u; solved from the highest interaction down.
    """
    index = {k: i for i, k in enumerate(keys)}
    eye = np.eye(len(keys))

    def coef(s: frozenset) -> float:  # observations per level of effect s
        return reps * float(np.prod([levels[f] for f in order if f not in s]))

    vec: dict = {}
    if reps > 1:
        vec[RESIDUAL] = eye[index[RESIDUAL]]
    for s in sorted(comps, key=len, reverse=True):
        v = eye[index[s]].copy()
        if reps > 1:
            v -= vec[RESIDUAL]
        for u in comps:
            if u > s:
                v -= coef(u) * vec[u]
        vec[s] = v / coef(s)
    return vec


def expected_mean_squares(
    comps: Sequence[frozenset[str]],
    variances: Mapping,
    order: Sequence[str],
    levels: Mapping[str, float],
    reps: int,
) -> np.ndarray:
    """E MS of each component (then the residual when ``reps`` > 1) given true variances."""
    out = []
    for s in comps:
        out.append(
            sum(
                reps * float(np.prod([levels[f] for f in order if f not in u])) * variances[u]
                for u in comps
                if u >= s
            )
            + (variances.get(RESIDUAL, 0.0) if reps > 1 else 0.0)
        )
    if reps > 1:
        out.append(variances[RESIDUAL])
    return np.array(out, float)


def _parse(
    table: pd.DataFrame, design: Mapping[str, float]
) -> tuple[list[frozenset[str]], list[str], int, bool, dict[str, float], dict[Key, float]]:
    comps = [frozenset(f) for f in table["facets"] if len(f)]
    order = list(dict.fromkeys(f for s in table["facets"] for f in s))
    missing = [f for f in order if f not in design]
    if missing:
        raise StatsError(f"design has no size for facet(s) {missing}; give each facet a count")
    bad = {k: v for k, v in design.items() if float(v) < 1}
    if bad:
        raise StatsError(f"design sizes must be at least 1, got {bad}")
    has_residual = RESIDUAL in set(table["component"])
    reps = int(design.get("repeats", 1))
    if reps > 1 and not has_residual:
        raise StatsError(
            "the pilot had one observation per cell, so repeats cannot be planned: "
            "its residual is confounded with the top interaction"
        )
    names, values = table["component"].tolist(), table["variance"].tolist()
    variances = dict(zip(names, map(float, values), strict=True))
    by_set: dict[Key, float] = {}  # plain lists: the design search calls this thousands of times
    for name, facets, value in zip(names, table["facets"].tolist(), values, strict=True):
        by_set[frozenset(facets) if name != RESIDUAL else RESIDUAL] = value
    return comps, order, reps, has_residual, variances, by_set


def _divisor(
    facets: Sequence[str], design: Mapping[str, float], order: Sequence[str], reps: int
) -> float:
    if facets == RESIDUAL:
        return float(np.prod([design[f] for f in order])) * reps
    return float(np.prod([design[f] for f in facets]))


def planned_error(
    table: pd.DataFrame,
    design: Mapping[str, float],
    generalize: Sequence[str],
    *,
    nested: Mapping[str, str] | None = None,
) -> tuple[float, float]:
    """Variance of the grand mean of a planned balanced design, and its Satterthwaite degrees of
    freedom (from the expected mean squares at that design).

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> var, df = planned_error(t, {"case": 50, "repeats": 4}, ["case"])
        >>> round(var, 5), round(df)
        (0.0018, 49)
    """
    nested = dict(nested or {})
    comps, order, reps, has_residual, _, by_set = _parse(table, design)
    keys = [*comps, RESIDUAL] if reps > 1 else list(comps)
    levels = {f: float(design[f]) for f in order}
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


def _cells(levels: Mapping[str, float]) -> float:
    return float(np.prod(list(levels.values())))


def _df(s: frozenset, levels: Mapping[str, float], nested: Mapping[str, str]) -> float:
    parents = {p for f in s for p in closure(frozenset([f]), nested) if p != f}
    return float(np.prod([levels[f] if f in parents else levels[f] - 1 for f in s]))


def mean_square_terms(
    table: pd.DataFrame,
    design: Mapping[str, float],
    generalize: Sequence[str],
    *,
    nested: Mapping[str, str] | None = None,
) -> tuple[list[np.ndarray], list[float], np.ndarray, np.ndarray]:
    """The error variance of a grand mean of the balanced ``design`` as mean squares: for each
    counted component its coefficients on the mean squares and its divisor, the expected mean
    squares at the components of ``table``, and their degrees of freedom (what
    :func:`fiducial_half_width` draws from when the pilot's own mean squares are not at hand,
    e.g. a REML fit)."""
    nested = dict(nested or {})
    comps, order, reps, has_residual, _, by_set = _parse(table, design)
    true = dict(by_set)
    top = max(comps, key=len)
    if has_residual and reps == 1:  # one observation per cell: the residual is in the top MS
        true[top] = true[top] + true.pop(RESIDUAL)
    keys = [*comps, RESIDUAL] if reps > 1 else list(comps)
    levels = {f: float(design[f]) for f in order}
    vec = ems_vectors(comps, keys, order, levels, reps)
    ems = expected_mean_squares(comps, true, order, levels, reps)
    df = np.array(
        [_df(s, levels, nested) for s in comps]
        + ([_cells(levels) * (reps - 1)] if reps > 1 else [])
    )
    counted: list[Key] = [s for s in comps if set(s) & set(generalize)]
    if reps > 1:
        counted.append(RESIDUAL)
    vectors = [vec[s] for s in counted]
    weights = [
        1.0 / _divisor(RESIDUAL if s == RESIDUAL else tuple(s), design, order, reps)
        for s in counted
    ]
    return vectors, weights, ems, df


def fiducial_half_width(
    vectors: Sequence[np.ndarray],
    weights: Sequence[float],
    mean_squares: np.ndarray,
    df: np.ndarray,
    confidence: float,
    *,
    draws: int = 20000,
    seed: int = 0,
) -> float:
    """The half-width of a generalized (fiducial) confidence interval for a grand mean whose
    error variance is ``sum(w * max(v @ MS, 0))`` over the counted components (Weerahandi 1993;
    Krishnamoorthy and Mathew 2009, ch. 10): each mean square is drawn from its fiducial
    distribution ``ms * df / chi2(df)``, the components re-estimated from the draws (a negative
    one set to 0, as the G-study does), and the ``confidence`` quantile of ``|Z| * sqrt(var)``
    taken. With 2-3 levels of a facet a Satterthwaite t from estimated mean squares is too short
    (issue 36 item 5): a facet whose few levels happen to agree gets a small estimate and a large
    df; the fiducial draws keep the chi-square's long tail of that mean square.

    Example:
        >>> v = [np.array([1 / 4, -1 / 4]), np.array([0.0, 1.0])]  # case, residual (4 repeats)
        >>> half = fiducial_half_width(v, [1 / 50, 1 / 200], np.array([0.36, 0.2]),
        ...                            np.array([49.0, 150.0]), 0.95)
        >>> round(half / 0.0018**0.5, 1)  # about the t quantile on 49 df
        2.0
    """
    ms = np.asarray(mean_squares, float)
    dof = np.asarray(df, float)
    combo = np.asarray(
        sum(w * np.asarray(v, float) for v, w in zip(vectors, weights, strict=True)), float
    )
    used = np.abs(combo) > 1e-12 * np.abs(combo).max() if np.any(combo) else combo != 0
    if used.sum() == 1 and combo[used][0] > 0:  # one mean square: the fiducial interval is the t
        var = float(combo[used][0] * ms[used][0])
        return float(sps.t.ppf(0.5 + confidence / 2, dof[used][0]) * np.sqrt(max(var, 0.0)))
    rng = np.random.default_rng(seed)
    finite = np.isfinite(dof) & (dof > 0)
    draw = np.broadcast_to(ms, (draws, ms.size)).copy()
    if finite.any():
        chi = rng.chisquare(dof[finite], (draws, int(finite.sum())))
        draw[:, finite] = ms[finite] * dof[finite] / np.maximum(chi, 1e-300)
    drawn = np.maximum(draw @ combo, 0.0)
    z = np.abs(rng.standard_normal(draws))
    return float(np.quantile(z * np.sqrt(drawn), confidence))
