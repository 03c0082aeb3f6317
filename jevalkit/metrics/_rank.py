"""Rankings from pairwise games: Bradley-Terry strengths with intervals that resample cases.

Each game is a row (kind ``pairwise``): ``system_a`` against ``system_b`` on a case, the verdict
mapped back to the systems. The model: P(a beats b) = sigmoid(beta_a - beta_b (+ style terms)),
fitted by maximum likelihood as a weighted logistic regression (ties count as half a win and half
a loss; strong verdicts, ``>>``, may weigh more). The anchor system is fixed at 0.

Why a hand-written fit: the model is a logistic regression and statsmodels fits it (the tests check
every strength against ``statsmodels.GLM`` to 1e-6), but an honest interval needs a thousand
refits on resampled cases. Games without style covariates enter the likelihood only through
weighted win counts per pair of systems, so each refit here is Newton's method on at most
S(S-1)/2 pair rows, warm-started from the full-data fit: milliseconds instead of a GLM on
every game. With style covariates the fit is the same Newton's method on the game rows.

Why resample cases: the games of one case (both orders, several pairs, repeats) share the
prompt, so they are not independent. Resampling game rows, as one well-known leaderboard does,
treats them as independent and gives intervals that are too narrow; resampling cases keeps
them together (``resample="games"`` is kept to show the difference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Unpack

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from ..contract import Result, estimator, finish, group_codes
from ..errors import StatsError
from ..judges import STYLE_FEATURES
from ..stats import no_spread_ci, standard_error
from ._games import GameColumns, games_of

ELO_SCALE = 400.0 / math.log(10.0)
RANK_COLUMNS = [
    "system",
    "rank",
    "rating",
    "ci_low",
    "ci_high",
    "strength",
    "strength_se",
    "win_prob_vs_anchor",
    "win_prob_ci_low",
    "win_prob_ci_high",
    "n_games",
    "method",
]
OUTCOMES = {"a>>b": 1.0, "a>b": 1.0, "a=b": 0.5, "b>a": 0.0, "b>>a": 0.0}


ESTIMANDS = {
    "verdicts": "verdicts counted (a win 1, a tie 1/2, a loss 0)",
    "preference": "the preference strength of each game (its score: 1, 0.75, 0.5, 0.25, 0 on "
    "five-way verdicts, or the annotator's preference)",
}


def _games(
    df: pd.DataFrame,
    strong_weight: float,
    estimand: str,
    columns: GameColumns,
    pool: bool,
) -> pd.DataFrame:
    if estimand not in ESTIMANDS:
        raise StatsError(f"estimand must be one of {sorted(ESTIMANDS)}, got {estimand!r}")
    games, _ = games_of(df, pool=pool, **columns)
    verdict = games["verdict"].astype(str).str.lower()
    unknown = ~verdict.isin(list(OUTCOMES))
    if unknown.any():
        raise StatsError(
            f"verdict {games['verdict'][unknown].iloc[0]!r} is not one of {', '.join(OUTCOMES)}"
        )
    weight = np.where(verdict.str.contains(">>"), strong_weight, 1.0)
    if estimand == "preference":
        y = pd.to_numeric(games["score"], errors="coerce").to_numpy(float)
        if np.isnan(y).any() or (y < 0).any() or (y > 1).any():
            raise StatsError(
                "estimand='preference' needs each game's score (system_a's preference) in [0, 1]"
            )
    else:
        y = verdict.map(OUTCOMES).to_numpy(float)
    return games.assign(_y=y, _w=weight)


def _components(
    games: pd.DataFrame, systems: list[str]
) -> tuple[np.ndarray, np.ndarray, csr_matrix]:
    """Per system: its connected component in the graph of games, and its strongly connected
    component in the graph of wins (i -> j when i took some of the outcome against j)."""
    index = {s: i for i, s in enumerate(systems)}
    ia = games["system_a"].map(index).to_numpy()
    ib = games["system_b"].map(index).to_numpy()
    y = games["_y"].to_numpy()
    n = len(systems)
    met = csr_matrix((np.ones(ia.size), (ia, ib)), shape=(n, n))
    _, connected = connected_components(met, directed=False)
    took = np.concatenate([ia[y > 0], ib[y < 1]]), np.concatenate([ib[y > 0], ia[y < 1]])
    wins = csr_matrix((np.ones(took[0].size), took), shape=(n, n))
    _, strong = connected_components(wins, directed=True, connection="strong")
    return connected, strong, wins


def _refuse_disconnected(connected: np.ndarray, systems: list[str]) -> None:
    if connected.max() > 0:
        parts = [
            "{" + ", ".join(s for s, c in zip(systems, connected, strict=True) if c == k) + "}"
            for k in range(int(connected.max()) + 1)
        ]
        raise StatsError(
            f"the systems form {len(parts)} groups that never play each other ({' and '.join(parts)}):"
            " their strengths cannot be compared; rank each group on its own or add games between them"
        )


def _style_matrix(games: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    columns, names = [], []
    for feature in STYLE_FEATURES:
        left, right = [], []
        for src in games["source"]:
            side = src if isinstance(src, dict) else {}
            left.append((side.get("a") or {}).get(feature, np.nan))
            right.append((side.get("b") or {}).get(feature, np.nan))
        a, b = np.asarray(left, float), np.asarray(right, float)
        if np.isnan(a).any() or np.isnan(b).any():
            raise StatsError(
                "style control needs each game's style features (source.a / source.b, recorded by "
                "jevalkit's pairwise judge); these games lack them"
            )
        total = a + b
        diff = np.divide(a - b, total, out=np.zeros_like(total), where=total > 0)
        sd = diff.std()
        columns.append(diff / sd if sd > 0 else diff)
        names.append(f"style:{feature}")
    return np.column_stack(columns), names


def _fit(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, beta: np.ndarray, ridge: float = 1e-8
) -> np.ndarray:
    """Weighted logistic regression by Newton's method from ``beta``."""
    for _ in range(100):
        eta = x @ beta
        p = 1.0 / (1.0 + np.exp(-eta))
        grad = x.T @ (w * (y - p)) - ridge * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def _pair_rows(
    games: pd.DataFrame, systems: list[str], anchor: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per game: its ordered-pair index; per pair: its design row (anchor column dropped)."""
    index = {s: i for i, s in enumerate(systems)}
    ia = games["system_a"].map(index).to_numpy()
    ib = games["system_b"].map(index).to_numpy()
    pair = ia * len(systems) + ib
    used, pair_code = np.unique(pair, return_inverse=True)
    design = np.zeros((used.size, len(systems)))
    design[np.arange(used.size), used // len(systems)] += 1.0
    design[np.arange(used.size), used % len(systems)] -= 1.0
    keep = [i for i, s in enumerate(systems) if s != anchor]
    return pair_code, design[:, keep], np.asarray(keep)


@dataclass(frozen=True, eq=False)
class Ranking(Result):
    """Bradley-Terry ratings of systems from pairwise games (:func:`rank`).

    Attributes:
        ratings: one row per system, best first (see :func:`rank`'s Returns).
        draws: the bootstrap draws of the strengths, resamples x systems (one column per
            system with a finite strength), for rank intervals.
        separability: the share of system pairs whose intervals do not overlap (1: every order
            is clear; NaN with fewer than two systems).
        n_cases: the cases the games came from.
        style_coefficients: the style covariates' coefficients (``style=True``), else None.
    """

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

    ratings: pd.DataFrame
    draws: pd.DataFrame = field(repr=False)
    separability: float
    n_cases: int
    style_coefficients: Mapping[str, float] | None = None

    def table(self) -> pd.DataFrame:
        """The ratings, best first."""
        return self.ratings.copy()


def _ranking(
    table: pd.DataFrame,
    draws: pd.DataFrame,
    n_cases: int,
    coefficients: dict[str, float] | None,
    anchor: str | None,
) -> Ranking:
    ratings = finish(table, order=RANK_COLUMNS, estimate="rating")
    # the anchor's rating is known exactly (1000): for separability, its interval is that point
    point = ratings["system"] == anchor
    fixed = ratings.assign(
        ci_low=ratings["ci_low"].where(~point, ratings["rating"]),
        ci_high=ratings["ci_high"].where(~point, ratings["rating"]),
    )
    return Ranking(ratings, draws, _separability(fixed), n_cases, coefficients)


@estimator(
    unit="case",
    estimand="Bradley-Terry strengths (verdicts counted, or preference strength)",
    interval="percentile bootstrap over cases",
    data="games",
    checks=("order", "rename", "method", "graph", "settings"),
    call={"anchor": "A", "n_resamples": 200, "case": "case_id"},
    calibration="rank",
)
def rank(
    df: pd.DataFrame,
    *,
    anchor: str | None = None,
    style: bool = False,
    strong_weight: float = 1.0,
    estimand: str = "verdicts",
    resample: str = "cases",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
    pool: bool = False,
    **columns: Unpack[GameColumns],
) -> Ranking:
    """Bradley-Terry ratings of the systems in pairwise games, with bootstrap intervals.

    Args:
        df: results holding pairwise games (``kind`` ``pairwise``).
        anchor: the system fixed at rating 1000 (strength 0); default: the first by name.
        style: add style covariates (differences in length, Markdown headers, list items and bold
            spans, each (a - b) / (a + b), standardised) so strengths are net of style.
        strong_weight: the weight of a strong verdict (``a>>b``, ``b>>a``) against 1 for the rest.
        estimand: what a game contributes: ``verdicts`` (a win 1, a tie 1/2, a loss 0: the
            strength of who wins) or ``preference`` (the game's score, so a strong preference
            counts more than a slight one: the strength of how much a judge prefers); ``method``
            names it.
        resample: ``cases`` (all games of a case together; the honest default) or ``games``.
        n_resamples, confidence, seed: of the percentile bootstrap.
        pool: pool the judge's prompt versions or generation settings on purpose (by default
            games of two are refused, naming the column).
        columns: the games' columns (``case=``, ``system_a=``, ``system_b=``, ``verdict=``,
            ``score=``, ``position=``, ``repeat=``; the data contract): a copied game is refused.

    Returns:
        A :class:`Ranking`; its ``ratings`` (``.table()``) have one row per system, best first:
        ``system``, ``rank`` (equal ratings share the best rank), ``rating`` (Elo-like:
        1000 + 400 / ln 10 x strength), ``ci_low``, ``ci_high`` (of the rating; none for the
        anchor, fixed by definition), ``strength`` (the log-odds against the anchor),
        ``strength_se`` (bootstrap SE), ``win_prob_vs_anchor`` (sigmoid of the strength) with
        its interval, ``n_games``, ``method``. A system that won (or lost) every game linking it
        to the anchor's group has an unbounded strength: ``rating`` is +-inf and ``method`` says
        it is not identified.

    Example:
        >>> from jevalkit import io
        >>> from jevalkit.reports import example_path
        >>> ranking = rank(io.read(example_path("pairwise.jsonl")), anchor="delta", n_resamples=200)
        >>> table = ranking.table()
        >>> table["system"].tolist()[0], float(table.set_index("system").loc["delta", "rating"])
        ('alpha', 1000.0)
        >>> ranking.draws.shape, 0 <= ranking.separability <= 1
        ((200, 6), True)
    """
    if resample not in ("cases", "games"):
        raise StatsError(f"resample must be 'cases' or 'games', got {resample!r}")
    games = _games(df, strong_weight, estimand, columns, pool)
    games = games.assign(
        system_a=games["system_a"].astype(str), system_b=games["system_b"].astype(str)
    )
    everyone = sorted(set(games["system_a"]) | set(games["system_b"]))
    if len(everyone) < 2:
        raise StatsError("a ranking needs games between at least two systems")
    anchor = anchor or everyone[0]
    if anchor not in everyone:
        raise StatsError(f"anchor {anchor!r} played no game; systems: {everyone}")
    n_cases = int(games["_case"].max()) + 1
    connected, strong, wins = _components(games, everyone)
    _refuse_disconnected(connected, everyone)
    # separation: only the anchor's strongly connected group of wins has finite strengths
    group = strong == strong[everyone.index(anchor)]
    systems = [s for s, inside in zip(everyone, group, strict=True) if inside]
    outside = _unbounded(everyone, group, wins, everyone.index(anchor))
    all_games = games
    games = games[games["system_a"].isin(systems) & games["system_b"].isin(systems)]
    if len(systems) == 1:  # the anchor won (or lost) every game: nothing finite to fit
        games = all_games.iloc[:0]
        n_games = pd.concat([all_games["system_a"], all_games["system_b"]]).value_counts()
        table = pd.concat(
            [
                pd.DataFrame(
                    [
                        {
                            "system": anchor,
                            "rating": 1000.0,
                            "ci_low": np.nan,
                            "ci_high": np.nan,
                            "strength": 0.0,
                            "strength_se": np.nan,
                            "win_prob_vs_anchor": 0.5,
                            "win_prob_ci_low": np.nan,
                            "win_prob_ci_high": np.nan,
                            "n_games": int(n_games[anchor]),
                            "method": "the anchor (strength 0 by definition)",
                        }
                    ]
                ),
                _unbounded_rows(outside, n_games, anchor),
            ],
            ignore_index=True,
        ).sort_values("rating", ascending=False, kind="stable", na_position="last")
        table["rank"] = np.arange(1, len(table) + 1)
        draws = pd.DataFrame(np.zeros((n_resamples, 1)), columns=[anchor])
        return _ranking(table, draws, n_cases, None, anchor)
    pair_code, pair_design, keep = _pair_rows(games, systems, anchor)
    y, w = games["_y"].to_numpy(), games["_w"].to_numpy()
    if style:
        style_x, style_names = _style_matrix(games)
        system_x = pair_design[pair_code]
        x_full = np.column_stack([system_x, style_x])

        def fit(weights: np.ndarray, start: np.ndarray) -> np.ndarray:
            return _fit(x_full, y, weights, start)

        n_params = x_full.shape[1]
    else:
        n_pairs = pair_design.shape[0]

        def fit(weights: np.ndarray, start: np.ndarray) -> np.ndarray:
            total = np.bincount(pair_code, weights=weights, minlength=n_pairs)
            won = np.bincount(pair_code, weights=weights * y, minlength=n_pairs)
            seen = total > 0
            return _fit(pair_design[seen], won[seen] / total[seen], total[seen], start)

        n_params = pair_design.shape[1]
    beta = fit(w, np.zeros(n_params))
    unit_codes = group_codes(games, ["_case"])[0] if resample == "cases" else np.arange(len(games))
    n_units = int(unit_codes.max()) + 1
    rng = np.random.default_rng(seed)
    boot = np.empty((n_resamples, n_params))
    for b in range(n_resamples):
        counts = np.bincount(rng.integers(0, n_units, n_units), minlength=n_units)
        boot[b] = fit(w * counts[unit_codes], beta)
    strengths = np.zeros(len(systems))
    strengths[keep] = beta[: len(keep)]
    boot_strengths = np.zeros((n_resamples, len(systems)))
    boot_strengths[:, keep] = boot[:, : len(keep)]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boot_strengths, [alpha, 1 - alpha], axis=0)
    n_games = pd.concat([all_games["system_a"], all_games["system_b"]]).value_counts()
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    how = (
        f"Bradley-Terry by weighted logistic regression on {ESTIMANDS[estimand]}, anchor "
        f"{anchor}; percentile bootstrap over {n_units} {resample}, {n_resamples} resamples"
        + ("; net of style" if style else "")
    )
    is_anchor = np.asarray(systems) == anchor
    flat = (high - low <= 0) & ~is_anchor
    # the anchor's strength is 0 by definition: no interval (it would have zero width)
    low, high = np.where(flat | is_anchor, np.nan, low), np.where(flat | is_anchor, np.nan, high)
    if flat.any():
        how += f"; no interval where the resamples never varied ({n_units} {resample})"
    table = pd.DataFrame(
        {
            "system": systems,
            "rating": 1000 + ELO_SCALE * strengths,
            "ci_low": 1000 + ELO_SCALE * low,
            "ci_high": 1000 + ELO_SCALE * high,
            "strength": strengths,
            "strength_se": np.where(flat | is_anchor, np.nan, boot_strengths.std(axis=0, ddof=1)),
            "win_prob_vs_anchor": sigmoid(strengths),
            "win_prob_ci_low": sigmoid(low),
            "win_prob_ci_high": sigmoid(high),
            "n_games": [int(n_games.get(s, 0)) for s in systems],
            "method": np.where(is_anchor, f"the anchor (strength 0 by definition); {how}", how),
        }
    )
    if outside:
        table = pd.concat([table, _unbounded_rows(outside, n_games, anchor)], ignore_index=True)
    table = table.sort_values("rating", ascending=False, kind="stable", na_position="last")
    # equal strengths (to 1e-6 Elo points) share a rank: the data do not order them
    table["rank"] = (
        table["rating"].round(6).rank(ascending=False, method="min", na_option="bottom").astype(int)
    )
    coefficients = (
        dict(zip(style_names, beta[len(keep) :].tolist(), strict=True)) if style else None
    )
    return _ranking(
        table, pd.DataFrame(boot_strengths, columns=systems), n_cases, coefficients, anchor
    )


def _unbounded(
    systems: list[str], group: np.ndarray, wins: csr_matrix, anchor: int
) -> dict[str, float]:
    """The systems outside the anchor's strongly connected group of wins: +inf when a chain of
    wins leads from them to the anchor and none back (they won every game that links them),
    -inf the other way round, NaN when neither (nothing orders them against the anchor)."""
    below = set(breadth_first_order(wins, anchor, directed=True, return_predecessors=False))
    above = set(
        breadth_first_order(wins.T.tocsr(), anchor, directed=True, return_predecessors=False)
    )
    out = {}
    for i, name in enumerate(systems):
        if not group[i]:
            out[name] = np.inf if i in above else (-np.inf if i in below else np.nan)
    return out


def _unbounded_rows(outside: dict[str, float], n_games: pd.Series, anchor: str) -> pd.DataFrame:
    rows = []
    for name, strength in outside.items():
        if strength == np.inf:
            why = f"not identified: won every game linking it to {anchor}'s group (separation)"
            low, high, p = np.nan, np.inf, 1.0
        elif strength == -np.inf:
            why = f"not identified: lost every game linking it to {anchor}'s group (separation)"
            low, high, p = -np.inf, np.nan, 0.0
        else:
            why = f"not identified: no chain of wins orders it against {anchor}"
            low = high = p = np.nan
        rows.append(
            {
                "system": name,
                "rating": strength,
                "ci_low": low,
                "ci_high": high,
                "strength": strength,
                "strength_se": np.nan,
                "win_prob_vs_anchor": p,
                "win_prob_ci_low": np.nan,
                "win_prob_ci_high": np.nan,
                "n_games": int(n_games.get(name, 0)),
                "method": why + "; its strength is unbounded, so no number is given",
            }
        )
    return pd.DataFrame(rows)


def _separability(table: pd.DataFrame) -> float:
    """The share of system pairs whose intervals do not overlap (1: every order is clear).

    Example:
        >>> _separability(pd.DataFrame({"ci_low": [0, 5, 9], "ci_high": [4, 10, 12]}))
        0.6666666666666666
    """
    low, high = table["ci_low"].to_numpy(), table["ci_high"].to_numpy()
    n = len(table)
    if n < 2:
        return float("nan")
    apart = sum(high[i] < low[j] or high[j] < low[i] for i in range(n) for j in range(i + 1, n))
    return float(apart / (n * (n - 1) / 2))


BASELINE_COLUMNS = [
    "system",
    "baseline",
    "n_games",
    "n_cases",
    "wins",
    "ties",
    "losses",
    "value",
    "ci_low",
    "ci_high",
    "method",
]


@estimator(
    unit="case",
    estimand="win rate against the baseline (verdicts or preference)",
    interval="t with a case-clustered SE (or percentile bootstrap); Wilson floor",
    data="games",
    checks=("order", "rename", "method", "one_case", "no_spread", "settings"),
    call={"baseline": "A", "n_resamples": 500, "case": "case_id"},
    calibration="baseline_win_rates",
)
def baseline_win_rates(
    df: pd.DataFrame,
    baseline: str,
    *,
    estimand: str = "verdicts",
    interval: str = "t",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
    pool: bool = False,
    **columns: Unpack[GameColumns],
) -> pd.DataFrame:
    """Every system's win rate against one baseline in pairwise games, with an interval that
    keeps the games of a case together.

    ``estimand="verdicts"`` counts verdicts: (wins + ties / 2) / games. ``estimand="preference"``
    averages each game's preference strength (its ``score``: 0.75 for a slight win, 1 for a strong
    one, or an annotator's fractional preference), AlpacaEval's headline win rate. ``method``
    names which. ``interval="t"`` (the default): Student's t with the case-clustered standard
    error (:func:`jevalkit.stats.standard_error`, finite-cluster correction), clipped to [0, 1];
    ``interval="bootstrap"``: the percentile bootstrap over cases (``n_resamples``, ``seed``),
    which covered 92.0% at 30 cases in ``benchmarks/calibration.py`` (the t interval 93.3%).
    A system met on one case only gets no interval (one case cannot show how cases vary); when every case gives the same share, the interval is the Wilson floor over cases
    (:func:`jevalkit.stats.no_spread_ci`), never a point. Games of two versions or generation
    settings of the judge are refused, naming the column (``pool=True`` pools them).

    Example:
        >>> from jevalkit import io
        >>> from jevalkit.reports import example_path
        >>> table = baseline_win_rates(io.read(example_path("pairwise.jsonl")), "delta")
        >>> sorted(table["system"]) == ["alpha", "bravo", "charlie", "echo", "foxtrot"]
        True
    """
    if interval not in ("t", "bootstrap"):
        raise StatsError(f"interval must be 't' or 'bootstrap', got {interval!r}")
    games = _games(df, 1.0, estimand, columns, pool)
    a, b = games["system_a"].astype(str), games["system_b"].astype(str)
    involved = (a == baseline) | (b == baseline)
    if not involved.any():
        raise StatsError(f"baseline {baseline!r} played no game")
    games = games[involved]
    other = np.where(a[involved] == baseline, b[involved], a[involved])
    outcome = np.where(a[involved] == baseline, 1 - games["_y"], games["_y"])
    frame = pd.DataFrame({"system": other, "case": games["_case"].to_numpy(), "y": outcome})
    rng = np.random.default_rng(seed)
    rows = []
    for system, part in frame.groupby("system", sort=True):
        codes, _ = group_codes(part, ["case"])
        totals = np.bincount(codes, weights=part["y"].to_numpy())
        sizes = np.bincount(codes)
        n_cases = sizes.size
        y = part["y"].to_numpy()
        if interval == "bootstrap":
            draws = rng.integers(0, n_cases, (n_resamples, n_cases))
            boot = totals[draws].sum(axis=1) / sizes[draws].sum(axis=1)
            low, high = np.quantile(boot, [(1 - confidence) / 2, (1 + confidence) / 2])
            how = f"percentile bootstrap over {n_cases} cases"
        elif n_cases >= 2 and np.ptp(totals / sizes) > 0:
            se = standard_error(y, cluster=codes, small_sample_correction=True)
            half = sps.t.ppf(0.5 + confidence / 2, n_cases - 1) * se
            low, high = max(0.0, y.mean() - half), min(1.0, y.mean() + half)
            how = f"t interval, standard error clustered by case ({n_cases} cases)"
        else:
            low = high = float(y.mean())
        if n_cases < 2:
            low = high = np.nan
            how = "one case: no interval (cases cannot be resampled)"
        elif not high > low:
            low, high = no_spread_ci(float(y.mean()), n_cases, confidence=confidence)
            how = f"Wilson floor over {n_cases} cases (every resample gave the same share)"
        rows.append(
            {
                "system": system,
                "baseline": baseline,
                "n_games": len(part),
                "n_cases": n_cases,
                "wins": int((y == 1).sum()),
                "ties": int((y == 0.5).sum()),
                "losses": int((y == 0).sum()),
                "value": float(y.mean()),
                "ci_low": float(low),
                "ci_high": float(high),
                "method": f"win rate from {ESTIMANDS[estimand]}; {how}",
            }
        )
    return finish(pd.DataFrame(rows, columns=BASELINE_COLUMNS), order=BASELINE_COLUMNS)
