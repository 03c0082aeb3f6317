"""Facets of a results frame (case, variant, judge sample, endpoint, ...): their variance
components, the interval of a mean that counts the facets a claim generalises over, G and Phi
coefficients, a judge's test-retest agreement and the noise floor of two runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import estimator
from ..errors import StatsError
from ..stats import design_error, g_coefficients, g_study, noise_floor
from ._frame import (
    CASE_COLUMNS,
    CaseSpec,
    Prepared,
    check_key_types,
    columns_of,
    group_codes,
    require,
)

FACET_INTERVAL_COLUMNS = ["se_facets", "ci_low_facets", "ci_high_facets", "method_facets"]
CASE_FACET = "case"


def _facet_frame(
    data: pd.DataFrame,
    value: str,
    facets: Sequence[str],
    case: CaseSpec,
    index: str | None = "repeat",
) -> tuple[pd.DataFrame, int]:
    """Integer-coded facet columns and the value, rows without a value dropped (counted).

    ``case`` (the facet named ``case``) is the results' case identity (several columns); any
    other facet is a column of ``data``. A missing value in a facet column is a level. Case
    keys of different types in two systems are refused (they never meet); so are rows that
    repeat a case, system, facet level and ``index`` (the column numbering repeats, when
    present): a copied row is not another observation.
    """
    require(data, value, "score", "the values to decompose")
    missing = data[value].isna().to_numpy().copy()
    if "error" in data.columns:
        missing |= data["error"].notna().to_numpy()
    usable = data.loc[~missing]
    _refuse_copies(usable, facets, case, index)
    out = pd.DataFrame(index=range(len(usable)))
    for facet in facets:
        if facet == CASE_FACET:
            cols = columns_of(case)
            if not cols:
                raise StatsError("facet 'case' needs case= columns (case=None has no cases)")
            for column in cols:
                require(data, column, "case", "the unit of analysis")
        else:
            cols = [require(data, facet, "facets", "a facet")]
        out[facet] = group_codes(usable, cols)[0]
    try:
        out["_value"] = usable[value].astype(float).to_numpy()
    except (TypeError, ValueError):
        raise StatsError(f"column {value!r} holds values that are not numbers") from None
    return out, int(missing.sum())


def _refuse_copies(
    usable: pd.DataFrame, facets: Sequence[str], case: CaseSpec, index: str | None
) -> None:
    case_cols = [c for c in columns_of(case) if c in usable.columns] if CASE_FACET in facets else []
    if case_cols:
        check_key_types(usable, case_cols, "system")
    if index is None or index not in usable.columns:
        return  # no column numbers the repeats: rows sharing a cell are its replicates
    others = [f for f in facets if f != CASE_FACET and f in usable.columns]
    keys = list(dict.fromkeys([*case_cols, *others, index]))
    if "system" in usable.columns and "system" not in keys:
        keys.insert(0, "system")
    twice = usable[keys].astype(str).duplicated(keep=False)
    if twice.any():
        first = usable.loc[twice, keys].iloc[0].to_dict()
        raise StatsError(
            f"{int(twice.sum())} rows share {first}: duplicated rows are not repeats; drop "
            f"them (DataFrame.drop_duplicates) or number the repeats in {index!r}"
        )


def present_facets(
    data: pd.DataFrame, facets: Sequence[str], *, case: CaseSpec = CASE_COLUMNS
) -> tuple[list[str], list[str]]:
    """The facets that vary in ``data`` (``case``: the case identity), and those left out
    (absent, or one level), for a G-study of whatever a run varied.

    Example:
        >>> d = pd.DataFrame({"case_id": [1, 2], "variant": ["a", "a"]})
        >>> present_facets(d, ["case", "variant", "judge_sample"], case="case_id")
        (['case'], ['variant', 'judge_sample'])
    """
    kept, left_out = [], []
    for facet in facets:
        columns = columns_of(case) if facet == CASE_FACET else [facet]
        varies = (
            bool(columns)
            and len(data) > 0  # nothing varies in no rows
            and all(c in data.columns for c in columns)
            and group_codes(data, columns)[0].max() > 0
        )
        (kept if varies else left_out).append(facet)
    return kept, left_out


@estimator(
    unit="facet level",
    estimand="variance of the score over random facets (a G-study)",
    interval="Satterthwaite chi-square per component (ANOVA), chi-square on levels (REML)",
    checks=("order", "rename", "method", "keys", "duplicates", "one_case", "no_spread"),
    call={"facets": ("case", "system"), "case": "case_id"},
    note="any numeric score (no scale); pinned to Brennan (2001) and statsmodels MixedLM in tests/stats/test_gstudy.py",
)
def variance_components(
    data: pd.DataFrame,
    *,
    facets: Sequence[str] = (CASE_FACET,),
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    nested: Mapping[str, str] | None = None,
    method: str = "auto",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """A G-study of a results frame: the variance of ``score`` split over random facets.

    Args:
        data: results (or any frame with the facet columns).
        facets: column names of crossed random facets; ``"case"`` means the case identity
            (``case=``, default probe + version + case id). What varies within a cell of all
            facets (repeats, facets not listed) is the ``residual``.
        score: the value column (``passed`` for verdicts works too).
        case: the columns naming a case, for the facet ``"case"``.
        nested: facet -> its parent (``{"variant": "case"}`` when each case has its own
            paraphrases).
        method: ``auto`` (ANOVA when balanced, else REML), ``anova`` or ``reml``.
        confidence: of the component intervals.

    Returns:
        One row per component: ``component`` (``case``, ``case x variant``, nested
        ``variant:case``, ``residual``), ``facets``, ``variance`` (a negative ANOVA estimate is
        set to 0 and ``method`` says so), ``estimate`` (before that), ``share``, ``df``,
        ``ci_low``, ``ci_high`` (Satterthwaite), ``n_levels``, ``method``. ``attrs`` carries
        ``levels`` (per facet), ``repeats`` (observations per cell), ``balanced``, ``nested``,
        ``n``, ``n_missing`` and ``cost_per_request`` (mean ``cost_usd`` of the rows that
        have one, else None): what :func:`jevalkit.plan_design` needs.

    Notes:
        Balanced: ANOVA (expected mean squares) estimators, pinned to Brennan (2001) synthetic
        data sets 3 and 4. Unbalanced: REML (statsmodels ``MixedLM``, variance-component
        formulas). See :func:`jevalkit.stats.g_study`.

    Example:
        >>> rng = np.random.default_rng(1)
        >>> d = pd.DataFrame([(c, v, r) for c in range(40) for v in range(3) for r in range(4)],
        ...                  columns=["case_id", "variant", "repeat"])
        >>> d["score"] = (rng.normal(0, 0.3, 40)[d["case_id"]] + rng.normal(0, 0.2, 3)[d["variant"]]
        ...               + rng.normal(0, 0.1, len(d)))
        >>> vc = variance_components(d, facets=["case", "variant"], case="case_id")
        >>> vc["component"].tolist()
        ['case', 'variant', 'case x variant', 'residual']
        >>> vc.attrs["levels"], vc.attrs["repeats"]
        ({'case': 40, 'variant': 3}, 4.0)
    """
    frame, n_missing = _facet_frame(data, score, list(facets), case)
    if frame.empty:
        raise StatsError(f"no rows with a {score!r} value")
    study = g_study(
        frame, list(facets), "_value", nested=nested, method=method, confidence=confidence
    )
    table = study.table.copy()
    table.attrs = {
        "levels": dict(study.levels),
        "repeats": study.replicates,
        "balanced": study.balanced,
        "nested": dict(study.nested),
        "n": len(frame),
        "n_missing": n_missing,
        "cost_per_request": _cost_per_request(data),
    }
    return table


def _cost_per_request(data: pd.DataFrame) -> float | None:
    """The mean dollars per request of the rows whose cost is known (None when none is, or
    when the requests were free, e.g. the embedded model: then the planner counts requests)."""
    if "cost_usd" not in data.columns:
        return None
    cost = pd.to_numeric(data["cost_usd"], errors="coerce").dropna()
    return float(cost.mean()) if len(cost) and cost.mean() > 0 else None


def facet_interval(
    frame: pd.DataFrame,
    values: np.ndarray,
    case_codes: np.ndarray,
    generalize: Sequence[str],
    case: CaseSpec,
    estimate: float,
    confidence: float,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> dict:
    """The interval of a mean that counts each facet in ``generalize`` as random (one group's
    usable rows): variance components of [case, the other facets], the grand mean's variance
    from the components that involve a generalised facet plus the residual, a t interval with
    Satterthwaite degrees of freedom, clipped to [0, 1]."""
    cases = set(columns_of(case))
    named = [CASE_FACET if g in cases or g == CASE_FACET else g for g in generalize]
    if CASE_FACET in frame.columns and CASE_FACET not in cases:
        frame = frame.drop(columns=CASE_FACET)
    named = list(dict.fromkeys(named))
    facets = list(dict.fromkeys([CASE_FACET, *named]))
    coded = pd.DataFrame({CASE_FACET: pd.factorize(case_codes, sort=True)[0]})
    for facet in facets[1:]:
        require(frame, facet, "generalize", "a facet to generalise over")
        coded[facet] = group_codes(frame, [facet])[0]
    coded["_value"] = values
    label = " + ".join(generalize)
    single = [f for f in facets if coded[f].nunique() < 2]
    not_estimable = [f for f in single if f in named]
    if not_estimable:
        return _no_interval(f"not estimable: {', '.join(not_estimable)} has one level here")
    facets = [f for f in facets if f not in single]
    if not facets:
        return _no_interval("not estimable: no facet varies")
    try:
        study = g_study(coded, facets, "_value", confidence=confidence)
    except StatsError as exc:
        return _no_interval(f"not estimable: {exc}")
    var, df = study.error_variance([f for f in named if f in facets])
    if not var > 0:
        return _no_interval("not estimable: no variance in the counted components")
    se = float(np.sqrt(var))
    half = float(sps.t.ppf(0.5 + confidence / 2, df)) * se
    low, high = estimate - half, estimate + half
    clipped = low < bounds[0] or high > bounds[1]
    how = "ANOVA" if study.balanced else "REML"
    return {
        "se_facets": se,
        "ci_low_facets": max(low, bounds[0]),
        "ci_high_facets": min(high, bounds[1]),
        "method_facets": (
            f"t interval generalising over {label} (variance components, {how}; "
            f"Satterthwaite df {df:.1f})" + (", clipped to [0, 1]" if clipped else "")
        ),
    }


def with_facets(
    out: pd.DataFrame,
    p: Prepared,
    generalize: Sequence[str] | None,
    case: CaseSpec,
    estimates: np.ndarray,
    confidence: float,
) -> pd.DataFrame:
    """Add the facet-aware interval columns to a metric's table (one G-study per group of
    the prepared input ``p``), for ``mean_score`` and ``pass_rate``."""
    if generalize is None:
        return out
    if isinstance(generalize, str) or not len(generalize):
        raise StatsError("generalize takes a list of facet columns, e.g. ['case', 'variant']")
    if p.unit != "case":
        raise StatsError("generalize needs cases (a DataFrame and case= columns)")
    rows = []
    for i in range(len(p.groups)):
        mask = p.group == i
        rows.append(
            facet_interval(
                p.frame.loc[mask],
                p.values[mask],
                p.case[mask],
                generalize,
                case,
                float(estimates[i]),
                confidence,
            )
        )
    facets = pd.DataFrame(rows, columns=FACET_INTERVAL_COLUMNS)
    for column in FACET_INTERVAL_COLUMNS:
        out[column] = facets[column].to_numpy()
    return out


def _no_interval(reason: str) -> dict:
    return {
        "se_facets": np.nan,
        "ci_low_facets": np.nan,
        "ci_high_facets": np.nan,
        "method_facets": reason,
    }


@estimator(
    unit="design",
    estimand="G and Phi coefficients of a design",
    interval="none (D-study coefficients)",
    data="arrays",
    note="takes variance components, not a frame; pinned to Brennan (2001) in tests/stats/test_gstudy.py",
)
def reliability(
    components: pd.DataFrame,
    *,
    object: str = CASE_FACET,
    generalize: Sequence[str] | None = None,
    design: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """G (generalizability, relative decisions) and Phi (dependability, absolute decisions)
    coefficients of ``object`` from :func:`variance_components`, for the pilot's design or
    another (``design``: levels per facet and ``repeats``).

    Returns one row: ``object``, ``g``, ``phi``, ``tau``, ``delta``, ``Delta``, ``design``,
    ``method``.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.03, 0.09]})
        >>> t.attrs = {"levels": {"case": 50}, "repeats": 3}
        >>> round(float(reliability(t)["g"].iloc[0]), 3)  # 0.03 / (0.03 + 0.09 / 3)
        0.5
    """
    plan = _design(components, design)
    others = [f for f in plan if f not in (object, "repeats")]
    random = list(generalize) if generalize is not None else others
    c = g_coefficients(components, plan, object=object, generalize=random)
    return pd.DataFrame(
        [
            {
                "object": object,
                **c,
                "design": plan,
                "method": f"Brennan (2001) D-study rules; random: {', '.join(random) or 'none'}",
            }
        ]
    )


def _require_spread(components: pd.DataFrame) -> None:
    """A pilot whose components are all 0 (every score equal) predicts a zero error for any
    design: refuse rather than plan on it."""
    if not pd.to_numeric(components["variance"], errors="coerce").fillna(0).sum() > 0:
        raise StatsError(
            "every variance component is 0 (the pilot's scores do not vary): it cannot predict "
            "an error; run a pilot whose scores vary, or plan cases with a Wilson-bound rule"
        )


def _design(components: pd.DataFrame, design: Mapping[str, int] | None) -> dict[str, int]:
    levels = components.attrs.get("levels")
    if design is None and levels is None:
        raise StatsError(
            "give design= (levels per facet and repeats), or components from "
            "metrics.variance_components (they carry the pilot's design)"
        )
    plan = {k: int(v) for k, v in (levels or {}).items()}
    plan["repeats"] = round(float(components.attrs.get("repeats", 1)))
    plan.update({k: int(v) for k, v in (design or {}).items()})
    return plan


@estimator(
    unit="design",
    estimand="smallest difference of two single runs beyond their joint noise",
    interval="none (a threshold from the components)",
    data="arrays",
    note="takes variance components; pinned in tests/stats/test_gstudy.py",
)
def run_noise_floor(
    components: pd.DataFrame,
    *,
    redrawn: Sequence[str] = (),
    design: Mapping[str, int] | None = None,
    confidence: float = 0.95,
) -> dict[str, float]:
    """The smallest difference between two single runs (same cases and variants) that exceeds
    their joint noise, from :func:`variance_components` (see
    :func:`jevalkit.stats.noise_floor`); ``redrawn`` names facets a new run draws afresh
    (e.g. judge samples, the endpoint).

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> t.attrs = {"levels": {"case": 100}, "repeats": 1}
        >>> round(run_noise_floor(t)["noise_floor"], 3)
        0.125
    """
    _require_spread(components)
    plan = _design(components, design)
    return noise_floor(
        components,
        plan,
        redrawn=redrawn,
        confidence=confidence,
        nested=components.attrs.get("nested"),
    )


@estimator(
    unit="design",
    estimand="predicted standard error of the grand mean of a design",
    interval="t at the Satterthwaite df (a predicted half-width)",
    data="arrays",
    note="takes variance components; the planner's prediction checked by simulation in tests/metrics/test_facets.py and benchmarks/bench_total_error.py",
)
def mean_error(
    components: pd.DataFrame,
    *,
    generalize: Sequence[str],
    design: Mapping[str, int] | None = None,
    confidence: float = 0.95,
) -> dict[str, float]:
    """Predicted standard error, degrees of freedom and half-width of the grand mean of a
    design (default: the pilot's), counting the facets in ``generalize`` as random.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> t.attrs = {"levels": {"case": 50}, "repeats": 4}
        >>> round(mean_error(t, generalize=["case"])["half_width"], 4)
        0.0853
    """
    _require_spread(components)
    plan = _design(components, design)
    var, df = design_error(components, plan, generalize, nested=components.attrs.get("nested"))
    se = float(np.sqrt(var))
    return {"se": se, "df": df, "half_width": float(sps.t.ppf(0.5 + confidence / 2, df)) * se}


@estimator(
    unit="case",
    estimand="ICC of a judge's repeated judgments (absolute agreement, consistency)",
    interval="none (point coefficients)",
    checks=("order", "rename", "method", "keys", "duplicates", "one_case"),
    call={"case": "case_id"},
    note="pinned to pingouin.intraclass_corr in tests/metrics/test_facets.py",
)
def judge_retest(
    data: pd.DataFrame,
    *,
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    occasion: str = "repeat",
) -> pd.DataFrame:
    """Test-retest agreement of a judge: the same judgments requested again (another day, seed
    or sample; ``occasion`` numbers them) on the same cases (cases missing an occasion are
    left out). From the two-way G-study case x occasion: the intraclass correlations of
    absolute agreement, sigma2(case) / (sigma2(case) + (sigma2(occasion) + sigma2(residual)) /
    k), and of consistency (without the occasion term), for one judgment (k = 1) and for the
    mean of the occasions judged; the same numbers as McGraw & Wong's ICC(A,1), ICC(C,1),
    ICC(A,k), ICC(C,k) (checked against pingouin in the tests).

    Returns one row per coefficient: ``coefficient``, ``judgments`` (k), ``value``,
    ``judge_noise_share`` (share of the variance that is not the case's), ``n_cases``,
    ``n_occasions``, ``method``.

    Example:
        >>> d = pd.DataFrame({"case_id": list("abcdef") * 2, "repeat": [0] * 6 + [1] * 6,
        ...                   "score": [.1, .5, .9, .3, .7, .2, .2, .5, .8, .3, .6, .2]})
        >>> r = judge_retest(d, case="case_id")
        >>> r[["coefficient", "judgments"]].values.tolist()[0], round(float(r["value"][0]), 4)
        (['absolute agreement', 1], 0.9673)
        >>> round(float(r["value"][1]), 4)  # consistency: the occasions' shift left out
        0.9631
    """
    require(data, occasion, "occasion", "which request of the same judgment a row is")
    frame, _ = _facet_frame(data, score, [CASE_FACET, occasion], case, index=occasion)
    k = frame[occasion].nunique()
    if k < 2:
        raise StatsError(f"test-retest needs two or more occasions in {occasion!r}, got {k}")
    complete = frame.groupby(CASE_FACET)[occasion].nunique() == k
    frame = frame[frame[CASE_FACET].isin(complete[complete].index)]
    cell = frame.groupby([CASE_FACET, occasion], as_index=False)["_value"].mean()
    n_cases = cell[CASE_FACET].nunique()
    if n_cases < 2:
        raise StatsError("test-retest needs two or more cases judged on every occasion")
    study = g_study(cell, [CASE_FACET, occasion], "_value")
    # the unbiased estimates (a negative one kept), as McGraw & Wong's formulas use them
    v = dict(zip(study.table["component"], study.table["estimate"], strict=True))
    case_var, occ_var = v[CASE_FACET], v[occasion]
    resid = v[f"{CASE_FACET} x {occasion}"]
    total = case_var + occ_var + resid
    rows = []
    for judgments in (1, k):
        for name, error in (
            ("absolute agreement", (occ_var + resid) / judgments),
            ("consistency", resid / judgments),
        ):
            rows.append(
                {
                    "coefficient": name,
                    "judgments": judgments,
                    "value": case_var / (case_var + error) if case_var + error > 0 else np.nan,
                    "judge_noise_share": (occ_var + resid) / total if total > 0 else np.nan,
                    "n_cases": n_cases,
                    "n_occasions": k,
                    "method": "ICC from the case x occasion G-study (ANOVA estimates, "
                    "negative ones kept as McGraw & Wong 1996)",
                }
            )
    return pd.DataFrame(rows)


def facet_difference(
    data: pd.DataFrame,
    value: str,
    *,
    system: str,
    left: str,
    right: str,
    generalize: Sequence[str],
    case: CaseSpec,
    estimate: float,
    confidence: float,
) -> dict:
    """The facet-aware interval of ``left - right``: both systems' cell means (a cell is a case
    and a level of every other generalised facet, e.g. a variant) are paired, so the facets they
    share cancel; the variance components of the paired differences give the interval as in
    :func:`facet_interval`."""
    missing = data[value].isna()
    if "error" in data.columns:
        missing |= data["error"].notna()
    usable = data.loc[~missing & data[system].astype(str).isin([left, right])]
    cases = set(columns_of(case))
    others = [g for g in dict.fromkeys(generalize) if g not in cases and g != CASE_FACET]
    for facet in others:
        require(data, facet, "generalize", "a facet to generalise over")
    keys = pd.DataFrame({CASE_FACET: group_codes(usable, columns_of(case))[0]})
    for facet in others:
        keys[facet] = group_codes(usable, [facet])[0]
    keys["_system"] = usable[system].astype(str).to_numpy()
    keys["_v"] = usable[value].astype(float).to_numpy()
    cells = keys.groupby([CASE_FACET, *others, "_system"])["_v"].mean().unstack("_system")
    if left not in cells.columns or right not in cells.columns:
        return _no_interval("not estimable: a system has no usable rows")
    paired = (cells[left] - cells[right]).dropna().rename("_value").reset_index()
    named = ([CASE_FACET] if len(others) < len(list(dict.fromkeys(generalize))) else []) + others
    result = facet_interval(
        paired,
        paired["_value"].to_numpy(),
        paired[CASE_FACET].to_numpy(),
        named,
        CASE_FACET,
        estimate,
        confidence,
        bounds=(-1.0, 1.0),
    )
    result["method_facets"] = (
        f"paired by case{''.join(' and ' + o for o in others)}; " + result["method_facets"]
    )
    return result


def difference_interval(
    data, by_cols, key, metric, value, system, left, right, generalize, case, delta, confidence
) -> dict:
    """``compare``'s facet-aware columns for one (group, pair, metric) row: win rates have
    none; the rows of the group ``key`` go to :func:`facet_difference`."""
    if metric == "win_rate":
        return {c: np.nan for c in FACET_INTERVAL_COLUMNS} | {
            "method_facets": "not estimable: a win rate has no facet-aware interval"
        }
    if not np.isfinite(delta):
        return {c: np.nan for c in FACET_INTERVAL_COLUMNS} | {"method_facets": "no paired cases"}
    sub = data
    for column, level in zip(by_cols, key, strict=True):
        sub = sub[sub[column].isna()] if pd.isna(level) else sub[sub[column] == level]
    return facet_difference(
        sub,
        value,
        system=system,
        left=left,
        right=right,
        generalize=generalize,
        case=case,
        estimate=delta,
        confidence=confidence,
    )
