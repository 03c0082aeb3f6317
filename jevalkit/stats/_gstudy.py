"""Variance components of crossed and nested random facets (a G-study), and what they imply for
the error of a mean (the D-study arithmetic shared by intervals, coefficients and the planner).

Balanced designs: the ANOVA (expected mean squares) estimators of generalizability theory
(Brennan 2001, ch. 3): every facet crossed, sums of squares from marginal means, the EMS system
solved from the highest interaction down; a nested facet ``r:t`` is the sum of the crossed
components it confounds (``r`` + ``r x t``), which is exactly the nested design's estimator.
Unbalanced designs: REML by statsmodels ``MixedLM`` with one variance-component formula per
effect (crossed random effects as one group). Negative ANOVA estimates are reported as 0 and
said in ``method`` (Brennan 2001, sec. 3.4); REML keeps them at the boundary 0.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import estimator
from ..errors import StatsError

G_STUDY_COLUMNS = [
    "component",
    "facets",
    "variance",
    "estimate",
    "share",
    "df",
    "ci_low",
    "ci_high",
    "n_levels",
    "method",
]
RESIDUAL = "residual"


@dataclass
class GStudy:
    """A fitted G-study: the components table and what the D-study arithmetic needs.

    Attributes:
        table: one row per component (columns ``G_STUDY_COLUMNS``).
        levels: the number of levels of each facet (for a nested facet: per parent level).
        replicates: observations per cell (balanced), else the mean.
        balanced: whether the ANOVA estimators were used.
        weights: per component, sum over its levels of (rows at the level)^2 / N^2, the factor by
            which its variance enters the variance of the grand mean of these rows.
        ms_vectors: per component, its estimate as coefficients on the mean squares (ANOVA), for
            Satterthwaite degrees of freedom of any linear combination.
        mean_squares, ms_df: the mean squares and their degrees of freedom (ANOVA).
    """

    table: pd.DataFrame
    levels: dict[str, int]
    replicates: float
    balanced: bool
    weights: dict[str, float]
    nested: dict[str, str] = field(default_factory=dict)
    ms_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    mean_squares: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ms_df: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def error_variance(self, generalize: Sequence[str]) -> tuple[float, float]:
        """Variance of the grand mean of these rows when the facets in ``generalize`` are
        random (resampled) and the others fixed, and its Satterthwaite degrees of freedom.

        A component counts when it involves a generalised facet; the residual (what varies
        within a cell: repeats, unlisted facets) always counts.

        Example:
            >>> d = pd.DataFrame({"case": [0, 0, 1, 1, 2, 2], "y": [1.0, 2.0, 3.0, 5.0, 4.0, 4.0]})
            >>> var, df = g_study(d, ["case"], "y").error_variance(["case"])
            >>> round(var, 4), round(df, 1)  # the case means' sample variance 2.0833 / 3 cases
            (0.6944, 2.0)
        """
        counted = []
        for row in self.table.itertuples():
            if row.component == RESIDUAL or set(row.facets) & set(generalize):
                counted.append(row)
        var = sum(r.variance * self.weights[r.component] for r in counted)
        if var <= 0:
            return 0.0, np.nan
        if self.ms_vectors:
            vec = sum(
                self.weights[r.component] * self.ms_vectors[r.component]
                for r in counted
                if r.variance > 0
            )
            terms = (vec * self.mean_squares) ** 2 / np.where(self.ms_df > 0, self.ms_df, np.inf)
            df = float(np.sum(vec * self.mean_squares) ** 2 / np.sum(terms))
        else:
            parts = [(r.variance * self.weights[r.component], r.df) for r in counted]
            df = var**2 / sum(c**2 / d for c, d in parts if c > 0 and d > 0)
        return float(var), max(df, 1.0)


def _closure(facets: frozenset[str], nested: Mapping[str, str]) -> frozenset[str]:
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


def _name(facets: frozenset[str], order: Sequence[str], nested: Mapping[str, str]) -> str:
    """``a x b``, with a nested facet written ``r:t`` and its parents not repeated."""
    parents = {p for f in facets for p in _closure(frozenset([f]), nested) if p != f}
    parts = []
    for f in order:
        if f not in facets or f in parents:
            continue
        chain = [p for p in order if p in _closure(frozenset([f]), nested) and p != f]
        parts.append(f + "".join(f":{p}" for p in chain))
    return " x ".join(parts)


def _components(order: Sequence[str], nested: Mapping[str, str]) -> list[frozenset[str]]:
    """Every estimable effect: subsets of the facets closed under nesting, by size."""
    out = []
    for size in range(1, len(order) + 1):
        for combo in itertools.combinations(order, size):
            s = frozenset(combo)
            if _closure(s, nested) == s:
                out.append(s)
    return out


@estimator(
    unit="cell",
    estimand="variance components of crossed and nested random facets",
    interval="Satterthwaite chi-square per component",
    data="arrays",
    note="returns a GStudy; pinned to Brennan (2001) synthetic data and statsmodels MixedLM in tests/stats/test_gstudy.py",
)
def g_study(
    data: pd.DataFrame,
    facets: Sequence[str],
    value: str,
    *,
    nested: Mapping[str, str] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
) -> GStudy:
    """Variance components of random facets (columns of ``data``) for the values in ``value``.

    Every facet listed is crossed with the others unless ``nested`` maps it to its parent
    (``{"rater": "task"}``: each task has its own raters). What varies within a cell of all the
    facets (repeats, unlisted facets) is the residual.

    Args:
        data: one row per observation, with the facet columns and ``value`` (no NaN).
        facets: the facet columns (each needs 2 or more levels).
        value: the value column.
        nested: facet -> the facet it is nested in.
        method: ``anova`` (balanced designs only), ``reml``, or ``auto`` (ANOVA when balanced).
        confidence: of the component intervals.

    Returns:
        A :class:`GStudy`; its ``table`` has one row per component: ``component`` (``a x b``,
        nested ``r:t``, and ``residual``), ``facets`` (tuple), ``variance`` (the estimate, a
        negative one set to 0), ``estimate`` (the unbiased ANOVA estimate, possibly negative;
        REML: as ``variance``), ``share`` (of the total), ``df`` (Satterthwaite), ``ci_low``,
        ``ci_high`` (Satterthwaite chi-square interval; NaN when the estimate is 0), ``n_levels``,
        ``method``.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> d = pd.DataFrame([(c, v, r) for c in range(30) for v in range(3) for r in range(2)],
        ...                  columns=["case", "variant", "repeat"])
        >>> d["y"] = rng.normal(size=30)[d["case"]] + rng.normal(size=len(d))
        >>> g_study(d, ["case", "variant"], "y").table["component"].tolist()
        ['case', 'variant', 'case x variant', 'residual']
    """
    nested = dict(nested or {})
    order = list(dict.fromkeys(facets))
    if not order:
        raise StatsError("give at least one facet column")
    for f, parent in nested.items():
        if f not in order or parent not in order:
            raise StatsError(f"nested={{{f!r}: {parent!r}}}: both must be among facets {order}")
    if method not in ("auto", "anova", "reml"):
        raise StatsError(f"method must be 'auto', 'anova' or 'reml', got {method!r}")
    for f in [*order, value]:
        if f not in data.columns:
            raise StatsError(f"no {f!r} column; the columns are {sorted(map(str, data.columns))}")
    frame = data[[*order, value]].copy()
    if frame[value].isna().any():
        raise StatsError(f"column {value!r} holds missing values; drop them first")
    blank = [f for f in order if frame[f].isna().any()]
    if blank:
        raise StatsError(f"facet column(s) {blank} hold missing values: give every row a level")
    y = frame[value].to_numpy(float)
    codes = {}
    levels = {}
    for f in order:
        parents = sorted(_closure(frozenset([f]), nested) - {f}, key=order.index)
        if parents:  # a nested facet: its levels numbered within each parent combination
            codes[f] = frame.groupby(parents, sort=True)[f].rank(method="dense").to_numpy(int) - 1
            per_parent = frame.groupby(parents)[f].nunique()
            levels[f] = int(per_parent.iloc[0]) if per_parent.nunique() == 1 else -1
        else:
            codes[f] = pd.factorize(frame[f], sort=True)[0]
            levels[f] = int(codes[f].max()) + 1
        if int(codes[f].max()) + 1 < 2:
            raise StatsError(
                f"facet {f!r} has one level: its variance is not estimable (drop it from facets)"
            )
    for f, g in itertools.permutations(order, 2):
        if nested.get(f) == g or _closure(frozenset([f]), nested) >= {g}:
            continue
        if frame.groupby(f)[g].nunique().max() == 1:  # every level of f meets one level of g
            raise StatsError(
                f"facet {f!r} is nested in {g!r} (each level of {f!r} occurs with one level "
                f"of {g!r}), so {f!r} and {f!r} x {g!r} are not separately estimable: pass "
                f"nested={{{f!r}: {g!r}}}, or drop one facet if they name the same thing"
            )
    cell = pd.DataFrame(codes).groupby(order).size()
    full = int(np.prod([max(levels[f], 1) for f in order]))
    balanced = min(levels.values()) > 0 and len(cell) == full and cell.nunique() == 1
    if method == "anova" and not balanced:
        raise StatsError(
            "the design is unbalanced (missing cells or unequal repeats): use method='reml'"
        )
    comps = _components(order, nested)
    names = {s: _name(s, order, nested) for s in comps}
    counts = {}
    for s in comps:
        cols = [codes[f] for f in order if f in s]
        key = pd.DataFrame(cols).T.groupby(list(range(len(cols)))).size().to_numpy()
        counts[names[s]] = float(np.sum(key.astype(float) ** 2) / y.size**2)
    replicates = float(cell.iloc[0]) if balanced else float(cell.mean())
    # one observation per cell (or at most one, unbalanced): the residual is the top interaction
    has_residual = int(cell.max()) > 1
    if has_residual:
        counts[RESIDUAL] = 1.0 / y.size
    if balanced and method != "reml":
        study = _anova(y, codes, order, nested, comps, names, levels, int(replicates), confidence)
    else:
        study = _reml(y, codes, order, comps, names, levels, has_residual, confidence)
    table, ms_vectors, ms, ms_df = study
    if not has_residual:
        top = table.index[-1]
        table.loc[top, "method"] += "; confounded with the residual (one observation per cell)"
    return GStudy(
        table=table,
        levels=levels,
        replicates=replicates,
        balanced=bool(balanced),
        weights=counts,
        nested=nested,
        ms_vectors=ms_vectors,
        mean_squares=ms,
        ms_df=ms_df,
    )


def _interval(estimate: float, df: float, confidence: float) -> tuple[float, float]:
    if not estimate > 0 or not df > 0:
        return np.nan, np.nan
    a = 1 - confidence
    lower_q = sps.chi2.ppf(a / 2, df)
    high = float(df * estimate / lower_q) if lower_q > 1e-12 else np.inf  # df near 0: no bound
    upper_q = sps.chi2.ppf(1 - a / 2, df)
    low = float(df * estimate / upper_q) if upper_q > 1e-12 else 0.0
    return low, high


def _table(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    total = table["variance"].sum()
    table["share"] = table["variance"] / total if total > 0 else np.nan
    return table[G_STUDY_COLUMNS].reset_index(drop=True)


def _anova(y, codes, order, nested, comps, names, levels, reps, confidence):
    """Expected-mean-squares estimators on the fully crossed layout (nested facets numbered
    within their parent), then merged into the nested effects."""
    n = [levels[f] for f in order]
    shape = [*n, reps]
    cube = np.zeros(shape)
    slot = pd.DataFrame(codes)[order].to_numpy()
    rep = pd.DataFrame(slot).groupby(list(range(len(order)))).cumcount().to_numpy()
    cube[(*slot.T, rep)] = y
    crossed = [
        frozenset(c) for k in range(1, len(order) + 1) for c in itertools.combinations(order, k)
    ]
    total_n = y.size

    def marginal(s: frozenset) -> np.ndarray:
        axes = (*(i for i, f in enumerate(order) if f not in s), len(order))
        return cube.mean(axis=axes)

    # T values (Brennan 2001, ch. 3): T(s) = (N / n(s)) * sum of squared marginal means
    t_val = {frozenset(): total_n * cube.mean() ** 2}
    for s in crossed:
        t_val[s] = total_n / np.prod([levels[f] for f in s]) * float(np.sum(marginal(s) ** 2))
    ss, df = {}, {}
    for s in crossed:
        ss[s] = sum(
            (-1) ** (len(s) - len(t)) * t_val[frozenset(t)]
            for k in range(len(s) + 1)
            for t in itertools.combinations(sorted(s, key=order.index), k)
        )
        df[s] = float(np.prod([levels[f] - 1 for f in s]))
    # a nested effect pools the crossed effects it confounds (r:t = r + r x t)
    pooled_ss: dict = {}
    pooled_df: dict = {}
    for s in crossed:
        target = _closure(s, nested)
        pooled_ss[target] = pooled_ss.get(target, 0.0) + ss[s]
        pooled_df[target] = pooled_df.get(target, 0.0) + df[s]
    keys: list = list(comps)
    if reps > 1:
        keys.append(RESIDUAL)
        pooled_ss[RESIDUAL] = float(np.sum(cube**2)) - t_val[frozenset(order)]
        pooled_df[RESIDUAL] = float(total_n - np.prod(n))
    ms = np.array([pooled_ss[k] / pooled_df[k] for k in keys])
    ms_df = np.array([pooled_df[k] for k in keys])

    vec = ems_vectors(comps, keys, order, levels, reps)
    rows = []
    out: dict[str, np.ndarray] = {}
    for s in comps:
        facets_s = tuple(f for f in order if f in s)
        out[names[s]] = vec[s]
        rows.append(_row(names[s], facets_s, vec[s], ms, ms_df, levels, confidence))
    if reps > 1:
        out[RESIDUAL] = vec[RESIDUAL]
        rows.append(_row(RESIDUAL, (), vec[RESIDUAL], ms, ms_df, levels, confidence))
    return _table(rows), out, ms, ms_df


def ems_vectors(
    comps: Sequence[frozenset[str]],
    keys: Sequence,
    order: Sequence[str],
    levels: Mapping[str, int],
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
    levels: Mapping[str, int],
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


def _row(name, facets, v, ms, ms_df, levels, confidence) -> dict:
    estimate = float(v @ ms)
    terms = (v * ms) ** 2 / ms_df
    df = float(estimate**2 / terms.sum()) if estimate > 0 and terms.sum() > 0 else np.nan
    low, high = _interval(estimate, df, confidence)
    how = "ANOVA (expected mean squares); Satterthwaite chi-square interval"
    if estimate < 0:
        how += f"; negative estimate {estimate:.4g} set to 0"
    return {
        "component": name,
        "facets": facets,
        "variance": max(estimate, 0.0),
        "estimate": estimate,
        "df": df,
        "ci_low": low,
        "ci_high": high,
        "n_levels": int(np.prod([levels[f] for f in facets])) if facets else np.nan,
        "method": how,
    }


def _reml(y, codes, order, comps, names, levels, has_residual, confidence):
    """REML via statsmodels MixedLM: one group, one variance-component formula per effect."""
    import statsmodels.api as sm

    frame = pd.DataFrame({"y": y})
    vc = {}
    labels = {}
    top = comps[-1]
    for i, s in enumerate(comps):
        if not has_residual and s == top:
            continue  # one observation per cell: the top interaction is the residual
        cols = [codes[f] for f in order if f in s]
        key = pd.DataFrame(cols).T.astype(str).agg("|".join, axis=1)
        col = f"e{i}"
        frame[col] = pd.factorize(key, sort=True)[0]
        vc[col] = f"0 + C({col})"
        labels[col] = s
    model = sm.MixedLM.from_formula(
        "y ~ 1", groups=np.zeros(y.size), vc_formula=vc, re_formula="0", data=frame
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = model.fit(reml=True, method=["lbfgs", "powell"])
        except np.linalg.LinAlgError:
            raise StatsError(
                "the REML fit is singular: the facets are confounded in this design"
            ) from None
    estimates = dict(zip(model.exog_vc.names, np.asarray(fit.vcomp, float), strict=True))
    rows = []
    for col, s in labels.items():
        est = max(estimates[col], 0.0)
        k = frame[col].nunique()
        df = float(max(k - 1, 1))  # approximate: the levels observed
        low, high = _interval(est, df, confidence)
        how = "REML (statsmodels MixedLM); interval: chi-square on the levels observed"
        if est <= 1e-10:
            how = "REML (statsmodels MixedLM); at the boundary 0"
        rows.append(
            {
                "component": names[s],
                "facets": tuple(f for f in order if f in s),
                "variance": est,
                "estimate": est,
                "df": df,
                "ci_low": low,
                "ci_high": high,
                "n_levels": k,
                "method": how,
            }
        )
    scale = float(fit.scale)
    df_e = float(y.size - sum(frame[c].nunique() for c in labels) - 1)
    low, high = _interval(scale, max(df_e, 1.0), confidence)
    rows.append(
        {
            "component": RESIDUAL if has_residual else names[top],
            "facets": () if has_residual else tuple(f for f in order if f in top),
            "variance": scale,
            "estimate": scale,
            "df": max(df_e, 1.0),
            "ci_low": low,
            "ci_high": high,
            "n_levels": np.nan if has_residual else y.size,
            "method": "REML (statsmodels MixedLM); interval: chi-square on the residual df",
        }
    )
    return _table(rows), {}, np.zeros(0), np.zeros(0)
