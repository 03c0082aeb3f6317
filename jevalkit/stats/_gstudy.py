"""The G-study: the variance of a score split over random facets (case, variant, judge sample,
endpoint, ...), as generalizability theory does it, from a results frame or any table.

Balanced designs: the ANOVA (expected mean squares) estimators of generalizability theory
(Brennan 2001, ch. 3): every facet crossed, sums of squares from marginal means, the EMS system
solved from the highest interaction down; a nested facet ``r:t`` is the sum of the crossed
components it confounds (``r`` + ``r x t``), which is exactly the nested design's estimator.
Unbalanced designs: REML by statsmodels ``MixedLM`` with one variance-component formula per
effect (crossed random effects as one group). Negative ANOVA estimates are reported as 0 and
said in ``method`` (Brennan 2001, sec. 3.4); REML keeps them at the boundary 0.

One function fits it (:func:`variance_components`), one results object holds it
(:class:`GStudy`); what it implies for a design (the error of a mean, G and Phi coefficients, the
noise floor of two runs, the cheapest design) is :meth:`GStudy.error_variance` and the
:mod:`jevalkit.metrics` statistics built on it.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import (
    CASE_COLUMNS,
    CaseSpec,
    Result,
    columns_of,
    estimator,
    finish,
    group_codes,
    prepare,
    require,
)
from ..errors import StatsError
from ._dstudy import (
    RESIDUAL,
    closure,
    ems_vectors,
    fiducial_half_width,
    mean_square_terms,
    planned_error,
)

COLUMNS = [
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
CASE_FACET = "case"


@dataclass(frozen=True, eq=False)
class GStudy(Result):
    """A G-study: the variance components of a score over random facets, and the pilot's design.

    Attributes:
        components: one row per component: ``component`` (``case``, ``case x variant``, nested
            ``variant:case``, ``residual``), ``facets`` (tuple), ``variance`` (the estimate, a
            negative ANOVA one set to 0 and ``method`` saying so), ``estimate`` (the unbiased
            ANOVA estimate, possibly negative; REML: as ``variance``), ``share`` (of the total),
            ``df`` (Satterthwaite), ``ci_low``, ``ci_high`` (Satterthwaite chi-square interval;
            NaN when the estimate is 0), ``n_levels``, ``method``.
        levels: the number of levels of each facet (a nested facet: per parent level).
        repeats: observations per cell (balanced), else their mean.
        balanced: whether the ANOVA estimators were used (else REML).
        nested: facet -> its parent.
        n, n_missing: the rows used, and the rows not scored (an error or no value).
        cost_per_request: the mean ``cost_usd`` of the rows that have one (0.0 for free
            requests; None when no row has a cost): what a design's cost is counted in.
        left_out: facets asked for but absent or with one level (``only_varying=True``).
        method: how the components were estimated.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> study = GStudy.of(t, levels={"case": 50}, repeats=4)
        >>> study.design
        {'case': 50, 'repeats': 4}
        >>> var, df = study.error_variance(["case"])
        >>> round(var, 5), round(df)  # 0.04 / 50 + 0.2 / 200
        (0.0018, 49)
    """

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

    components: pd.DataFrame
    levels: Mapping[str, float]  # a harmonic mean where a facet's levels vary by parent
    repeats: float
    balanced: bool
    nested: Mapping[str, str] = field(default_factory=dict)
    n: int = 0
    n_missing: int = 0
    cost_per_request: float | None = None
    left_out: tuple[str, ...] = ()
    method: str = ""
    # the D-study arithmetic of the observed rows (empty for published components)
    weights: Mapping[str, float] = field(default_factory=dict, repr=False)
    ms_vectors: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    mean_squares: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    ms_df: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    @classmethod
    def of(
        cls,
        components: pd.DataFrame,
        *,
        levels: Mapping[str, float],
        repeats: float = 1,
        nested: Mapping[str, str] | None = None,
    ) -> GStudy:
        """A G-study from components estimated elsewhere (a published table: ``component``,
        ``facets``, ``variance``), for a D-study of its design (balanced by definition)."""
        for column in ("component", "facets", "variance"):
            if column not in components.columns:
                raise StatsError(f"components need a {column!r} column")
        table = components.reset_index(drop=True)
        return cls(
            components=table,
            levels={k: _count(v) for k, v in levels.items()},
            repeats=float(repeats),
            balanced=True,
            nested=dict(nested or {}),
            method="components given",
        )

    def table(self) -> pd.DataFrame:
        """The components, one row each."""
        return self.components.copy()

    @property
    def design(self) -> dict[str, float]:
        """The pilot's design: the levels of each facet and ``repeats``."""
        return {**{k: _count(v) for k, v in self.levels.items()}, "repeats": round(self.repeats)}

    def variance(self, component: str) -> float:
        """One component's variance (``"case"``, ``"case x variant"``, ``"residual"``)."""
        table = self.components.set_index("component")["variance"]
        if component not in table.index:
            raise StatsError(f"no component {component!r}; the components are {list(table.index)}")
        return float(table[component])

    def error_variance(
        self, generalize: Sequence[str], design: Mapping[str, float] | None = None
    ) -> tuple[float, float]:
        """The variance of a grand mean when the facets in ``generalize`` are random (resampled)
        and the others fixed, and its Satterthwaite degrees of freedom: of these rows (balanced
        or not), or of a planned balanced ``design`` (levels per facet and ``repeats``; facets
        not named keep the pilot's levels).

        A component counts when it involves a generalised facet; the residual (what varies
        within a cell: repeats, unlisted facets) always counts.
        """
        if design is not None or not self.weights:
            plan = {**self.design, **{k: int(v) for k, v in (design or {}).items()}}
            return planned_error(self.components, plan, generalize, nested=self.nested)
        counted = []
        for row in self.components.itertuples():
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

    def half_width(
        self, generalize: Sequence[str], confidence: float = 0.95, *, seed: int = 0
    ) -> tuple[float, bool]:
        """The half-width of the generalized (fiducial) confidence interval of a grand mean of
        these rows when the facets in ``generalize`` are random, and whether it is exact to the
        design (the pilot's own mean squares: balanced ANOVA) or approximate (the multiplier
        drawn at the REML components on the balanced analogue of the design, times the rows' own
        standard error). NaN when nothing counted varies.

        Example:
            >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
            ...                   "variance": [0.04, 0.2]})
            >>> half, exact = GStudy.of(t, levels={"case": 50}, repeats=4).half_width(["case"])
            >>> round(half / 0.0018**0.5, 1), exact
            (2.0, False)
        """
        if self.ms_vectors:
            names = [
                r.component
                for r in self.components.itertuples()
                if r.component == RESIDUAL or set(r.facets) & set(generalize)
            ]
            vectors = [self.ms_vectors[c] for c in names]
            weights = [self.weights[c] for c in names]
            ms, df = self.mean_squares, self.ms_df
            exact = True
        else:
            design = self.design
            if min(design.values()) < 1:
                return float("nan"), False
            vectors, weights, ms, df = mean_square_terms(
                self.components, design, generalize, nested=self.nested
            )
            if not vectors:
                return float("nan"), False
            # the balanced analogue gives the multiplier; the rows' own error variance the scale
            analogue = float(sum(w * (v @ ms) for v, w in zip(vectors, weights, strict=True)))
            var, _ = self.error_variance(generalize)
            if not (analogue > 0 and var > 0):
                return float("nan"), False
            half = fiducial_half_width(vectors, weights, ms, df, confidence, seed=seed)
            return half * float(np.sqrt(var / analogue)), False
        if not vectors:
            return float("nan"), exact
        return fiducial_half_width(vectors, weights, ms, df, confidence, seed=seed), exact


@estimator(
    unit="facet level",
    estimand="variance of the score over random facets (a G-study)",
    interval="Satterthwaite chi-square per component (ANOVA), chi-square on levels (REML)",
    checks=(
        "order",
        "rename",
        "method",
        "scale",
        "keys",
        "duplicates",
        "one_case",
        "no_spread",
        "settings",
    ),
    call={"facets": ("case", "system"), "case": "case_id"},
    note="pinned to Brennan (2001) and statsmodels MixedLM in tests/stats/test_gstudy.py",
)
def variance_components(
    data: pd.DataFrame,
    *,
    facets: Sequence[str] = (CASE_FACET,),
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    repeat: str | None = "repeat",
    nested: Mapping[str, str] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    only_varying: bool = False,
    weights: str | None = None,
    scale: tuple[float, float] | None = None,
    pool: bool = False,
) -> GStudy:
    """A G-study: the variance of ``score`` split over random facets.

    Every facet listed is crossed with the others unless ``nested`` maps it to its parent
    (``{"variant": "case"}``: each case has its own paraphrases). What varies within a cell of
    all the facets (repeats, facets not listed) is the ``residual``.

    Args:
        data: results (or any frame with the facet columns).
        facets: column names of random facets; ``"case"`` means the case identity (``case=``,
            default probe + version + case id). A missing value in a facet column is a level.
        score: the value column (``passed`` for verdicts works too).
        case: the columns naming a case (``None``: rows are not cases, e.g. a persons x items
            table whose facets are plain columns).
        system: the column telling systems apart (rows of two systems are never copies, and
            their case keys must have one type); ``None``: the rows are one system.
        repeat: the column numbering repeats: two rows of one case, system, facet levels and
            repeat are a copied row, refused (without the column, rows sharing a cell are its
            replicates).
        nested: facet -> its parent.
        method: ``auto`` (ANOVA when balanced, else REML), ``anova`` or ``reml``.
        confidence: of the component intervals.
        only_varying: leave out the facets that are absent or have one level (named in
            ``left_out``), for a G-study of whatever a run varied; otherwise they are refused.
        weights: a column of each row's weight in the mean whose error
            :meth:`GStudy.error_variance` reports for these rows (default: equal, the mean of
            the rows; ``1 / repeats of the case`` gives the mean of case means when cases have
            unequal repeats). The components do not depend on it.
        scale: ``(low, high)`` of raw grades: the scores are normalised to [0, 1] first (as
            ``mean_score(scale=...)`` reports), so the components, and every half-width a
            D-study of them plans (``choose_design``), are on that scale. Without it, scores
            outside [0, 1] are refused (a 1-10 grade's components are 81 times a 0-1 score's:
            a plan's half-width would be in grade points, read as a share).
        pool: pool a probe's versions or generation settings (``params_hash``) on purpose;
            by default two of one system are refused, naming the column, unless the column is
            a facet of the study (then it is modelled).

    Returns:
        A :class:`GStudy` (``.table()``: one row per component).

    Notes:
        Balanced: ANOVA (expected mean squares) estimators, pinned to Brennan (2001) synthetic
        data sets 3 and 4. Unbalanced: REML (statsmodels ``MixedLM``, variance-component
        formulas).

    Example:
        >>> rng = np.random.default_rng(1)
        >>> d = pd.DataFrame([(c, v, r) for c in range(40) for v in range(3) for r in range(4)],
        ...                  columns=["case_id", "variant", "repeat"])
        >>> d["score"] = (0.5 + rng.normal(0, 0.1, 40)[d["case_id"]]
        ...               + rng.normal(0, 0.05, 3)[d["variant"]] + rng.normal(0, 0.03, len(d)))
        >>> study = variance_components(d, facets=["case", "variant"], case="case_id", system=None)
        >>> study.table()["component"].tolist()
        ['case', 'variant', 'case x variant', 'residual']
        >>> study.levels, study.repeats
        ({'case': 40, 'variant': 3}, 4.0)
    """
    if isinstance(facets, str):
        raise StatsError(
            f"facets takes a list of columns, e.g. [{facets!r}] or ['case', 'variant']"
        )
    wanted = list(dict.fromkeys(facets))
    if not wanted:
        raise StatsError("give at least one facet column")
    case_cols = columns_of(case)
    if CASE_FACET in wanted and not case_cols:
        raise StatsError("facet 'case' needs case= columns (case=None has no cases)")
    left_out: list[str] = []
    if only_varying:
        kept = [f for f in wanted if _varies(data, case_cols if f == CASE_FACET else [f])]
        left_out = [f for f in wanted if f not in kept]
        if not kept:
            raise StatsError(f"none of the facets {wanted} varies in these rows")
        wanted = kept
    others = [f for f in wanted if f != CASE_FACET]
    p = prepare(
        data,
        score,
        case=case,
        system=system,
        repeat=repeat,
        within=others,
        kind="score",
        scale=scale,
        keyword="score",
        pool=pool,
        apart=False,
    )
    if not p.values.size:
        raise StatsError(f"no rows with a {score!r} value")
    coded = pd.DataFrame(index=range(p.values.size))
    for facet in wanted:
        coded[facet] = p.case if facet == CASE_FACET else group_codes(p.frame, [facet])[0]
    coded["_value"] = p.values
    row_weights = None
    if weights is not None:
        require(p.frame, weights, "weights", "each row's weight in the mean")
        row_weights = pd.to_numeric(p.frame[weights], errors="coerce").to_numpy(float)
        if not (
            np.isfinite(row_weights).all() and (row_weights >= 0).all() and row_weights.sum() > 0
        ):
            raise StatsError(f"weights column {weights!r} must hold finite values >= 0, not all 0")
    fit = _fit(
        coded,
        wanted,
        "_value",
        nested=nested,
        method=method,
        confidence=confidence,
        row_weights=row_weights,
    )
    fit["components"] = finish(fit["components"], order=COLUMNS, estimate="variance")
    return GStudy(
        **fit,
        n=int(p.values.size),
        n_missing=int(p.n_missing.sum()),
        cost_per_request=_cost_per_request(data),
        left_out=tuple(left_out),
        method="ANOVA (expected mean squares)" if fit["balanced"] else "REML (statsmodels MixedLM)",
    )


def _count(v: float) -> int | float:
    """A number of levels: an int, or a harmonic mean of unequal levels per parent."""
    return int(v) if float(v).is_integer() else float(v)


def _varies(data: pd.DataFrame, columns: list[str]) -> bool:
    return (
        bool(columns)
        and len(data) > 0  # nothing varies in no rows
        and all(c in data.columns for c in columns)
        and group_codes(data, columns)[0].max() > 0
    )


def _cost_per_request(data: pd.DataFrame) -> float | None:
    """The mean dollars per request of the rows whose cost is known: 0.0 when they were free
    (the embedded model), None when no row has a cost (then a design counts requests only)."""
    if "cost_usd" not in data.columns:
        return None
    cost = pd.to_numeric(data["cost_usd"], errors="coerce").dropna()
    return float(cost.mean()) if len(cost) else None


def _name(facets: frozenset[str], order: Sequence[str], nested: Mapping[str, str]) -> str:
    """``a x b``, with a nested facet written ``r:t`` and its parents not repeated."""
    parents = {p for f in facets for p in closure(frozenset([f]), nested) if p != f}
    parts = []
    for f in order:
        if f not in facets or f in parents:
            continue
        chain = [p for p in order if p in closure(frozenset([f]), nested) and p != f]
        parts.append(f + "".join(f":{p}" for p in chain))
    return " x ".join(parts)


def _components(order: Sequence[str], nested: Mapping[str, str]) -> list[frozenset[str]]:
    """Every estimable effect: subsets of the facets closed under nesting, by size."""
    out = []
    for size in range(1, len(order) + 1):
        for combo in itertools.combinations(order, size):
            s = frozenset(combo)
            if closure(s, nested) == s:
                out.append(s)
    return out


def _fit(
    data: pd.DataFrame,
    facets: Sequence[str],
    value: str,
    *,
    nested: Mapping[str, str] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    row_weights: np.ndarray | None = None,
) -> dict:
    """The components of coded facet columns (no missing values; the input rules are
    :func:`variance_components`'s): the table and what the D-study arithmetic needs."""
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
        parents = sorted(closure(frozenset([f]), nested) - {f}, key=order.index)
        if parents:  # a nested facet: its levels numbered within each parent combination
            codes[f] = frame.groupby(parents, sort=True)[f].rank(method="dense").to_numpy(int) - 1
            per_parent = frame.groupby(parents)[f].nunique()
            # unequal levels per parent: their harmonic mean (Brennan 2001, sec. 7.1), what a
            # mean over the parents divides a nested component by
            levels[f] = (
                int(per_parent.iloc[0])
                if per_parent.nunique() == 1
                else float(sps.hmean(per_parent.to_numpy(float)))
            )
        else:
            codes[f] = pd.factorize(frame[f], sort=True)[0]
            levels[f] = int(codes[f].max()) + 1
        if int(codes[f].max()) + 1 < 2:
            raise StatsError(
                f"facet {f!r} has one level: its variance is not estimable (drop it from facets)"
            )
    for f, g in itertools.permutations(order, 2):
        if nested.get(f) == g or closure(frozenset([f]), nested) >= {g}:
            continue
        if frame.groupby(f)[g].nunique().max() == 1:  # every level of f meets one level of g
            raise StatsError(
                f"facet {f!r} is nested in {g!r} (each level of {f!r} occurs with one level "
                f"of {g!r}), so {f!r} and {f!r} x {g!r} are not separately estimable: pass "
                f"nested={{{f!r}: {g!r}}}, or drop one facet if they name the same thing"
            )
    cell = pd.DataFrame(codes).groupby(order).size()
    full = np.prod([levels[f] for f in order])
    balanced = (
        all(isinstance(levels[f], int) for f in order) and len(cell) == full and cell.nunique() == 1
    )
    if method == "anova" and not balanced:
        raise StatsError(
            "the design is unbalanced (missing cells or unequal repeats): use method='reml'"
        )
    comps = _components(order, nested)
    names = {s: _name(s, order, nested) for s in comps}
    # the error variance of the weighted mean sum(a y): each component times the sum over its
    # levels of (the weight at that level) squared, the residual times sum(a^2)
    a = np.full(y.size, 1.0 / y.size) if row_weights is None else row_weights / row_weights.sum()
    counts = {}
    for s in comps:
        cols = [codes[f] for f in order if f in s]
        key = pd.DataFrame(cols).T.assign(_a=a).groupby(list(range(len(cols))))["_a"].sum()
        counts[names[s]] = float(np.sum(key.to_numpy() ** 2))
    replicates = float(cell.iloc[0]) if balanced else float(cell.mean())
    # one observation per cell (or at most one, unbalanced): the residual is the top interaction
    has_residual = int(cell.max()) > 1
    if has_residual:
        counts[RESIDUAL] = float(np.sum(a**2))
    if balanced and method != "reml":
        study = _anova(y, codes, order, nested, comps, names, levels, int(replicates), confidence)
    else:
        study = _reml(y, codes, order, comps, names, levels, has_residual, confidence)
    table, ms_vectors, ms, ms_df = study
    if not has_residual:
        top = table.index[-1]
        table.loc[top, "method"] += "; confounded with the residual (one observation per cell)"
    return {
        "components": table,
        "levels": levels,
        "repeats": replicates,
        "balanced": bool(balanced),
        "weights": counts,
        "nested": nested,
        "ms_vectors": ms_vectors,
        "mean_squares": ms,
        "ms_df": ms_df,
    }


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
    return table[COLUMNS].reset_index(drop=True)


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
    t_val: dict[frozenset[str], float] = {frozenset(): total_n * cube.mean() ** 2}
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
        target = closure(s, nested)
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


def _row(
    name: str,
    facets: tuple[str, ...],
    v: np.ndarray,
    ms: np.ndarray,
    ms_df: np.ndarray,
    levels: Mapping[str, float],
    confidence: float,
) -> dict[str, Any]:
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
    fit, how_fit = _best_reml(model)
    estimates = dict(zip(model.exog_vc.names, np.asarray(fit.vcomp, float), strict=True))
    rows = []
    for col, s in labels.items():
        est = max(estimates[col], 0.0)
        k = frame[col].nunique()
        df = float(max(k - 1, 1))  # approximate: the levels observed
        low, high = _interval(est, df, confidence)
        how = f"REML (statsmodels MixedLM{how_fit}); interval: chi-square on the levels observed"
        if est <= 1e-10:
            how = f"REML (statsmodels MixedLM{how_fit}); at the boundary 0"
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
            "method": f"REML (statsmodels MixedLM{how_fit}); interval: chi-square on the "
            "residual df",
        }
    )
    return _table(rows), {}, np.zeros(0), np.zeros(0)


# statsmodels' L-BFGS can stop far from the optimum and report convergence (issue 36 item 8:
# an unbalanced one-facet pilot, log-likelihood 37.7 against the optimum 86.6), so the fit is
# checked: two gradient methods, and a derivative-free one when they disagree; the best REML
# log-likelihood wins.
_REML_METHODS = ("bfgs", "lbfgs")
_REML_CHECK = ("powell", "nm")
_REML_TOLERANCE = 1e-4


def _best_reml(model: Any) -> tuple[Any, str]:  # statsmodels' MixedLM and its fit
    """The REML fit of ``model`` with the highest log-likelihood over several optimisers, and a
    note for ``method`` (empty when the first two agree)."""
    fits: dict[str, Any] = {}

    def attempt(name: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fit = model.fit(reml=True, method=[name])
            except (np.linalg.LinAlgError, ValueError):
                return
        if np.isfinite(fit.llf) and np.all(np.isfinite(fit.vcomp)) and np.isfinite(fit.scale):
            fits[name] = fit

    for name in _REML_METHODS:
        attempt(name)
    llf = [fits[m].llf for m in fits]
    if len(fits) < len(_REML_METHODS) or max(llf) - min(llf) > _REML_TOLERANCE:
        for name in _REML_CHECK:
            attempt(name)
    if not fits:
        raise StatsError("the REML fit is singular: the facets are confounded in this design")
    best = max(fits, key=lambda m: fits[m].llf)
    llf = [fits[m].llf for m in fits]
    if max(llf) - min(llf) <= _REML_TOLERANCE:
        return fits[best], ""
    worst = min(llf)
    return fits[best], (
        f"; optimisers disagreed (log-likelihood {worst:.2f} to {fits[best].llf:.2f}): "
        f"the best, {best}, kept"
    )
