"""The cheapest design: from a pilot's G-study and a cost per request, the design (cases,
variants, repeats, judge samples, ...) that reaches a target half-width for least money, or the
narrowest one a budget buys (a D-study search)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import Result, estimator, finish
from ..errors import StatsError
from ..stats import GStudy
from ._dstudy import CASE_FACET, pilot_of, require_spread, study_of

COLUMNS = ["requests", "cost_usd", "se", "df", "half_width", "chosen"]


@dataclass(frozen=True, eq=False)
class DesignChoice(Result):
    """The designs :func:`choose_design` found, best first.

    Attributes:
        designs: one row per design: one column per facet and ``repeats`` (levels),
            ``requests``, ``cost_usd``, ``se``, ``df``, ``half_width``, ``chosen`` (the first).
        generalize: the random facets.
        confidence: of the planned interval.
        priced: whether ``cost_usd`` is dollars (the pilot's prices or ``cost_per_request``)
            or counts requests (no prices known).
    """

    designs: pd.DataFrame
    generalize: tuple[str, ...]
    confidence: float
    priced: bool

    def table(self) -> pd.DataFrame:
        """The designs, best first."""
        return self.designs.copy()

    @property
    def chosen(self) -> dict:
        """The best design's row."""
        return self.designs.iloc[0].to_dict()


@estimator(
    unit="design",
    estimand="the cheapest design reaching a target half-width",
    interval="none (a planning table)",
    checks=("order", "rename", "keys", "duplicates", "one_case", "no_spread"),
    adapter=lambda frame: _planned(pilot_of(frame)),
    note="its predicted half-width simulated in tests/metrics/test_facets.py and "
    "benchmarks/bench_total_error.py",
)
def choose_design(
    study: GStudy,
    *,
    target_half_width: float | None = None,
    budget_usd: float | None = None,
    cost_per_request: float | None = None,
    generalize: Sequence[str] | None = None,
    limits: Mapping[str, int] | None = None,
    confidence: float = 0.95,
    top: int = 10,
) -> DesignChoice:
    """The cheapest design whose predicted interval half-width is at most
    ``target_half_width``, or the narrowest whose cost is within ``budget_usd``.

    Args:
        study: the G-study of a pilot run (:func:`jevalkit.stats.variance_components`; it
            carries the pilot's design and prices).
        target_half_width, budget_usd: give one (or both: the target within the budget).
        cost_per_request: dollars per request (default: the pilot's mean ``cost_usd``, 0 for a
            free model; when its rows carry no cost, ``cost_usd`` is NaN, ``priced`` is False,
            designs are ranked by ``requests`` and a ``budget_usd`` is refused).
        generalize: the random facets (default: every facet of the study); the others are
            fixed and keep the pilot's levels.
        limits: the most levels a facet (or ``repeats``) may have (default: 10000 cases, 20
            repeats, and of any other facet the levels the pilot has: a probe with 3 variants
            is not planned with 4; write more and raise it here, e.g. ``{"variant": 5}``).
        confidence: of the planned interval.
        top: designs returned.

    Returns:
        A :class:`DesignChoice`: the best ``top`` designs, best first (``.table()``), each with
        ``half_width`` (t quantile at the Satterthwaite df x se, as :func:`mean_score` with
        ``generalize`` will compute it when the components are as estimated). Nothing reaches
        the target within the limits and budget: a :class:`StatsError` saying what is closest.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "variant", "case x variant", "residual"],
        ...     "facets": [("case",), ("variant",), ("case", "variant"), ()],
        ...     "variance": [0.04, 0.002, 0.01, 0.05]})
        >>> study = GStudy.of(t, levels={"case": 20, "variant": 3}, repeats=5)
        >>> best = choose_design(study, target_half_width=0.05, limits={"variant": 10}).chosen
        >>> int(best["case"]), int(best["variant"]), int(best["repeats"]), int(best["requests"])
        (122, 9, 1, 1098)
        >>> choose_design(study, target_half_width=0.05)  # the pilot's 3 variants at most
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: no design within the limits reaches a half-width of 0.05: the narrowest is 0.1102 (case=10000, variant=3, repeats=20); raise limits= or the budget, or generalise over fewer facets
    """
    if target_half_width is None and budget_usd is None:
        raise StatsError("give target_half_width, budget_usd, or both")
    if target_half_width is not None and not target_half_width > 0:
        raise StatsError(f"target_half_width must be positive, got {target_half_width}")
    if budget_usd is not None and not budget_usd > 0:
        raise StatsError(f"budget_usd must be positive, got {budget_usd}")
    study = study_of(study)
    if cost_per_request is None:
        cost_per_request = study.cost_per_request
    priced = cost_per_request is not None
    price = float(cost_per_request) if priced else math.nan
    if priced and not price >= 0:
        raise StatsError(f"cost_per_request must be 0 or more, got {cost_per_request}")
    if budget_usd is not None and not priced:
        raise StatsError(
            "budget_usd needs a price: these results carry no cost_usd; give cost_per_request "
            "(dollars per request) or a target_half_width"
        )
    require_spread(study)
    pilot = study.design
    facets = [f for f in pilot if f != "repeats"]
    random = list(generalize) if generalize is not None else facets
    unknown = [f for f in random if f not in facets]
    if unknown:
        raise StatsError(f"generalize names {unknown}, not facets of the components: {facets}")
    has_residual = "residual" in set(study.components["component"])
    caps = {f: (10_000 if f == CASE_FACET else int(pilot[f])) for f in facets}
    caps["repeats"] = 20 if has_residual else 1
    caps.update({k: int(v) for k, v in (limits or {}).items()})
    # the search: every combination of the small facets; the case count by bisection
    # (the half-width falls as cases grow)
    big = CASE_FACET if CASE_FACET in random else (random[0] if random else None)
    ranges = {}
    for f in [*facets, "repeats"]:
        if f == big:
            continue
        if f in random:
            ranges[f] = range(2, max(caps[f], 2) + 1)
        elif f == "repeats":
            ranges[f] = range(1, caps["repeats"] + 1)
        else:
            ranges[f] = [pilot[f]]  # fixed facet: its levels stay
    rows = []
    for combo in itertools.product(*ranges.values()):
        design = dict(zip(ranges, combo, strict=True))
        per_big = math.prod(v for k, v in design.items() if k in facets) * design["repeats"]

        def evaluate(n_big: int, design=design, per_big=per_big) -> dict:
            full = {**design, **({big: n_big} if big else {})}
            var, df = study.error_variance(random, design=full)
            requests = per_big * (n_big if big else 1)
            se = math.sqrt(var)
            return {
                **full,
                "requests": requests,
                "cost_usd": requests * price,
                "se": se,
                "df": df,
                "half_width": float(sps.t.ppf(0.5 + confidence / 2, df)) * se,
            }

        if big is None:
            rows.append(evaluate(1))
            continue
        high = caps[big]
        if budget_usd is not None and price > 0:
            high = min(high, int(budget_usd // (per_big * price)))
        if high < 2:
            continue
        if target_half_width is None:
            rows.append(evaluate(high))
            continue
        if evaluate(high)["half_width"] > target_half_width:
            rows.append(evaluate(high))  # kept to say what is closest
            continue
        low = 2
        while low < high:
            mid = (low + high) // 2
            if evaluate(mid)["half_width"] <= target_half_width:
                high = mid
            else:
                low = mid + 1
        rows.append(evaluate(low))
    if not rows:
        raise StatsError(f"budget_usd={budget_usd} does not buy 2 levels of {big!r}")
    table = pd.DataFrame(rows)
    ok = np.ones(len(table), bool)
    if target_half_width is not None:
        ok &= table["half_width"].to_numpy() <= target_half_width
    if budget_usd is not None:
        ok &= table["cost_usd"].to_numpy() <= budget_usd + 1e-12
    if not ok.any():
        closest = table.sort_values(["half_width", "requests"]).iloc[0]
        wanted = "" if target_half_width is None else f" of {target_half_width:.4g}"
        raise StatsError(
            f"no design within the limits{' and budget' if budget_usd else ''} reaches a "
            f"half-width{wanted}: the narrowest is {closest['half_width']:.4g} "
            f"({', '.join(f'{f}={int(closest[f])}' for f in [*facets, 'repeats'])}); raise "
            "limits= or the budget, or generalise over fewer facets"
        )
    table = table[ok]
    # requests break ties of cost (a free model: every design costs 0) and stand in for it
    # when there are no prices
    cost = ["cost_usd", "requests"] if priced else ["requests"]
    order = [*cost, "half_width"] if target_half_width is not None else ["half_width", *cost]
    table = table.sort_values(order, kind="stable").head(top).reset_index(drop=True)
    table["chosen"] = np.arange(len(table)) == 0
    designs = finish(table, order=[*facets, "repeats", *COLUMNS])
    return DesignChoice(designs, tuple(random), confidence, priced)


def _planned(study: GStudy) -> DesignChoice:
    """The contract tests' call: every facet may grow to 10 levels (their frames have 3)."""
    facets = [f for f in study.design if f not in (CASE_FACET, "repeats")]
    return choose_design(study, target_half_width=0.2, limits=dict.fromkeys(facets, 10))
