"""The planner: from a pilot's variance components and a cost per request, the design (cases,
variants, repeats, judge samples, ...) that reaches a target half-width for least money, or the
narrowest one a budget buys."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import estimator
from ..errors import StatsError
from ..stats import design_error
from ._facets import CASE_FACET, _design, _require_spread

PLAN_COLUMNS = ["requests", "cost_usd", "se", "df", "half_width", "chosen"]


@estimator(
    unit="design",
    estimand="the cheapest design reaching a target half-width",
    interval="none (a planning table)",
    data="arrays",
    note="takes variance components; its predicted half-width simulated in tests/metrics/test_facets.py and benchmarks/bench_total_error.py",
)
def plan_design(
    components: pd.DataFrame,
    *,
    target_half_width: float | None = None,
    budget_usd: float | None = None,
    cost_per_request: float | None = None,
    generalize: Sequence[str] | None = None,
    limits: Mapping[str, int] | None = None,
    confidence: float = 0.95,
    top: int = 10,
) -> pd.DataFrame:
    """The cheapest design whose predicted interval half-width is at most
    ``target_half_width``, or the narrowest whose cost is within ``budget_usd``.

    Args:
        components: :func:`variance_components` of a pilot run (its ``attrs`` carry the
            pilot's design).
        target_half_width, budget_usd: give one (or both: the target within the budget).
        cost_per_request: dollars per request (default: the pilot's mean ``cost_usd`` when its
            rows have prices, else 1, so ``cost_usd`` counts requests; ``attrs["priced"]``
            says which).
        generalize: the random facets (default: every facet of the components); the others are
            fixed and keep the pilot's levels.
        limits: the most levels a facet (or ``repeats``) may have (default: 10000 cases, 20
            repeats, 10 levels of any other facet; a facet cannot have more levels than exist:
            say so here, e.g. ``{"variant": 3}``).
        confidence: of the planned interval.
        top: rows returned.

    Returns:
        The best ``top`` designs, best first: one column per facet and ``repeats`` (levels),
        ``requests``, ``cost_usd``, ``se``, ``df``, ``half_width`` (t quantile at the
        Satterthwaite df x se, as :func:`mean_score` with ``generalize`` will compute it when
        the components are as estimated), ``chosen`` (the first row). Nothing reaches the
        target within the limits and budget: a :class:`StatsError` saying what is closest.

    Example:
        >>> t = pd.DataFrame({"component": ["case", "variant", "case x variant", "residual"],
        ...     "facets": [("case",), ("variant",), ("case", "variant"), ()],
        ...     "variance": [0.04, 0.002, 0.01, 0.05]})
        >>> t.attrs = {"levels": {"case": 20, "variant": 3}, "repeats": 5}
        >>> best = plan_design(t, target_half_width=0.05).iloc[0]
        >>> int(best["case"]), int(best["variant"]), int(best["repeats"]), int(best["requests"])
        (122, 9, 1, 1098)
        >>> plan_design(t, target_half_width=0.05, limits={"variant": 3})
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
    if cost_per_request is None:
        cost_per_request = components.attrs.get("cost_per_request")
    priced = cost_per_request is not None
    price = float(cost_per_request) if priced else 1.0
    if not price > 0:
        raise StatsError(f"cost_per_request must be positive, got {cost_per_request}")
    _require_spread(components)
    pilot = _design(components, None)
    facets = [f for f in pilot if f != "repeats"]
    random = list(generalize) if generalize is not None else facets
    unknown = [f for f in random if f not in facets]
    if unknown:
        raise StatsError(f"generalize names {unknown}, not facets of the components: {facets}")
    has_residual = "residual" in set(components["component"])
    caps = {f: (10_000 if f == CASE_FACET else 10) for f in facets}
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
    nested = components.attrs.get("nested")
    rows = []
    for combo in itertools.product(*ranges.values()):
        design = dict(zip(ranges, combo, strict=True))
        per_big = math.prod(v for k, v in design.items() if k in facets) * design["repeats"]

        def evaluate(n_big: int, design=design, per_big=per_big) -> dict:
            full = {**design, **({big: n_big} if big else {})}
            var, df = design_error(components, full, random, nested=nested)
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
        if budget_usd is not None:
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
        closest = table.sort_values(["half_width", "cost_usd"]).iloc[0]
        raise StatsError(
            f"no design within the limits{' and budget' if budget_usd else ''} reaches a "
            f"half-width of {target_half_width}: the narrowest is {closest['half_width']:.4g} "
            f"({', '.join(f'{f}={int(closest[f])}' for f in [*facets, 'repeats'])}); raise "
            "limits= or the budget, or generalise over fewer facets"
        )
    table = table[ok]
    order = (
        ["cost_usd", "half_width"] if target_half_width is not None else ["half_width", "cost_usd"]
    )
    table = table.sort_values(order, kind="stable").head(top).reset_index(drop=True)
    table["chosen"] = np.arange(len(table)) == 0
    table.attrs = {"generalize": random, "confidence": confidence, "priced": priced}
    return table[[*facets, "repeats", *PLAN_COLUMNS]]
