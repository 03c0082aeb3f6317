"""Leave-systems-out validation of anchor-based estimates: how many items are enough."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..contract import CASE_COLUMNS, CaseSpec, estimator, finish, score_matrix
from ..errors import StatsError
from ._active import ACTIVE_DEFAULTS, complete_plan
from ._estimate import estimate
from ._irt import IrtModel, fit_irt, respondents
from ._select import Method, select

_COLUMNS = ["k", "method", "n_systems", "mae", "coverage", "mean_width"]


def _leave_systems_out_adapter(frame: pd.DataFrame) -> pd.DataFrame:
    return leave_systems_out(
        respondents(frame), [4], methods=["stratified"], model="1pl", case="case_id"
    )


@estimator(
    unit="system",
    estimand="error and coverage of estimate per k",
    interval="none (it measures other intervals)",
    checks=("order", "rename", "scale", "one_case", "no_spread"),
    adapter=_leave_systems_out_adapter,
    note="a validation loop over fit_irt, select and estimate",
)
def leave_systems_out(
    df: pd.DataFrame,
    ks: Sequence[int],
    *,
    system: str = "system",
    case: CaseSpec = CASE_COLUMNS,
    score: str = "score",
    scale: tuple[float, float] | None = None,
    methods: Sequence[Method] = ("irt", "stratified", "random"),
    model: IrtModel = "2pl",
    confidence: float = 0.95,
    max_systems: int | None = None,
    seed: int | None = 0,
    pool: bool = False,
) -> pd.DataFrame:
    """Hold out each system in turn (those scored on every item, so their full score is known),
    fit on all the others, choose k anchors, estimate the held-out
    system's full-benchmark score from its anchor results, and compare with its true score.

    Args:
        df: results of many systems, one row per system x case x repeat.
        ks: the anchor counts to try.
        system, case, score, scale, pool: the columns and their reading, as
            :func:`analysis` reads them.
        methods: :func:`select` methods (``irt`` estimates by the model, ``active`` by the
            active plan's model-assisted estimate, its waves drawn from the held-out system's
            answers to the earlier ones, ``active`` options as :func:`select`'s defaults; the
            others by the stratified sample mean).
        max_systems: hold out only this many systems (the first by name), to bound the time.

    Returns:
        One row per k x method: ``k``, ``method``, ``n_systems`` (held out), ``mae`` (mean
        absolute error of the estimate), ``coverage`` (share of intervals that hold the true
        score), ``mean_width`` (of the intervals).

    Example:
        >>> from jevalkit.items import simulate_2pl
        >>> df = simulate_2pl(n_systems=20, n_items=100, seed=4)
        >>> table = leave_systems_out(df, [20], methods=["random"], model="1pl",
        ...                           case="case_id", max_systems=3)
        >>> table[["k", "method", "n_systems"]].values.tolist()
        [[20, 'random', 3]]
    """
    columns: dict[str, Any] = {
        "system": system,
        "case": case,
        "score": score,
        "scale": scale,
        "pool": pool,
    }
    full = score_matrix(df, **columns)
    complete = full.observed.all(axis=1)
    if not complete.any():
        raise StatsError(
            "leave-systems-out needs systems scored on every item (their true full score); "
            "no system is"
        )
    truth = dict(zip(full.systems, full.scores.mean(axis=1), strict=True))
    held = [full.systems[i] for i in np.flatnonzero(complete)]
    held = held[:max_systems] if max_systems else held
    names = df[full.columns["system"]].astype(str)
    records = []
    for i, name in enumerate(tqdm(held, desc="leave-systems-out", leave=False)):
        fit = fit_irt(df[names != name], model=model, **columns)
        new = df[names == name]
        for k in ks:
            for method in methods:
                draw_seed = None if seed is None else seed + i
                if method == "active":
                    anchors = complete_plan(
                        fit, int(k), new, **ACTIVE_DEFAULTS, seed=draw_seed or 0
                    )
                    how = "active"
                else:
                    anchors = select(fit, int(k), method=method, seed=draw_seed)
                    how = "irt" if method == "irt" else "sample"  # the model, or the plain mean
                row = estimate(fit, anchors, new, method=how, confidence=confidence).iloc[0]
                records.append(
                    {
                        "k": int(k),
                        "method": method,
                        "error": abs(row["value"] - truth[name]),
                        "covered": row["ci_low"] <= truth[name] <= row["ci_high"],
                        "width": row["ci_high"] - row["ci_low"],
                    }
                )
    frame = pd.DataFrame(records)
    out = (
        frame.groupby(["k", "method"], sort=False)
        .agg(
            n_systems=("error", "size"),
            mae=("error", "mean"),
            coverage=("covered", "mean"),
            mean_width=("width", "mean"),
        )
        .reset_index()
    )
    return finish(out, order=_COLUMNS)
