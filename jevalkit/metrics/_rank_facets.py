"""The bootstrap of a leaderboard over several facets: the levels of every generalised facet
(cases, judges, prompt wordings, ...) resampled jointly, so rank intervals carry each facet's
share of the noise (issue 36 item 15).

A draw resamples the cases with replacement and, independently, the levels of each other
facet (the pigeonhole bootstrap of Owen 2007 for crossed random effects; it errs on the wide
side, counting the interaction terms more than once). A cell (system x case x levels, repeats
averaged) weighs the product of its levels' counts; a system's draw is the weighted mean of
its cells, the point estimate the unweighted one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..contract import columns_of, group_codes, prepare
from ..errors import StatsError
from ._facet_interval import CASE_FACET, other_facets


def facet_draws(
    df: pd.DataFrame,
    *,
    system: str,
    case: Sequence[str] | str,
    score: str,
    scale: tuple[float, float] | None,
    generalize: Sequence[str],
    systems: Sequence[str],
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Point estimates (S), joint draws (B x S) and the number of levels of each resampled
    facet (``case`` for the cases), for the systems in ``systems`` order."""
    facets = other_facets(generalize, case, df)
    case_cols = columns_of(case)
    with_case = any(g == CASE_FACET or g in case_cols for g in generalize)
    # the score matrix read these rows already (settings, duplicates): here only the scored
    # rows with every facet, their scores on [0, 1]
    p = prepare(
        df, score, case=case, system=system, also=facets, kind="score", scale=scale, pool=True
    )
    rows, values = p.frame, p.values
    names = p.system
    assert names is not None  # system= named the column
    index = {s: i for i, s in enumerate(systems)}
    sys_code = np.array([index.get(s, -1) for s in names])
    case_code, _ = group_codes(rows, case_cols)
    facet_codes = [group_codes(rows, [f])[0] for f in facets]
    keys = np.column_stack([sys_code, case_code, *facet_codes])
    cells, cell_of = np.unique(keys, axis=0, return_inverse=True)
    cell_of = cell_of.ravel()
    y = np.bincount(cell_of, values) / np.bincount(cell_of)
    cell_sys = cells[:, 0]
    resampled = ([("case", cells[:, 1])] if with_case else []) + [
        (f, cells[:, 2 + i]) for i, f in enumerate(facets)
    ]
    levels = {name: int(codes.max()) + 1 for name, codes in resampled}
    if not resampled:
        raise StatsError("generalize names no facet to resample: give ['case', ...] or facets")
    few = {name: n for name, n in levels.items() if n < 2}
    if few:
        name = next(iter(few))
        raise StatsError(
            f"generalize: the facet {name!r} has one level, so its noise cannot be estimated: "
            "drop it from generalize or add levels"
        )
    s = len(systems)
    onehot = np.zeros((cells.shape[0], s))
    onehot[np.arange(cells.shape[0]), cell_sys] = 1.0
    value = (y @ onehot) / onehot.sum(axis=0)
    out = np.empty((n_resamples, s))
    for start in range(0, n_resamples, 100):
        b = min(100, n_resamples - start)
        weight = np.ones((b, cells.shape[0]))
        for name, codes in resampled:
            n = levels[name]
            counts = rng.multinomial(n, np.full(n, 1 / n), size=b).astype(float)
            weight *= counts[:, codes]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + b] = ((weight * y) @ onehot) / (weight @ onehot)
    return value, out, levels
