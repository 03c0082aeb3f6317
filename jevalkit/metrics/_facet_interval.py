"""The facet-aware interval of a mean or a paired difference: the facets a claim generalises
over (case, variant, judge sample, endpoint, ...) counted as random, from the variance
components of the scored rows (:func:`jevalkit.stats.variance_components`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import CaseSpec, Prepared, columns_of, group_codes, require
from ..errors import StatsError
from ..stats import variance_components

FACET_COLUMNS = ["se_facets", "ci_low_facets", "ci_high_facets", "method_facets"]
CASE_FACET = "case"


def no_interval(reason: str) -> dict:
    """The facet columns of a row that has no facet-aware interval, with the reason."""
    return {
        "se_facets": np.nan,
        "ci_low_facets": np.nan,
        "ci_high_facets": np.nan,
        "method_facets": reason,
    }


def check_generalize(generalize: Sequence[str] | None) -> None:
    """``generalize`` is None or a non-empty list of facet columns."""
    if generalize is not None and (isinstance(generalize, str) or not len(generalize)):
        raise StatsError("generalize takes a list of facet columns, e.g. ['case', 'variant']")


def check_nested(nested: Mapping[str, str] | None, generalize: Sequence[str] | None) -> None:
    """``nested`` maps a generalised facet to its parent (``{"variant": "case"}``: each case
    has its own variants); it needs ``generalize``."""
    if nested is None:
        return
    if not isinstance(nested, Mapping):
        raise StatsError("nested takes a mapping facet -> parent, e.g. {'variant': 'case'}")
    if generalize is None:
        raise StatsError("nested= describes the facets of generalize=: pass generalize too")
    named = set(generalize) | {CASE_FACET}
    for f, parent in nested.items():
        if f not in named or parent not in named:
            raise StatsError(
                f"nested={{{f!r}: {parent!r}}}: both must be in generalize ({list(generalize)}) "
                "or be 'case'"
            )


def other_facets(
    generalize: Sequence[str] | None, case: CaseSpec, data: object = None
) -> list[str]:
    """The generalised facets besides the case (a case column counts as the case), each a
    column of ``data`` when it is a frame."""
    check_generalize(generalize)
    cases = set(columns_of(case))
    others = [g for g in dict.fromkeys(generalize or ()) if g != CASE_FACET and g not in cases]
    if isinstance(data, pd.DataFrame):
        for facet in others:
            require(data, facet, "generalize", "a facet to generalise over")
    return others


def facet_interval(
    frame: pd.DataFrame,
    values: np.ndarray,
    case_codes: np.ndarray,
    generalize: Sequence[str],
    case: CaseSpec,
    estimate: float,
    confidence: float,
    bounds: tuple[float, float] = (0.0, 1.0),
    mean_of_cases: bool = False,
    nested: Mapping[str, str] | None = None,
) -> dict:
    """The interval of a mean that counts each facet in ``generalize`` as random (one group's
    scored rows): variance components of [case, the other facets], the error variance of the
    mean (of the rows, or with ``mean_of_cases`` of the case means, each case weighted equally
    whatever its repeats) from the components that involve a generalised facet plus the
    residual; a generalized (fiducial) interval from the mean squares (the Satterthwaite t when
    the design has no mean-square form), clipped to ``bounds``."""
    cases = set(columns_of(case))
    named = list(
        dict.fromkeys(CASE_FACET if g in cases or g == CASE_FACET else g for g in generalize)
    )
    facets = list(dict.fromkeys([CASE_FACET, *named]))
    coded = pd.DataFrame({CASE_FACET: pd.factorize(case_codes, sort=True)[0]})
    for facet in facets[1:]:
        require(frame, facet, "generalize", "a facet to generalise over")
        coded[facet] = group_codes(frame, [facet])[0]
    coded["_value"] = values
    per_case = coded.groupby(CASE_FACET)[CASE_FACET].transform("size").to_numpy(float)
    coded["_weight"] = 1.0 / per_case if mean_of_cases else 1.0
    single = [f for f in facets if coded[f].nunique() < 2]
    not_estimable = [f for f in single if f in named]
    if not_estimable:
        return no_interval(f"not estimable: {', '.join(not_estimable)} has one level here")
    facets = [f for f in facets if f not in single]
    if not facets:
        return no_interval("not estimable: no facet varies")
    within = {f: p for f, p in (nested or {}).items() if f in facets and p in facets}
    # the values lie in ``bounds`` (scores in [0, 1], or paired differences in [-1, 1]): the
    # G-study reads them on that scale, and its variances come back in the values' own units
    width = float(bounds[1] - bounds[0])
    try:
        study = variance_components(
            coded,
            facets=facets,
            score="_value",
            case=CASE_FACET,
            system=None,
            repeat=None,
            confidence=confidence,
            weights="_weight",
            nested=within,
            scale=bounds,
        )
    except StatsError as exc:
        return no_interval(f"not estimable: {exc}")
    var, df = study.error_variance([f for f in named if f in facets])
    var *= width**2
    if not var > 0:
        return no_interval("not estimable: no variance in the counted components")
    se = float(np.sqrt(var))
    counted = [f for f in named if f in facets]
    half, exact = study.half_width(counted, confidence)
    half *= width
    t_half = float(sps.t.ppf(0.5 + confidence / 2, df)) * se
    if exact and np.isclose(half, t_half, rtol=1e-9, atol=0):  # one mean square: the t
        half, kind, how = t_half, "t interval", "ANOVA"
    elif np.isfinite(half) and half > 0:
        kind = "generalized (fiducial) interval"
        how = (
            "ANOVA mean squares"
            if exact
            else "REML, drawn on the balanced analogue of the design: approximate"
        )
    else:  # no mean-square form (e.g. unbalanced nested levels): the Satterthwaite t
        half = t_half
        kind = "t interval"
        how = "ANOVA" if study.balanced else "REML"
    low, high = estimate - half, estimate + half
    clipped = low < bounds[0] or high > bounds[1]
    return {
        "se_facets": se,
        "ci_low_facets": max(low, bounds[0]),
        "ci_high_facets": min(high, bounds[1]),
        "method_facets": (
            f"{kind} generalising over {' + '.join(generalize)}"
            + "".join(f", {f} nested in {p}" for f, p in within.items())
            + " (variance components, "
            f"{how}; Satterthwaite df {df:.1f})"
            + (f", clipped to [{bounds[0]:g}, {bounds[1]:g}]" if clipped else "")
        ),
    }


def with_facets(
    p: Prepared,
    generalize: Sequence[str] | None,
    case: CaseSpec,
    estimates: np.ndarray,
    confidence: float,
    mean_of_cases: bool = False,
    nested: Mapping[str, str] | None = None,
) -> dict[str, list]:
    """The facet-aware interval columns of a metric's table, one G-study per group of the
    prepared input ``p`` (for ``mean_score``, a mean of case means: ``mean_of_cases``, and
    ``pass_rate``, a mean of rows); none without ``generalize``."""
    check_nested(nested, generalize)
    if generalize is None:
        return {}
    check_generalize(generalize)
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
                mean_of_cases=mean_of_cases,
                nested=nested,
            )
        )
    return {column: [row[column] for row in rows] for column in FACET_COLUMNS}


def paired_facet_interval(
    rows: pd.DataFrame,
    left: str,
    right: str,
    others: Sequence[str],
    with_case: bool,
    estimate: float,
    confidence: float,
    nested: Mapping[str, str] | None = None,
) -> dict:
    """The facet-aware interval of ``left - right`` from one group's scored rows (columns
    ``_case``, ``_system``, ``_v`` and the ``others`` facets): both systems' cell means (a cell
    is a case and a level of every other generalised facet, e.g. a variant) are paired, so the
    facets they share cancel; the variance components of the paired differences give the
    interval as in :func:`facet_interval`."""
    if not np.isfinite(estimate):
        return no_interval("no paired cases")
    both = rows[rows["_system"].isin([left, right])]
    cells = both.groupby(["_case", *others, "_system"])["_v"].mean().unstack("_system")
    if left not in cells.columns or right not in cells.columns:
        return no_interval("not estimable: a system has no scored rows")
    paired = (cells[left] - cells[right]).dropna().rename("_value").reset_index()
    result = facet_interval(
        paired,
        paired["_value"].to_numpy(),
        paired["_case"].to_numpy(),
        [CASE_FACET] * with_case + list(others),
        CASE_FACET,
        estimate,
        confidence,
        bounds=(-1.0, 1.0),
        nested=nested,
    )
    result["method_facets"] = (
        f"paired by case{''.join(' and ' + o for o in others)}; " + result["method_facets"]
    )
    return result
