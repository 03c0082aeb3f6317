"""The cheapest design: from a pilot's G-study and a cost per request, the design (cases,
variants, repeats, judge samples, ...) that reaches a target half-width for least money, or the
narrowest one a budget buys (a D-study search)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..contract import Result, estimator, finish
from ..errors import StatsError
from ..stats import GStudy
from ._dstudy import CASE_FACET, RESIDUAL, pilot_of, require_spread, study_of

#: how the refusal names the levels to raise (the CLI says its ``--limit`` flag instead)
LIMITS_HINT = "limits="
GRID = 24  # case counts evaluated per combination of the other facets (geometric, 2 to the cap)

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

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

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
    checks=("order", "rename", "scale", "keys", "duplicates", "one_case", "no_spread", "settings"),
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
        the target within the limits and budget: a :class:`StatsError` saying what is closest
        and, when more cases cannot help, which facet's levels bound the half-width. The
        half-width need not fall as cases grow (a random facet with few levels keeps its share
        while the degrees of freedom fall toward its own), so each combination of the other
        facets is evaluated on a grid of case counts (with the pilot's), not bisected blindly.

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
        jevalkit.errors.StatsError: no design within the limits reaches a half-width of 0.05: the narrowest is 0.08633 (case=97, variant=3, repeats=20); more cases cannot reach it: variant's 3 levels bound the half-width at 0.05061 or more however many cases there are; raise limits= or the budget, or generalise over fewer facets
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
    price = float(cost_per_request) if cost_per_request is not None else math.nan
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
    for name, most in (limits or {}).items():  # a misspelt facet would be a limit ignored
        if name not in caps:
            raise StatsError(
                f"{LIMITS_HINT} names {name!r}, neither a facet of the components {facets} "
                "nor 'repeats'"
            )
        if int(most) < 1:
            raise StatsError(f"{LIMITS_HINT} {name}={most}: a facet has at least 1 level")
        caps[name] = int(most)
    # the search: every combination of the small facets; the case count on a grid, directly
    # evaluated: the half-width need not fall as cases grow (a random facet with few levels
    # keeps its share of the error while its Satterthwaite df shrink toward its own)
    big = CASE_FACET if CASE_FACET in random else (random[0] if random else None)
    ranges: dict[str, Sequence[float]] = {}
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

        def evaluate(
            n_big: int, design: dict[str, float] = design, per_big: float = per_big
        ) -> dict:
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
        rows.append(_best_count(evaluate, 2, high, int(pilot[big]), target_half_width))
    if not rows:
        why = (
            f"budget_usd={budget_usd} does not buy"
            if big is not None and caps[big] >= 2
            else "the limit allows fewer than"
        )
        raise StatsError(f"{why} 2 levels of {big!r}")
    table = pd.DataFrame(rows)
    ok = np.ones(len(table), bool)
    if target_half_width is not None:
        ok &= table["half_width"].to_numpy() <= target_half_width
    if budget_usd is not None:
        ok &= table["cost_usd"].to_numpy() <= budget_usd + 1e-12
    if not ok.any():
        closest = table.sort_values(["half_width", "requests"]).iloc[0]
        wanted = "" if target_half_width is None else f" of {target_half_width:.4g}"
        why = _bound(study, random, big, closest, pilot, target_half_width, confidence, caps)
        raise StatsError(
            f"no design within the limits{' and budget' if budget_usd else ''} reaches a "
            f"half-width{wanted}: the narrowest is {closest['half_width']:.4g} "
            f"({', '.join(f'{f}={int(closest[f])}' for f in [*facets, 'repeats'])}){why}; "
            f"raise {LIMITS_HINT} or the budget, or generalise over fewer facets"
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


def _best_count(
    evaluate: Callable[[int], dict], low: int, high: int, pilot: int, target: float | None
) -> dict:
    """The design row of the case count in ``[low, high]`` that is the cheapest reaching
    ``target`` (else, or with no target, the narrowest), by direct evaluation: a geometric grid
    with the pilot's count, then bisection below the first count on it that reaches the target
    (every count bisection keeps reaches it), or a ternary search between the narrowest grid
    count's neighbours. The half-width need not be monotone in the count."""
    spaced = np.unique(np.geomspace(low, high, GRID).round().astype(int))
    grid = sorted({low, high, *spaced.tolist(), *([pilot] if low <= pilot <= high else [])})
    seen: dict[int, dict] = {}

    def at(n: int) -> dict:
        if n not in seen:
            seen[n] = evaluate(n)
        return seen[n]

    if target is not None:
        for i, n in enumerate(grid):
            if at(n)["half_width"] <= target:
                lo, hi = (grid[i - 1] + 1 if i else low), n
                while lo < hi:
                    mid = (lo + hi) // 2
                    if at(mid)["half_width"] <= target:
                        hi = mid
                    else:
                        lo = mid + 1
                return at(hi)
    i = min(range(len(grid)), key=lambda j: (at(grid[j])["half_width"], grid[j]))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    while hi - lo > 2:
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if at(m1)["half_width"] <= at(m2)["half_width"]:
            hi = m2
        else:
            lo = m1
    for n in range(lo, hi + 1):
        at(n)
    return min(seen.values(), key=lambda r: (r["half_width"], r["requests"]))


def _bound(
    study: GStudy,
    random: Sequence[str],
    big: str | None,
    closest: pd.Series,
    pilot: Mapping[str, float],
    target: float | None,
    confidence: float,
    caps: Mapping[str, int],
) -> str:
    """Why more cases do not help, naming the facet whose levels bound the half-width: the
    components without ``big`` keep their share of the error however many levels ``big`` has
    (at the other facets' limits), so the half-width is at least the normal quantile times that
    share's root; or the narrowest design has fewer cases than the limit (more cases widen the
    interval: those components' few degrees of freedom take over)."""
    if big is None:
        return ""
    parts = []
    for row in study.components.itertuples():
        facets = set(row.facets)
        if row.component == RESIDUAL or big in facets or not facets & set(random):
            continue
        levels = math.prod(caps[f] if f in random else pilot[f] for f in facets)
        if row.variance > 0:
            parts.append((row.variance / levels, [f for f in row.facets if f != big]))
    if not parts:
        return ""
    named = list(dict.fromkeys(f for _, fs in sorted(parts, key=lambda p: -p[0]) for f in fs))
    bounding = " and ".join(f"{f}'s {caps[f] if f in random else pilot[f]} levels" for f in named)
    floor = float(sps.norm.ppf(0.5 + confidence / 2)) * math.sqrt(sum(p[0] for p in parts))
    if target is not None and floor > target:
        return (
            f"; more {big}s cannot reach it: {bounding} bound the half-width at {floor:.4g} or "
            f"more however many {big}s there are"
        )
    if int(closest[big]) < caps[big]:
        return (
            f"; more {big}s widen it: {bounding} keep their share of the error while the "
            "degrees of freedom fall toward theirs"
        )
    return ""


def _planned(study: GStudy) -> DesignChoice:
    """The contract tests' call: every facet may grow to 10 levels (their frames have 3)."""
    facets = [f for f in study.design if f not in (CASE_FACET, "repeats")]
    return choose_design(study, target_half_width=0.2, limits=dict.fromkeys(facets, 10))
