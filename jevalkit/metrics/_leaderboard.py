"""Honest leaderboards: scores with intervals, and rank intervals that hold for all systems at once.

Rank intervals follow Mogstad, Romano, Shaikh and Wilhelm (2024, "Inference for ranks with
applications to mobility across neighbourhoods and academic achievement across countries",
Review of Economic Studies): for every pair of systems j, k the difference d_jk of their scores
gets a simultaneous confidence interval d_jk +- c s_jk, where s_jk is the bootstrap SE of the
difference and c the (1 - alpha) quantile of the bootstrap max over pairs of
|d*_jk - d_jk| / s_jk. System k is *surely better* than j when d_kj - c s_kj > 0. Then

    rank_low_j = 1 + #{k surely better than j},   rank_high_j = S - #{k surely worse than j},

and all S rank intervals hold together with probability at least 1 - alpha (asymptotically).
As in their paper, the step-down refinement (Romano and Wolf) then recomputes c over the pairs
not yet separated, until no further pair is: shorter intervals, the same familywise guarantee.

The bootstrap resamples cases jointly across systems, so systems scored on the same cases are
compared pairwise (their case-level correlation is kept). When every shared case differs alike
(the bootstrap SE is 0), s_jk comes from the Wilson interval of the difference mapped to [0, 1],
as :func:`mean_score` does for zero sample variance: one system passing 3 cases the other fails
is not "surely" better, 50 such cases are. The critical value is never below the one-pair
normal quantile.

Small benchmarks: a max-statistic over plug-in SEs treats each pair's SE as known. The
pointwise board therefore studentizes every pair in every draw (the bootstrap-t: each draw's
statistic is its difference over that draw's own SE of the paired differences, floored at half
the sample's so a draw whose differences all agree cannot make it infinite). Ten tied systems
on 30 cases were told apart in 7% of simulations with the plug-in max-t and 3% with the
bootstrap-t; 30 cases with a shared case effect 96%, 50 cases 94.5%, spread boards of 300 cases
still 100% (``benchmarks/bench_rank_sets.py``). Where draws are not studentized (pairwise
boards, ``generalize``), each pair's statistic is read as a t on n - 1 degrees of freedom and
carried to the normal scale at the same tail probability. A resampling distribution that never
varies (one case) separates nothing.

``generalize=["case", "judge", ...]`` resamples the levels of every listed facet jointly with
the cases (``_rank_facets``), so a board judged by several judges carries their noise.

Pairwise games use Bradley-Terry strengths from :func:`rank` and its case bootstrap instead of
case means; the comparison graph must be connected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Unpack

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from ..contract import (
    CASE_COLUMNS,
    Result,
    ScoreColumns,
    columns_of,
    estimator,
    finish,
    group_codes,
    require_connected,
    score_matrix,
)
from ..errors import StatsError
from ._facet_interval import other_facets
from ._rank import ELO_SCALE, rank
from ._rank_facets import facet_draws
from ._scores import mean_score

COLUMNS = [
    "system",
    "rank",
    "value",
    "ci_low",
    "ci_high",
    "se",
    "n",
    "rank_low",
    "rank_high",
    "could_be_first",
    "tie_class",
    "n_missing",
    "value_worst",
    "value_best",
    "method",
]


@dataclass(frozen=True, eq=False)
class Leaderboard(Result):
    """A leaderboard that says which rank differences are real (:func:`leaderboard`).

    Attributes:
        board: one row per system, best first (see :func:`leaderboard`'s Returns).
        signal_to_noise: the SD of the systems' values over the root mean square of their SEs.
        critical: the critical value of the simultaneous rank intervals.
        could_be_first: the systems whose rank interval reaches 1.
        n_cases: the benchmark's cases (pairwise: the cases the games came from).
        kind: ``pointwise`` or ``pairwise``.
        confidence: of every interval.
    """

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

    board: pd.DataFrame
    signal_to_noise: float
    critical: float
    could_be_first: tuple[str, ...]
    n_cases: int
    kind: str
    confidence: float

    def table(self) -> pd.DataFrame:
        """The board, best first."""
        return self.board.copy()


@dataclass(frozen=True, eq=False)
class RankSets(Result):
    """Simultaneous rank intervals (:func:`rank_sets`), in the order of the values given.

    Attributes:
        rank_low, rank_high: each system's rank interval (1 is the best).
        better: S x S: whether the row's system is surely better than the column's.
        critical: the max-statistic's critical value (c).
    """

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

    rank_low: np.ndarray
    rank_high: np.ndarray
    better: np.ndarray = field(repr=False)
    critical: float

    def table(self) -> pd.DataFrame:
        """One row per system, in the order given: ``rank_low``, ``rank_high``,
        ``n_surely_better_than`` (how many systems it is surely better than), ``critical``."""
        return pd.DataFrame(
            {
                "rank_low": self.rank_low,
                "rank_high": self.rank_high,
                "n_surely_better_than": self.better.sum(axis=1),
                "critical": self.critical,
            }
        )


def _sets_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter: the rank intervals of the systems' case means."""
    matrix = score_matrix(frame, case="case_id")
    seen = matrix.observed.astype(int)
    value = np.nanmean(matrix.scores, axis=1)
    draws = _case_draws(matrix, 200, np.random.default_rng(0))
    sets = rank_sets(value, draws, seen @ seen.T)
    return sets.table().assign(system=matrix.systems)


@estimator(
    unit="system",
    estimand="each system's rank, all systems at once",
    interval="max-t bootstrap over pairwise differences, step-down",
    checks=("order", "rename", "scale", "keys", "one_case"),
    adapter=_sets_of,
    note="the core of leaderboard; simulated in benchmarks/bench_items.py",
)
def rank_sets(
    value: np.ndarray,
    draws: np.ndarray,
    n_shared: np.ndarray,
    confidence: float = 0.95,
    draw_se: np.ndarray | None = None,
    own_se: np.ndarray | None = None,
    *,
    floor: bool = True,
) -> RankSets:
    """Simultaneous rank intervals from point estimates and joint bootstrap draws (higher is
    better; see the module docstring), with the step-down refinement.

    Args:
        value: the S point estimates.
        draws: B x S bootstrap draws of them (resampled jointly).
        n_shared: S x S counts of the cases each pair shares (for pairs whose bootstrap SE is
            zero; ``inf`` where that cannot happen: then a pair whose draws never vary is
            never separated, since a degenerate resampling distribution separates nothing).
        draw_se, own_se: for the bootstrap-t, each draw's standard error of every pair's
            difference (B x pairs, upper-triangle order) and the sample's own (pairs): each
            pair's statistic is then studentized in every draw (its SE floored at half the
            sample's, so a draw whose differences all agree cannot make it infinite).
        floor: give a pair whose draws never vary the Wilson interval of its difference over
            its shared cases (differences of means of [0, 1] scores); ``False`` for other
            scales (log-odds strengths), where such a pair is never separated and ``n_shared``
            only sets the degrees of freedom.

    Returns:
        A :class:`RankSets`: ``rank_low``, ``rank_high`` (arrays), ``better`` (S x S: row
        surely better than column), ``critical`` (c); ``.table()``: one row per system.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> value = np.array([0.9, 0.5, 0.49])
        >>> draws = value + rng.normal(0, 0.02, (500, 3))
        >>> out = rank_sets(value, draws, np.full((3, 3), 100))
        >>> out.table()[["rank_low", "rank_high"]].values.tolist()
        [[1, 1], [2, 3], [2, 3]]
    """
    s = len(value)
    diff = value[:, None] - value[None, :]
    boot = draws[:, :, None] - draws[:, None, :]
    with np.errstate(invalid="ignore"):
        se = np.nan_to_num(np.nanstd(boot, axis=0, ddof=1))
    z = float(sps.norm.ppf((1 + confidence) / 2))
    flat = (se <= 1e-12) & np.isfinite(n_shared) & floor
    if flat.any():
        # every shared case differs alike: the bootstrap sees no noise. As mean_score does for
        # zero sample variance, take the Wilson interval of the difference mapped to [0, 1]
        n = np.maximum(n_shared[flat], 1)
        share = np.clip((diff[flat] + 1) / 2, 0, 1)
        low, high = proportion_confint(share * n, n, alpha=1 - confidence, method="wilson")
        se[flat] = 2 * np.maximum(share - low, high - share) / z
    iu = np.triu_indices(s, 1)
    studentized = draw_se is not None and own_se is not None
    if draw_se is not None and own_se is not None:  # studentized
        own = np.where(flat[iu], se[iu], own_se)
        se_floor = np.where(flat[iu], se[iu], 0.5 * own)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.abs(boot[:, iu[0], iu[1]] - diff[iu]) / np.maximum(draw_se, se_floor)
            observed = np.abs(diff[iu]) / own
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.abs(boot[:, iu[0], iu[1]] - diff[iu]) / se[iu]
            observed = np.abs(diff[iu]) / se[iu]
    t = np.where(np.isfinite(t), t, 0.0)
    # a resampling distribution that never varies (one case resampled, and no count of shared
    # cases to floor it with) says nothing about noise: it separates nothing
    degenerate = ~(se[iu] > 1e-12) | ~np.isfinite(observed)
    observed[degenerate] = 0.0
    # small samples: the bootstrap SD is the plug-in SE and its max-statistic treats it as
    # known. Each pair's statistic is read as a paired t on n - 1 df (SE times sqrt(n/(n-1)))
    # and carried to the normal scale at the same tail probability, so that one pair alone
    # gets the paired t interval and the max over pairs its Student tails
    dof = (n_shared[iu] - 1).astype(float)
    student = np.isfinite(dof) & ~flat[iu] & (dof >= 1) & (not studentized)
    if student.any():
        t_stat = observed[student] * np.sqrt(dof[student] / (dof[student] + 1))
        observed[student] = -sps.norm.ppf(sps.t.sf(t_stat, dof[student]))
    # Romano-Wolf step-down (MRSW's refinement): the critical value is recomputed over the
    # pairs not yet separated, until no further pair is; never below one pair's own quantile
    separated = np.zeros(iu[0].size, dtype=bool)
    critical = z
    while iu[0].size and not separated.all():
        critical = max(float(np.quantile(t[:, ~separated].max(axis=1), confidence)), z)
        new = ~separated & (observed > critical)
        if not new.any():
            break
        separated |= new
    better = np.zeros((s, s), dtype=bool)
    j, k = iu[0][separated], iu[1][separated]
    better[j, k] = diff[j, k] > 0
    better[k, j] = diff[k, j] > 0
    rank_low = 1 + better.sum(axis=0)
    rank_high = s - better.sum(axis=1)
    return RankSets(rank_low, rank_high, better, critical)


def _tie_classes(order: np.ndarray, better: np.ndarray) -> np.ndarray:
    """Walk down the ranking: a system joins the current class unless the class's first system
    is surely better than it, in which case it starts the next class."""
    classes = np.zeros(len(order), dtype=int)
    leader, current = order[0], 1
    for i in order:
        if better[leader, i]:
            leader, current = i, current + 1
        classes[i] = current
    return classes


MAX_RESAMPLES = 100_000


def _case_draws(matrix, n_resamples: int, rng, studentize: bool = False):
    """Case-bootstrap draws of each system's mean (B x S); with ``studentize``, also each
    draw's standard error of every pair's paired difference (B x pairs, upper-triangle order)
    and the sample's own (pairs), for the bootstrap-t."""
    seen = matrix.observed.astype(float)
    y = np.nan_to_num(matrix.scores) * seen
    n_items = y.shape[1]
    out = np.empty((n_resamples, y.shape[0]))
    if studentize:
        j, k = np.triu_indices(y.shape[0], 1)
        both = seen[j] * seen[k]  # pairs x cases
        d = (y[j] - y[k]) * both
        pair_se = np.empty((n_resamples, j.size))
    for start in range(0, n_resamples, 250):
        b = min(250, n_resamples - start)
        counts = rng.multinomial(n_items, np.full(n_items, 1 / n_items), size=b).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + b] = (counts @ y.T) / (counts @ seen.T)
            if studentize:
                pair_se[start : start + b] = _paired_se(counts, d, both)
    if not studentize:
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        own = _paired_se(np.ones((1, n_items)), d, both)[0]
    return out, pair_se, own


def _paired_se(counts: np.ndarray, d: np.ndarray, both: np.ndarray) -> np.ndarray:
    """The plug-in standard error of each pair's mean paired difference, per weighting of the
    cases (rows of ``counts``)."""
    n = counts @ both.T
    mean = (counts @ d.T) / n
    var = np.maximum((counts @ (d**2).T) / n - mean**2, 0.0)
    return np.sqrt(var / n)


@estimator(
    unit="case",
    estimand="mean case score per system; its rank among all systems",
    interval="mean_score's; simultaneous rank intervals (max-t bootstrap over pairs, step-down)",
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
    call={"case": "case_id", "n_resamples": 200},
    note="rank coverage simulated in benchmarks/bench_items.py (99.5% of 200 leaderboards) and benchmarks/bench_rank_sets.py (small tied boards, judges); kind='pairwise' goes through rank (graph checks there)",
)
def leaderboard(
    df: pd.DataFrame,
    *,
    kind: Literal["pointwise", "pairwise"] = "pointwise",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    generalize: Sequence[str] | None = None,
    **columns: Unpack[ScoreColumns],
) -> Leaderboard:
    """A leaderboard that says which rank differences are real.

    Args:
        df: results: one row per system x case x repeat (``pointwise``: a ``score`` in [0, 1],
            or pass ``scale``), or pairwise games (``pairwise``: rows :func:`rank` reads).
        kind: ``pointwise`` (mean case score) or ``pairwise`` (Bradley-Terry strength).
        columns: ``system=``, ``case=``, ``score=``, ``scale=`` (pointwise; see
            :class:`ScoreColumns`).
        confidence: of every interval, and the simultaneous level of the rank intervals.
        n_resamples, seed: of the case bootstrap.
        generalize: the facets the ranks generalise over (``["case", "judge"]``, ``["case",
            "variant"]``: ``"case"`` for the cases, other names are columns): the bootstrap
            resamples the levels of every listed facet jointly with the cases (pointwise only),
            so a board judged by several judges or prompt wordings shows rank intervals that
            include their share of the noise.

    Returns:
        A :class:`Leaderboard`; its ``board`` (``.table()``) has one row per system, best
        first: ``system``, ``rank`` (by the point estimate),
        ``value`` (mean score; pairwise: the Elo-like rating) with ``ci_low``, ``ci_high``,
        ``se``, ``n`` (cases; pairwise: games), ``rank_low``, ``rank_high`` (simultaneous rank
        interval), ``could_be_first`` (rank_low is 1), ``tie_class`` (1, 2, ...: walking down
        the ranking, a new class starts at the first system the class's top system is surely
        better than), ``n_missing`` (benchmark cases the system has no score for: errored,
        ungraded or not run), ``value_worst`` and ``value_best`` (the score if every missing
        case had scored 0 or 1; pairwise: NaN), ``method``.

    Notes:
        A system's ``value`` is its mean over the cases it has a score for. When systems miss
        different cases, their values average different cases: read ``value_worst`` and
        ``value_best``, which bound the mean over every case of the benchmark, before trusting
        an order that a few missing cases could reverse.

        With ``generalize``: each draw resamples the cases and, independently, the levels of
        every other listed facet (Owen's pigeonhole bootstrap for crossed random effects,
        which errs on the wide side); a cell (system x case x levels) weighs the product of
        its levels' counts. Each pair's statistic is read as a t on L - 1 degrees of freedom,
        L the fewest levels of a resampled facet (two or three judges make wide intervals, as
        they should). ``method`` names the facets and their levels.

    Refuses (StatsError, one line) with fewer than two systems, when two systems share fewer
    than two cases, or (pairwise) when the games do not connect all systems.

    Example:
        >>> from jevalkit.items import simulate_2pl
        >>> board = leaderboard(simulate_2pl(n_systems=5, n_items=300, seed=1), case="case_id")
        >>> board.table()[["system", "rank_low", "rank_high"]].values.tolist()
        [['sys4', 1, 2], ['sys1', 1, 4], ['sys2', 2, 4], ['sys0', 2, 4], ['sys3', 5, 5]]
    """
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence!r}")
    if not 100 <= n_resamples <= MAX_RESAMPLES:  # each resample holds a row per system
        raise StatsError(
            f"n_resamples must be from 100 (for a max-statistic) to {MAX_RESAMPLES:,}, got "
            f"{n_resamples}"
        )
    rng = np.random.default_rng(seed)
    if kind == "pairwise":
        if generalize is not None:
            raise StatsError(
                "generalize= resamples the facets of pointwise scores; a pairwise board "
                "resamples its cases only: drop generalize="
            )
        # case= names the games' cases (a frame of games without probe / version columns
        # was told to pass case= by the games' reader, then to drop it here)
        other = sorted(set(columns) - {"case", "pool"})
        if other:
            raise StatsError(
                "pairwise games name their systems in system_a / system_b (case= names their "
                f"cases): drop {', '.join(f'{k}=' for k in other)}"
            )
        return _pairwise(df, confidence, n_resamples, seed, columns)
    if kind != "pointwise":
        raise StatsError(f"kind must be 'pointwise' or 'pairwise', got {kind!r}")
    facet_cols = other_facets(generalize, columns.get("case", CASE_COLUMNS), df)
    if facet_cols:  # a case's rows under several judges (or wordings) are its repeats here
        within = [c for c in ["repeat", *facet_cols] if c in df.columns]
        df = df.assign(repeat=group_codes(df, within)[0])
    matrix = score_matrix(df, **columns)
    spec = matrix.columns
    names = np.asarray(matrix.systems)
    if len(names) < 2:
        raise StatsError(f"a leaderboard needs at least two systems, got {len(names)}")
    require_connected(matrix)
    seen = matrix.observed.astype(int)
    shared = seen @ seen.T
    few = np.argwhere(np.triu(shared < 2, 1))
    if few.size:
        j, k = few[0]
        raise StatsError(
            f"systems {str(names[j])!r} and {str(names[k])!r} share {shared[j, k]} scored case(s); a "
            "paired comparison needs at least 2: score them on common cases"
        )
    summary = mean_score(
        df.assign(_system=df[spec["system"]].astype(str)),
        by="_system",
        case=spec["case"],
        score=spec["score"],
        scale=spec["scale"],
        confidence=confidence,
        bimodality=False,
        pool=spec["pool"],
    ).set_index("_system")
    summary = summary.loc[names]
    value = summary["value"].to_numpy(float)
    facets = ""
    if generalize is not None:
        point, draws, levels = facet_draws(
            df,
            system=spec["system"],
            case=spec["case"],
            score=spec["score"],
            scale=spec["scale"],
            generalize=generalize,
            systems=list(names),
            n_resamples=n_resamples,
            rng=rng,
        )
        fewest = np.full(shared.shape, float(min(levels.values())))
        sets = rank_sets(point, draws, np.minimum(shared, fewest), confidence)
        facets = (
            "; ranks generalise over "
            + ", ".join(f"{name} ({n} levels)" for name, n in levels.items())
            + " resampled jointly"
        )
    else:
        draws, draw_se, own_se = _case_draws(matrix, n_resamples, rng, studentize=True)
        sets = rank_sets(value, draws, shared, confidence, draw_se, own_se)
    # every case of the benchmark, scored or not: a case that errored for every system is
    # absent from the matrix, yet the worst/best bounds must cover it
    case_cols = columns_of(spec["case"])
    n_items = max(matrix.scores.shape[1], len(df[case_cols].drop_duplicates()))
    total = np.nansum(matrix.scores, axis=1)
    n_seen = seen.sum(axis=1)
    table = pd.DataFrame(
        {
            "system": names,
            "value": value,
            "ci_low": summary["ci_low"].to_numpy(float),
            "ci_high": summary["ci_high"].to_numpy(float),
            "se": summary["se"].to_numpy(float),
            "n": summary["n"].to_numpy(int),
            "n_missing": n_items - n_seen,
            "value_worst": total / n_items,
            "value_best": (total + n_items - n_seen) / n_items,
            "method": [
                f"{m}; simultaneous {confidence:.0%} rank intervals (Mogstad-Romano-Shaikh-"
                f"Wilhelm, max-t over pairs, "
                + (
                    f"bootstrap x{n_resamples}{facets})"
                    if facets
                    else f"case bootstrap-t x{n_resamples})"
                )
                for m in summary["method"]
            ],
        }
    )
    return _board(table, sets, confidence, n_items, "pointwise")


def _board(table, sets, confidence, n_cases, kind) -> Leaderboard:
    table["rank_low"] = sets.rank_low.astype(int)
    table["rank_high"] = sets.rank_high.astype(int)
    table["could_be_first"] = table["rank_low"] == 1
    order = np.lexsort((table["system"].to_numpy(), -table["value"].to_numpy()))
    table["tie_class"] = _tie_classes(order, sets.better)
    table["rank"] = (
        table["value"].rank(ascending=False, method="min", na_option="bottom").astype(int)
    )
    board = finish(table.iloc[order], order=COLUMNS)
    placed = np.isfinite(board["value"].to_numpy(float))  # unbounded strengths say nothing here
    se = board["se"].to_numpy(float)[placed]
    spread = board["value"][placed].std(ddof=1) if placed.sum() >= 2 else float("nan")
    noise = np.sqrt(np.nanmean(se**2)) if np.isfinite(se).any() else float("nan")
    return Leaderboard(
        board=board,
        signal_to_noise=float(spread / noise) if noise > 0 else float("nan"),
        critical=float(sets.critical),
        could_be_first=tuple(board.loc[board["could_be_first"], "system"]),
        n_cases=int(n_cases),
        kind=kind,
        confidence=confidence,
    )


def _pairwise(
    df: pd.DataFrame, confidence: float, n_resamples: int, seed, columns: Mapping[str, Any]
) -> Leaderboard:
    # rank refuses a disconnected graph (naming its groups) and reports separated systems as
    # +-inf (or NaN): those cannot be placed, so their rank interval is every rank
    ranking = rank(df, n_resamples=n_resamples, confidence=confidence, seed=seed, **columns)
    table, draws = ranking.ratings, ranking.draws
    finite = np.isfinite(table["strength"].to_numpy())
    n_out = int((~finite).sum())
    names = table["system"][finite]
    sets = rank_sets(
        table["strength"].to_numpy()[finite],
        draws[names].to_numpy(),
        # the cases the games came from: a bootstrap over n cases carries n - 1 degrees of
        # freedom (two cases separated tied systems in 48% of boards at nominal 5%)
        np.full((finite.sum(), finite.sum()), float(ranking.n_cases)),
        confidence,
        floor=False,  # log-odds: no Wilson fallback
    )
    size = len(table)
    better = np.zeros((size, size), dtype=bool)
    better[np.ix_(finite, finite)] = sets.better
    rank_low = np.ones(size, dtype=int)
    rank_high = np.full(size, size)
    rank_low[finite] = sets.rank_low
    rank_high[finite] = sets.rank_high + n_out
    out = pd.DataFrame(
        {
            "system": table["system"],
            "value": table["rating"],
            "ci_low": table["ci_low"],
            "ci_high": table["ci_high"],
            "se": ELO_SCALE * table["strength_se"],
            "n": table["n_games"],
            "n_missing": 0,
            "value_worst": np.nan,
            "value_best": np.nan,
            "method": table["method"]
            + f"; simultaneous {confidence:.0%} rank intervals (max-t over pairs, step-down)"
            + (f"; {n_out} system(s) not placed (unbounded strength): every rank" if n_out else ""),
        }
    )
    sets = RankSets(rank_low, rank_high, better, sets.critical)
    return _board(out, sets, confidence, ranking.n_cases, "pairwise")
