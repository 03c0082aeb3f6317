"""Choosing k anchor items from past systems' results."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from ..contract import estimator
from ..errors import StatsError
from ._irt import IrtFit, fit_irt, respondents

_COLUMNS = ["case", "stratum", "stratum_size", "method"]
METHODS = ("irt", "stratified", "random")


def _anchors_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter: 4 stratified anchors of a 1PL fitted to the respondents."""
    return select(fit_irt(respondents(frame), model="1pl", case="case_id"), 4, method="stratified")


@estimator(
    unit="item",
    estimand="a stratified random sample of anchor items (a design, with its stratum sizes)",
    interval="none (a sampling design: estimate's interval rests on it)",
    checks=("order", "rename", "one_case"),
    adapter=_anchors_of,
    note="the design behind estimate's coverage in benchmarks/bench_items.py",
)
def select(
    fit: IrtFit,
    k: int,
    *,
    method: Literal["irt", "stratified", "random"] = "irt",
    seed: int | None = 0,
) -> pd.DataFrame:
    """Choose ``k`` anchor items of a benchmark, to score a new system on instead of all of it.

    Every method draws at random (within strata), so the estimate's interval is design-based
    and holds whatever the model; the methods differ in how the strata are formed.

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

    Returns:
        One row per anchor: ``case`` (the item id: its case value, or a tuple of the case
        columns), ``stratum``, ``stratum_size`` (items of the benchmark in it), ``method``.

    Example:
        >>> from jevalkit.items import fit_irt, simulate_2pl
        >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=100, seed=0), case="case_id")
        >>> anchors = select(fit, 10, method="stratified")
        >>> len(anchors), anchors["stratum"].nunique(), int(anchors["stratum_size"].iloc[0])
        (10, 5, 20)
    """
    if method not in METHODS:
        raise StatsError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    items = fit.items
    n = len(items)
    ids = fit.matrix.item_ids()
    if not isinstance(k, int | np.integer) or k < 2:
        raise StatsError(f"k must be an integer of at least 2, got {k!r}")
    if k >= n:
        raise StatsError(f"k={k} is not fewer than the benchmark's {n} items: score them all")
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
    if n_strata < 1 or pool.size < 2 * n_strata:
        raise StatsError(f"k={k} is too few anchors to stratify {n} items: use k >= 4")
    order = pool[np.argsort(key[pool], kind="stable")]
    groups = np.array_split(order, n_strata)
    if extra.size >= 2:
        groups.append(extra)
    elif extra.size:  # one uncalibrated item joins the last stratum
        groups[-1] = np.concatenate([groups[-1], extra])
    left = k - 2 * len(groups)
    picks, strata, sizes = [], [], []
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
