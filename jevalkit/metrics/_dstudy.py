"""The D-study: what a G-study (:func:`jevalkit.stats.variance_components`) implies for a design:
G and Phi coefficients, the predicted error of a grand mean, and the noise floor of two runs, by
Brennan's (2001, ch. 4) rules. The cheapest design for a target is :func:`choose_design`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import Result, estimator, finish
from ..errors import StatsError
from ..stats import GStudy, variance_components

CASE_FACET = "case"
RESIDUAL = "residual"


def pilot_of(frame: pd.DataFrame) -> GStudy:
    """The contract test's adapter input: the case x system G-study of a results frame."""
    return variance_components(frame, facets=(CASE_FACET, "system"), case="case_id")


def study_of(study: object) -> GStudy:
    """``study`` if it is a G-study; else one line naming what to pass."""
    if not isinstance(study, GStudy):
        raise StatsError(
            f"give the GStudy of jevalkit.stats.variance_components, not a {type(study).__name__}"
        )
    return study


def require_spread(study: GStudy) -> None:
    """A pilot whose components are all 0 (every score equal) predicts a zero error for any
    design: refused rather than planned on."""
    if not pd.to_numeric(study.components["variance"], errors="coerce").fillna(0).sum() > 0:
        raise StatsError(
            "every variance component is 0 (the pilot's scores do not vary): it cannot predict "
            "an error; run a pilot whose scores vary, or plan cases with a Wilson-bound rule"
        )


def design_of(study: GStudy, design: Mapping[str, int] | None) -> dict[str, float]:
    """The pilot's design with the levels in ``design`` changed."""
    return {**study.design, **{k: int(v) for k, v in (design or {}).items()}}  # planned: whole


def _coefficients(
    study: GStudy, design: Mapping[str, float], object: str, generalize: Sequence[str]
) -> dict[str, float]:
    """Brennan's tau (components of the object with no random facet), delta (of the object with
    one) and Delta (every component with a random facet), each divided by the levels of its
    facets other than the object; G = tau / (tau + delta), Phi = tau / (tau + Delta)."""
    rows = list(study.components.itertuples())
    order = list(dict.fromkeys(f for r in rows for f in r.facets))
    if object not in order:
        raise StatsError(f"object {object!r} is not a facet of these components: {order}")
    missing = [f for f in order if f != object and f not in design]
    if missing:
        raise StatsError(f"design has no size for facet(s) {missing}; give each facet a count")
    random = set(generalize) - {object}
    tau = delta = big_delta = 0.0
    for r in rows:
        if r.component == RESIDUAL:
            others = float(np.prod([design[f] for f in order if f != object]))
            part = r.variance / (others * design.get("repeats", 1))
            delta, big_delta = delta + part, big_delta + part
            continue
        s = set(r.facets)
        part = r.variance / float(np.prod([design[f] for f in s if f != object]))
        if object in s and not s & random:
            tau += part
        if object in s and s & random:
            delta += part
        if s & random:
            big_delta += part
    g = tau / (tau + delta) if tau + delta > 0 else np.nan
    phi = tau / (tau + big_delta) if tau + big_delta > 0 else np.nan
    return {"g": g, "phi": phi, "tau": tau, "delta": delta, "Delta": big_delta}


def _reliability_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return reliability(pilot_of(frame), object="system")


@estimator(
    unit="design",
    estimand="G and Phi coefficients of a design",
    interval="none (D-study coefficients)",
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
    adapter=_reliability_adapter,
    note="pinned to Brennan (2001) in tests/metrics/test_dstudy.py",
)
def reliability(
    study: GStudy,
    *,
    object: str = CASE_FACET,
    generalize: Sequence[str] | None = None,
    design: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """G (generalizability, relative decisions) and Phi (dependability, absolute decisions)
    coefficients of ``object`` from a G-study, for the pilot's design or another (``design``:
    levels per facet and ``repeats``; facets not named keep the pilot's levels).

    Returns:
        One row: ``object``, ``g``, ``phi``, ``tau``, ``delta``, ``Delta``, ``design``,
        ``method``. ``generalize`` (default: every facet but the object) names the random facets.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.03, 0.09]})
        >>> study = GStudy.of(t, levels={"case": 50}, repeats=3)
        >>> round(float(reliability(study)["g"].iloc[0]), 3)  # 0.03 / (0.03 + 0.09 / 3)
        0.5
    """
    study = study_of(study)
    plan = design_of(study, design)
    others = [f for f in plan if f not in (object, "repeats")]
    random = list(generalize) if generalize is not None else others
    c = _coefficients(study, plan, object, random)
    return finish(
        {
            "object": [object],
            **{k: [v] for k, v in c.items()},
            "design": [plan],
            "method": [f"Brennan (2001) D-study rules; random: {', '.join(random) or 'none'}"],
        }
    )


@dataclass(frozen=True)
class NoiseFloor(Result):
    """The noise floor of two runs (:func:`run_noise_floor`).

    Attributes:
        noise_floor: the smallest difference of two runs' means beyond their joint noise (t
            quantile x ``sd_difference``); NaN when nothing a new run redraws varied.
        sd_difference: the standard deviation of the difference of two runs' means.
        df: its Satterthwaite degrees of freedom.
        method: what was redrawn, and how the floor was set.
    """

    noise_floor: float
    sd_difference: float
    df: float
    method: str


@dataclass(frozen=True)
class MeanError(Result):
    """The predicted error of a design's grand mean (:func:`mean_error`).

    Attributes:
        se: the predicted standard error.
        df: its Satterthwaite degrees of freedom.
        half_width: the predicted half-width of the interval at ``confidence``.
        confidence: of that interval.
        method: which facets were counted as random.
    """

    se: float
    df: float
    half_width: float
    confidence: float
    method: str


def _run_noise_floor_adapter(frame: pd.DataFrame) -> NoiseFloor:
    return run_noise_floor(pilot_of(frame))


@estimator(
    unit="design",
    estimand="smallest difference of two single runs beyond their joint noise",
    interval="none (a threshold from the components)",
    checks=("order", "rename", "scale", "keys", "duplicates", "one_case", "no_spread", "settings"),
    adapter=_run_noise_floor_adapter,
    note="pinned in tests/metrics/test_dstudy.py",
)
def run_noise_floor(
    study: GStudy,
    *,
    redrawn: Sequence[str] = (),
    design: Mapping[str, int] | None = None,
    confidence: float = 0.95,
) -> NoiseFloor:
    """The smallest difference between the means of two runs of one system on the same design
    levels (same cases, same variants) that exceeds their joint noise: the components a new run
    redraws (the residual, and every component of a facet in ``redrawn``, e.g. a judge's
    samples or the endpoint) count twice; shared facets cancel. Each run has the pilot's
    repeats per cell unless ``design`` says otherwise: two single-repeat runs are
    ``design={"repeats": 1}`` (with 4 pilot repeats the floor is twice as large).

    Returns a :class:`NoiseFloor`: ``noise_floor`` (t quantile x the SD of the difference),
    ``sd_difference``, ``df``, ``method`` (``.table()``: one row). Nothing redrawn varied
    (every repeat identical): ``noise_floor`` is NaN, "not estimable", never 0.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> round(run_noise_floor(GStudy.of(t, levels={"case": 100})).noise_floor, 3)
        0.125
    """
    study = study_of(study)
    require_spread(study)
    var, df = study.error_variance(list(redrawn), design=design_of(study, design))
    if not var > 0:
        return NoiseFloor(
            noise_floor=np.nan,
            sd_difference=np.nan,
            df=np.nan,
            method="not estimable: what a new run redraws never varied in the pilot",
        )
    sd = float(np.sqrt(2 * var))
    q = (
        float(sps.t.ppf(0.5 + confidence / 2, df))
        if np.isfinite(df)
        else float(sps.norm.ppf(0.5 + confidence / 2))
    )
    redraws = ", ".join(["repeats", *redrawn])
    return NoiseFloor(
        noise_floor=q * sd,
        sd_difference=sd,
        df=df,
        method=f"t quantile x SD of the difference of two runs redrawing {redraws}",
    )


def _mean_error_adapter(frame: pd.DataFrame) -> MeanError:
    return mean_error(pilot_of(frame), generalize=[CASE_FACET])


@estimator(
    unit="design",
    estimand="predicted standard error of the grand mean of a design",
    interval="t at the Satterthwaite df (a predicted half-width)",
    checks=("order", "rename", "scale", "keys", "duplicates", "one_case", "no_spread", "settings"),
    adapter=_mean_error_adapter,
    note="the prediction checked by simulation in tests/metrics/test_facets.py and "
    "benchmarks/bench_total_error.py",
)
def mean_error(
    study: GStudy,
    *,
    generalize: Sequence[str],
    design: Mapping[str, int] | None = None,
    confidence: float = 0.95,
) -> MeanError:
    """Predicted standard error, degrees of freedom and half-width of the grand mean of a
    design (default: the pilot's), counting the facets in ``generalize`` as random, as a
    :class:`MeanError` (``.table()``: one row).

    Example:
        >>> t = pd.DataFrame({"component": ["case", "residual"], "facets": [("case",), ()],
        ...                   "variance": [0.04, 0.2]})
        >>> study = GStudy.of(t, levels={"case": 50}, repeats=4)
        >>> round(mean_error(study, generalize=["case"]).half_width, 4)
        0.0853
    """
    study = study_of(study)
    require_spread(study)
    random = list(generalize)
    var, df = study.error_variance(random, design=design_of(study, design))
    se = float(np.sqrt(var))
    return MeanError(
        se=se,
        df=df,
        half_width=float(sps.t.ppf(0.5 + confidence / 2, df)) * se,
        confidence=confidence,
        method=f"Brennan (2001) D-study error of the grand mean; random: {', '.join(random) or 'none'}; "
        "t at the Satterthwaite df",
    )
