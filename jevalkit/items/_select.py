"""Choosing k anchor items from past systems' results."""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
import pandas as pd

from ..contract import estimator
from ..errors import StatsError
from ._active import ACTIVE_DEFAULTS, DESIGNS, ActiveDesign, ActivePlan, active_plan
from ._irt import IrtFit, fit_irt, respondents

_COLUMNS = ["case", "stratum", "stratum_size", "method"]
Method = Literal["irt", "stratified", "random", "active"]
METHODS: tuple[Method, ...] = get_args(Method)


def _anchors_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter: 4 stratified anchors of a 1PL fitted to the respondents,
    and an active plan of 4 cases in 2 waves (its second wave drawn after the last respondent
    answered the first), one table."""
    people = respondents(frame)
    last = sorted(people["system"].unique())[-1]
    fit = fit_irt(people[people["system"] != last], model="1pl", case="case_id")
    plan = select(fit, 4, method="active", waves=2)
    answered = people[(people["system"] == last) & people["case_id"].isin(plan.cases)]
    plan = select(fit, 4, method="active", waves=2, new_results=answered)
    return pd.concat([select(fit, 4, method="stratified"), plan.table()], ignore_index=True)


@estimator(
    unit="item",
    estimand="a random sample of anchor items (a design: strata, or active draws with their "
    "probabilities)",
    interval="none (a sampling design: estimate's interval rests on it)",
    checks=("order", "rename", "one_case"),
    adapter=_anchors_of,
    note="the design behind estimate's coverage in benchmarks/bench_items.py",
)
def select(
    fit: IrtFit,
    k: int,
    *,
    method: Method = "irt",
    seed: int | None = 0,
    new_results: pd.DataFrame | None = None,
    waves: int | None = ACTIVE_DEFAULTS["waves"],
    floor: float = ACTIVE_DEFAULTS["floor"],
    design: ActiveDesign = ACTIVE_DEFAULTS["design"],
    recalibrate: bool = ACTIVE_DEFAULTS["recalibrate"],
) -> pd.DataFrame | ActivePlan:
    """Choose ``k`` anchor items of a benchmark, to score a new system on instead of all of it.

    Every method draws at random (within strata, or with recorded probabilities), so the
    estimate's interval is design-based and holds whatever the model; the methods differ in
    how the strata or the probabilities are formed.

    Methods:
        ``irt``: the calibrated items sorted by their IRT difficulty b into k // 2 strata of
        equal size (items the model could not calibrate form one more stratum when there are
        any), two drawn from each. Why not the k most informative items: with tens of past
        systems the estimated discriminations are noisy, and picking the largest picks the
        overestimated ones (in leave-systems-out on simulated 2PL data their model-based
        intervals covered 33-65%, not 95%).
        ``stratified``: every item sorted by its mean past score into k // 2 strata, two drawn
        at random from each (two, so each stratum has a variance).
        ``random``: k items drawn uniformly at random (one stratum).
        ``active``: k cases for one new system, drawn in ``waves`` (default 8, or k when k is
        smaller) with probability proportional to the model's predicted SD of the system's
        score on each (the ability updated from its answers between waves), mixed with a
        ``floor`` share of uniform probability; ``design="fixed"`` draws exactly k without
        replacement, ``"poisson"`` includes each case independently (k on average). Call it again with
        ``new_results`` (the system's results on the cases drawn so far) for the next wave:
        the same fit, k, seed and answers give the same draws, so a run resumes without
        re-drawing. ``recalibrate`` flattens the predictions between waves when the
        system's answers show the model predicting it badly. See :mod:`jevalkit.items`'
        active-evaluation notes (module ``_active``) for the estimator.

    Returns:
        ``irt``, ``stratified``, ``random``: one row per anchor: ``case`` (the item id: its
        case value, or a tuple of the case columns), ``stratum``, ``stratum_size`` (items of
        the benchmark in it), ``method``. ``active``: an :class:`ActivePlan` (``.cases`` to
        run, ``.complete``, ``.table()`` the draws with each case's ``probability``,
        ``.design_effect`` the model's predicted variance relative to uniform draws).

    Example:
        >>> from jevalkit.items import fit_irt, simulate_2pl
        >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=100, seed=0), case="case_id")
        >>> anchors = select(fit, 10, method="stratified")
        >>> len(anchors), anchors["stratum"].nunique(), int(anchors["stratum_size"].iloc[0])
        (10, 5, 20)

    An active plan, wave by wave:
        >>> df = simulate_2pl(n_systems=31, n_items=100, seed=0).rows
        >>> fit = fit_irt(df[df.system != "sys30"], case="case_id")
        >>> new = df[df.system == "sys30"]
        >>> plan = select(fit, 12, method="active", waves=2)
        >>> len(plan.cases), plan.complete  # the second wave waits for the first's answers
        (6, False)
        >>> plan = select(fit, 12, method="active", waves=2,
        ...               new_results=new[new.case_id.isin(plan.cases)])
        >>> len(plan.cases), plan.complete, bool(plan.table()["probability"].gt(0).all())
        (12, True, True)
    """
    if method not in METHODS:
        raise StatsError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "active":
        if (
            seed is None
            or isinstance(seed, bool)
            or not isinstance(seed, int | np.integer)
            or seed < 0
        ):
            raise StatsError(
                "an active plan is drawn again between waves (and on resume): give a whole "
                f"number seed from 0 up, got {seed!r}"
            )
        if design not in DESIGNS:
            raise StatsError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
        return active_plan(
            fit,
            k,
            new_results=new_results,
            waves=waves,
            floor=floor,
            design=design,
            recalibrate=bool(recalibrate),
            seed=int(seed),
        )
    if new_results is not None:
        raise StatsError(f"new_results is for method='active'; {method!r} anchors do not adapt")
    items = fit.items
    n = len(items)
    ids = fit.matrix.item_ids()
    if not isinstance(k, int | np.integer) or k < 2:
        raise StatsError(f"k must be an integer of at least 2, got {k!r}")
    if k >= n:
        raise StatsError(f"k={k} is not fewer than the benchmark's {n} items: score them all")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
    ):
        raise StatsError(f"seed must be a whole number from 0 up, or None, got {seed!r}")
    rng = np.random.default_rng(seed)
    if method == "random":
        chosen = np.sort(rng.choice(n, size=k, replace=False))
        return _table(ids, chosen, np.zeros(k, dtype=int), np.full(k, n), method)
    if method == "irt":
        ok = items["status"].eq("ok").to_numpy()
        key = items["difficulty"].to_numpy()
        extra = np.flatnonzero(~ok)
        pool = np.flatnonzero(ok)
    else:
        key = items["mean_score"].fillna(0.5).to_numpy()
        extra, pool = np.array([], dtype=int), np.arange(n)
    n_strata = k // 2 - (1 if extra.size >= 2 else 0)
    if n_strata < 1:
        raise StatsError(f"k={k} is too few anchors to stratify {n} items: use k >= 4")
    if pool.size < 2 * n_strata:  # two per stratum: more strata than the pool can fill
        most = 2 * (pool.size // 2 + (1 if extra.size >= 2 else 0)) + 1
        raise StatsError(
            f"k={k} is too many anchors for the {pool.size} items {method} strata are drawn "
            f"from (two per stratum): use k <= {most}, or score every item"
        )
    order = pool[np.argsort(key[pool], kind="stable")]
    groups = np.array_split(order, n_strata)
    if extra.size >= 2:
        groups.append(extra)
    elif extra.size:  # one uncalibrated item joins the last stratum
        groups[-1] = np.concatenate([groups[-1], extra])
    left = k - 2 * len(groups)
    picks: list[int] = []
    strata: list[int] = []
    sizes: list[int] = []
    for h, group in enumerate(groups):
        take = 2 + (1 if h < left else 0)
        picks.extend(rng.choice(group, size=min(take, group.size), replace=False))
        strata.extend([h] * min(take, group.size))
        sizes.extend([group.size] * min(take, group.size))
    return _table(ids, np.asarray(picks), np.asarray(strata), np.asarray(sizes), method)


def _table(ids, chosen, strata, sizes, method) -> pd.DataFrame:
    order = np.argsort(chosen, kind="stable")
    chosen, strata, sizes = chosen[order], strata[order], sizes[order]
    return pd.DataFrame(
        {
            "case": [ids[i] for i in chosen],
            "stratum": strata.astype(int),
            "stratum_size": sizes.astype(int),
            "method": method,
        },
        columns=_COLUMNS,
    )
