"""The input step of every pairwise statistic: the games of a results frame, checked by
:func:`jevalkit.contract.prepare` (a game is scored when it has a verdict and a score and no
error; a copied row is not another game; case keys of one type) and put under one set of names."""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

import pandas as pd

from ..contract import COLUMN_DEFAULTS, CaseSpec, prepare, require
from ..errors import StatsError


class GameColumns(TypedDict, total=False):
    """The columns of pairwise games, defined once (every pairwise statistic takes them as
    keywords, defaulting to the results columns): ``case`` (probe, version, case_id),
    ``system_a``, ``system_b``, ``verdict`` (``a>b``, ``a=b``, ...), ``score`` (system_a's
    preference in [0, 1]), ``position`` (which answer was shown first), ``repeat``."""

    case: CaseSpec
    system_a: str
    system_b: str
    verdict: str
    score: str
    position: str
    repeat: str | None


KEYWORDS = tuple(GameColumns.__annotations__)


def games_of(
    df: pd.DataFrame, *, pool: bool = False, **columns: Unpack[GameColumns]
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The scored games, one row each, with the columns ``_case`` (the case's code, sorted),
    ``system_a``, ``system_b`` (as text), ``verdict``, ``score`` (float), ``position`` (missing
    when the source did not record which answer was shown first), ``repeat`` and ``source``;
    and the case columns' values per case code.

    Raises:
        StatsError: an unknown column keyword, or a column is missing; no game has a verdict;
            two rows are the same game (the same case, systems, position and repeat); the
            games hold two versions or generation settings of the judge (``pool=True`` pools
            them on purpose).
    """
    unknown = sorted(set(columns) - set(KEYWORDS))
    if unknown:
        raise StatsError(
            f"unknown keyword(s) {', '.join(unknown)}: pairwise games' columns are named by "
            f"{', '.join(KEYWORDS)}"
        )
    spec: dict[str, Any] = {k: columns.get(k, COLUMN_DEFAULTS[k]) for k in KEYWORDS}
    case, system_a, system_b = spec["case"], spec["system_a"], spec["system_b"]
    verdict, score, position, repeat = (spec[k] for k in ("verdict", "score", "position", "repeat"))
    for keyword, column in (
        ("system_a", system_a),
        ("system_b", system_b),
        ("verdict", verdict),
        ("score", score),
        ("position", position),
    ):
        require(df, column, keyword, "a column of pairwise games")
    p = prepare(
        df,
        verdict,
        case=case,
        repeat=repeat,
        within=[system_a, system_b, position],
        also=[score],
        kind="any",
        keyword="verdict",
        pool=pool,
        apart=False,
    )
    if not p.values.size:
        raise StatsError("no pairwise games with a verdict (kind 'pairwise' rows)")
    rows = p.frame
    games = pd.DataFrame(
        {
            "_case": p.case,
            "system_a": rows[system_a].astype(str).to_numpy(),
            "system_b": rows[system_b].astype(str).to_numpy(),
            "verdict": rows[verdict].to_numpy(),
            "score": pd.to_numeric(rows[score], errors="coerce").to_numpy(float),
            "position": rows[position].to_numpy(dtype=object),
            "repeat": rows[repeat].to_numpy() if repeat in rows.columns else 0,
            "source": rows["source"].to_numpy(dtype=object) if "source" in rows else None,
        }
    )
    return games, p.cases
