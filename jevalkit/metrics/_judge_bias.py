"""Is the pairwise judge biased by position or length? Diagnostics on pairwise game rows, and the
one preference per case its two orders give (with whether they agree)."""

from __future__ import annotations

import math
from typing import Any, Unpack

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.proportion import proportions_ztest

from ..contract import estimator, finish
from ..errors import StatsError
from ..stats import wilson_ci
from ._games import GameColumns, games_of

POSITION_COLUMNS = [
    "n_games",
    "n_decisive",
    "first_wins",
    "first_win_share",
    "ci_low",
    "ci_high",
    "p_value",
    "n_pairs",
    "swap_consistency",
    "swap_ci_low",
    "swap_ci_high",
    "level_shift",
    "shift_ci_low",
    "shift_ci_high",
    "shift_p",
    "method",
]
LENGTH_COLUMNS = [
    "n_decisive",
    "longer_wins",
    "longer_win_share",
    "ci_low",
    "ci_high",
    "p_value",
    "coef_per_100_chars",
    "coef_ci_low",
    "coef_ci_high",
    "coef_p",
    "method",
]


@estimator(
    unit="game",
    estimand="share of decisive games won by the answer shown first",
    interval="Wilson; paired t for the level shift",
    data="games",
    call={"case": "case_id"},
    checks=("order", "rename", "method", "one_order", "settings"),
    calibration="position_bias",
)
def position_bias(
    df: pd.DataFrame,
    *,
    confidence: float = 0.95,
    pool: bool = False,
    **columns: Unpack[GameColumns],
) -> pd.DataFrame:
    """Does the answer shown first win more often than chance?

    The games' columns are keywords (``case=``, ``system_a=``, ``system_b=``, ``verdict=``,
    ``score=``, ``position=``, ``repeat=``; :class:`GameColumns`), defaulting to the results
    columns; a copied game row is refused, and so are games of two versions or generation
    settings of the judge (``pool=True`` pools them on purpose).

    Returns one row: over decisive games (not ties), ``first_wins`` and ``first_win_share`` of the
    answer shown first, with a Wilson interval and the two-sided binomial test against 0.5
    (``p_value``; when a pair was shown more often in one order than the other, its two orders
    are weighted equally, else the share would be the first system's win rate, and the interval
    and a score test use Kish's effective number of games, ``method`` says so; when the
    decisive games' weights are equal the exact binomial test is used, as scipy's
    ``binomtest``); over cases judged in both orders (``n_pairs``), ``swap_consistency`` (the share
    whose two verdicts agree once mapped back to the systems) with its Wilson interval; and
    ``level_shift``, the mean difference of system_a's preference between the order that shows it
    first and the order that shows it second (0 without position bias), with a paired t interval
    and p-value.

    Example:
        >>> g = pd.DataFrame({"case_id": ["c1", "c1", "c2", "c2"], "system_a": "x", "system_b": "y",
        ...                   "repeat": 0, "position": ["a_first", "b_first"] * 2,
        ...                   "verdict": ["a>b", "b>a", "a>b", "a>b"], "score": [1.0, 0.0, 1.0, 1.0]})
        >>> row = position_bias(g, case="case_id").iloc[0]
        >>> int(row["first_wins"]), int(row["n_decisive"]), float(row["swap_consistency"])
        (3, 4, 0.5)
    """
    games, _ = games_of(df, pool=pool, **columns)
    position = games["position"]
    if position.isna().all():
        raise StatsError(
            "no game records which answer was shown first (position): position bias cannot be "
            "estimated from these games (preference files such as AlpacaEval's do not say)"
        )
    games = games[position.notna()]
    pair = pd.Series(
        [
            " / ".join(sorted(map(str, p)))
            for p in zip(games["system_a"], games["system_b"], strict=True)
        ],
        index=games.index,
    )
    orders = games["position"].groupby(pair).nunique()
    both_orders = orders[orders > 1].index
    if both_orders.empty:
        raise StatsError(
            f"every pair of systems was shown in one order only ({sorted(set(games['position']))}):"
            " the first-shown share would be the first system's win rate, not a position effect;"
            " position bias needs games played in both orders"
        )
    n_one_order = int((~pair.isin(both_orders)).sum())
    kept = pair.isin(both_orders).to_numpy()
    games, pair = games[kept], pair[kept]
    score = games["score"].astype(float).to_numpy()
    decisive = score != 0.5
    first_won = np.where(games["position"].to_numpy() == "a_first", score > 0.5, score < 0.5)
    n_dec, wins = int(decisive.sum()), int((first_won & decisive).sum())
    # a pair shown mostly in one order would make the first-shown share its first system's
    # win rate: each pair's two orders carry equal weight (1 / their game count)
    keys = [pair.to_numpy(), games["position"].to_numpy()]
    n_order = games.groupby(keys)["position"].transform("size").to_numpy(float)
    n_pair = games.groupby(keys[0])["position"].transform("size").to_numpy(float)
    weight = n_pair / (2 * n_order)
    # equal weights over the decisive games (balanced orders, or imbalance only in ties): the
    # share is wins / n_decisive and the exact binomial test applies
    balanced = bool(n_dec) and bool(np.allclose(weight[decisive], weight[decisive][0]))
    how = "Wilson interval and binomial test"
    if balanced or not n_dec:
        share = wins / n_dec if n_dec else np.nan
        low, high = wilson_ci(wins, n_dec, confidence) if n_dec else (np.nan, np.nan)
        p = float(sps.binomtest(wins, n_dec, 0.5).pvalue) if n_dec else np.nan
    else:
        wd = weight * decisive
        share = float(np.sum(wd * first_won) / wd.sum())
        n_eff = float(wd.sum() ** 2 / np.sum(wd**2))  # Kish's effective size
        low, high = wilson_ci(share * n_eff, n_eff, confidence)
        p = float(proportions_ztest(share * n_eff, n_eff, 0.5, prop_var=0.5)[1])
        how = (
            "orders unbalanced within a pair: each pair's two orders weighted equally, Wilson "
            f"interval and score test over Kish's effective {n_eff:.1f} games"
        )
    key = ["_case", "system_a", "system_b", "repeat"]
    wide = games.assign(_s=score).pivot_table(
        index=key, columns="position", values="_s", aggfunc="mean"
    )
    paired = wide.dropna() if {"a_first", "b_first"} <= set(wide.columns) else wide.iloc[0:0]
    row = {
        "n_games": len(games),
        "n_decisive": n_dec,
        "first_wins": wins,
        "first_win_share": share,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "n_pairs": len(paired),
    }
    if len(paired):
        sign = np.sign(paired["a_first"] - 0.5) == np.sign(paired["b_first"] - 0.5)
        agree = int(sign.sum())
        s_low, s_high = wilson_ci(agree, len(paired), confidence)
        shift = (paired["a_first"] - paired["b_first"]).to_numpy()
        if len(shift) > 1 and np.ptp(shift) > 1e-9:
            test = sps.ttest_1samp(shift, 0.0)
            ci = test.confidence_interval(confidence)
            shift_ci, shift_p = (float(ci.low), float(ci.high)), float(test.pvalue)
        else:
            shift_ci, shift_p = (np.nan, np.nan), np.nan
        row.update(
            swap_consistency=agree / len(paired),
            swap_ci_low=s_low,
            swap_ci_high=s_high,
            level_shift=float(shift.mean()),
            shift_ci_low=shift_ci[0],
            shift_ci_high=shift_ci[1],
            shift_p=shift_p,
        )
    else:
        row.update(
            swap_consistency=np.nan,
            swap_ci_low=np.nan,
            swap_ci_high=np.nan,
            level_shift=np.nan,
            shift_ci_low=np.nan,
            shift_ci_high=np.nan,
            shift_p=np.nan,
        )
    row["method"] = (
        "first-shown share of decisive games between pairs of systems shown in both orders: "
        f"{how}; swap consistency over cases judged in both orders; "
        "level shift: paired t over those cases"
        + (
            f"; {n_one_order} game(s) of pairs shown in one order only left out"
            if n_one_order
            else ""
        )
    )
    return finish(pd.DataFrame([row]), order=POSITION_COLUMNS, estimate="first_win_share")


def _lengths(games: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    def get(side: str) -> np.ndarray:
        values = []
        for src in games["source"]:
            style = src.get(side) if isinstance(src, dict) else None
            values.append(style.get("length") if isinstance(style, dict) else np.nan)
        return np.asarray(values, dtype=float)

    a, b = get("a"), get("b")
    if np.isnan(a).all():
        raise StatsError(
            "the games carry no output lengths (source.a.length): judge them with jevalkit's "
            "pairwise judge, which records them; imported verdicts do not have them"
        )
    return a, b


@estimator(
    unit="game",
    estimand="share of decisive games won by the longer answer",
    interval="Wilson; logistic-model Wald interval",
    data="games",
    call={"case": "case_id"},
    checks=("order", "rename", "method", "settings"),
    note="needs recorded lengths: the games frame carries them",
)
def length_bias(
    df: pd.DataFrame,
    *,
    confidence: float = 0.95,
    pool: bool = False,
    **columns: Unpack[GameColumns],
) -> pd.DataFrame:
    """Does the longer answer win more often than chance?

    The games' columns are keywords (``case=``, ``system_a=``, ``system_b=``, ``verdict=``,
    ``score=``, ``position=``, ``repeat=``; :class:`GameColumns`), defaulting to the results
    columns; a copied game row is refused, and so are games of two versions or generation
    settings of the judge (``pool=True`` pools them on purpose).

    Returns one row: over decisive games between answers of different lengths, ``longer_wins``
    and ``longer_win_share`` with a Wilson interval and the binomial test against 0.5; and the
    coefficient of the length difference (per 100 characters) in a logistic model of system_a
    winning (statsmodels ``Logit``, ties left out), with its interval and p-value.
    """
    games, _ = games_of(df, pool=pool, **columns)
    len_a, len_b = _lengths(games)
    score = games["score"].astype(float).to_numpy()
    ok = ~np.isnan(len_a) & ~np.isnan(len_b) & (score != 0.5)
    differ = ok & (len_a != len_b)
    a_won = score > 0.5
    longer_won = np.where(len_a > len_b, a_won, ~a_won)
    n, wins = int(differ.sum()), int((longer_won & differ).sum())
    low, high = wilson_ci(wins, n, confidence) if n else (np.nan, np.nan)
    row = {
        "n_decisive": n,
        "longer_wins": wins,
        "longer_win_share": wins / n if n else np.nan,
        "ci_low": low,
        "ci_high": high,
        "p_value": float(sps.binomtest(wins, n, 0.5).pvalue) if n else np.nan,
    }
    x = (len_a[ok] - len_b[ok]) / 100.0
    y = a_won[ok].astype(float)
    coef = (np.nan, np.nan, np.nan, np.nan)
    if ok.sum() >= 10 and 0 < y.mean() < 1 and np.ptp(x) > 0:
        fit = sm.Logit(y, sm.add_constant(x)).fit(disp=False)
        ci = fit.conf_int(alpha=1 - confidence)
        coef = (float(fit.params[1]), float(ci[1, 0]), float(ci[1, 1]), float(fit.pvalues[1]))
    row.update(
        coef_per_100_chars=coef[0],
        coef_ci_low=coef[1],
        coef_ci_high=coef[2],
        coef_p=coef[3],
        method="Wilson interval and binomial test; logistic model (statsmodels Logit) of "
        "system_a winning on the length difference",
    )
    return finish(pd.DataFrame([row]), order=LENGTH_COLUMNS, estimate="longer_win_share")


PREFERENCE_COLUMNS = [
    "system_a",
    "system_b",
    "repeat",
    "n_games",
    "preference",
    "verdict_a_first",
    "verdict_b_first",
    "swap_consistent",
]


def _direction(verdict: Any) -> int:
    if not isinstance(verdict, str):
        return 0
    return 1 if verdict.startswith("a>") else (-1 if verdict.startswith("b>") else 0)


@estimator(
    unit="case",
    estimand="one preference per case: the mean of its games",
    interval="none (a per-case table)",
    data="games",
    call={"case": "case_id"},
    checks=("order", "rename", "settings"),
    note="a per-case table, no estimate across cases",
)
def pairwise_preferences(
    df: pd.DataFrame,
    *,
    pool: bool = False,
    **columns: Unpack[GameColumns],
) -> pd.DataFrame:
    """One preference per case from its games: the mean of the games' scores (the preference for
    ``system_a``), and ``swap_consistent``: whether the two orders agree after mapping back
    (same direction: both for a, both for b, or both ties). Games of two versions or
    generation settings of the judge are refused, naming the column (``pool=True`` pools
    them on purpose).

    Returns:
        A table with one row per case, ``system_a``, ``system_b`` and ``repeat``, and the
        columns the case columns, ``system_a``, ``system_b``, ``repeat``, ``n_games``,
        ``preference``, ``verdict_a_first``, ``verdict_b_first``, ``swap_consistent`` (None
        without both orders).

    Example:
        >>> g = pd.DataFrame({"case_id": ["c", "c"], "system_a": "x", "system_b": "y", "repeat": 0,
        ...                   "position": ["a_first", "b_first"], "verdict": ["a>b", "b>a"],
        ...                   "score": [0.75, 0.25], "error": None})
        >>> pairwise_preferences(g, case="case_id")[["preference", "swap_consistent"]].values.tolist()
        [[0.5, False]]
    """
    games, cases = games_of(df, pool=pool, **columns)
    if cases is None:  # case=None: every row its own case, so no game is shown in two orders
        raise StatsError("pairwise_preferences pairs a case's two orders: name case= columns")
    rows = []
    for key, group in games.groupby(
        ["_case", "system_a", "system_b", "repeat"], sort=True, dropna=False
    ):
        verdicts = dict(zip(group["position"], group["verdict"], strict=False))
        both = "a_first" in verdicts and "b_first" in verdicts
        rows.append(
            {
                "_case": key[0],
                "system_a": key[1],
                "system_b": key[2],
                "repeat": key[3],
                "n_games": len(group),
                # fsum: exactly rounded, so the same whichever order the games arrived in
                "preference": math.fsum(group["score"].astype(float)) / len(group),
                "verdict_a_first": verdicts.get("a_first"),
                "verdict_b_first": verdicts.get("b_first"),
                "swap_consistent": _direction(verdicts["a_first"])
                == _direction(verdicts["b_first"])
                if both
                else None,
            }
        )
    table = pd.DataFrame(rows, columns=["_case", *PREFERENCE_COLUMNS])
    keys = cases.iloc[table["_case"].to_numpy()].reset_index(drop=True)
    return finish(table.drop(columns="_case"), groups=keys, order=PREFERENCE_COLUMNS)
