"""metrics.leaderboard: simultaneous rank intervals that cover, tie classes, bounds for missing
cases, pairwise strengths, refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jevalkit import io
from jevalkit._paths import data_dir
from jevalkit.errors import StatsError
from jevalkit.metrics import Leaderboard, leaderboard, mean_score, rank_sets


def simulate(seed, n_systems=6, n_cases=200, spread=0.2):
    rng = np.random.default_rng(seed)
    mu = np.linspace(0.5 - spread / 2, 0.5 + spread / 2, n_systems)
    item = rng.normal(0, 1, n_cases)
    p = 1 / (1 + np.exp(-(np.log(mu / (1 - mu))[:, None] + item)))
    y = (rng.random(p.shape) < p).astype(float)
    s, j = np.indices(y.shape).reshape(2, -1)
    truth = p.mean(axis=1)
    ranks = {f"s{i}": int((truth > truth[i]).sum()) + 1 for i in range(n_systems)}
    frame = pd.DataFrame({"system": [f"s{v}" for v in s], "case_id": j, "score": y.ravel()})
    return frame, ranks


def test_rank_intervals_cover_the_true_ranking_simultaneously():
    # small and seeded; benchmarks/bench_items.py runs the full simulation
    hits = []
    for seed in range(30):
        df, truth = simulate(seed)
        board = leaderboard(df, case="case_id", n_resamples=300, seed=seed).table()
        hits.append(all(r.rank_low <= truth[r.system] <= r.rank_high for r in board.itertuples()))
    assert np.mean(hits) >= 0.9


def test_clearly_separated_systems_get_single_ranks():
    df, _truth = simulate(0, n_systems=4, n_cases=2000, spread=0.6)
    result = leaderboard(df, case="case_id", n_resamples=300)
    board = result.table()
    assert (board["rank_low"] == board["rank_high"]).all()
    assert board["tie_class"].tolist() == [1, 2, 3, 4]
    assert result.could_be_first == ("s3",)


def test_values_and_intervals_are_mean_score_s():
    df, _ = simulate(1)
    board = leaderboard(df, case="case_id", n_resamples=200).table().set_index("system")
    ref = mean_score(df, by="system", case="case_id", bimodality=False).set_index("system")
    for col in ("value", "ci_low", "ci_high", "se", "n"):
        assert board.loc[ref.index, col].tolist() == pytest.approx(ref[col].tolist())
    documented = [
        "system", "rank", "value", "ci_low", "ci_high", "se", "n", "rank_low", "rank_high",
        "could_be_first", "tie_class", "n_missing", "value_worst", "value_best", "method",
    ]  # fmt: skip
    result = leaderboard(df, case="case_id", n_resamples=200)
    assert isinstance(result, Leaderboard) and list(result.table().columns) == documented
    assert "<table" in result._repr_html_() and result.kind == "pointwise"


def test_missing_cases_are_bounded_worst_to_best():
    df, _ = simulate(2, n_systems=3, n_cases=50)
    gone = (df["system"] == "s0") & (df["case_id"] >= 40)
    df.loc[gone, "score"] = None
    row = leaderboard(df, case="case_id", n_resamples=200).table().set_index("system").loc["s0"]
    kept = df.loc[(df["system"] == "s0") & ~gone, "score"]
    assert row["n_missing"] == 10 and row["value"] == pytest.approx(kept.mean())
    assert row["value_worst"] == pytest.approx(kept.sum() / 50)
    assert row["value_best"] == pytest.approx((kept.sum() + 10) / 50)


def test_identical_systems_are_never_separated():
    df, _ = simulate(3, n_systems=2)
    twin = df[df["system"] == "s0"].assign(system="t0")
    board = leaderboard(pd.concat([df, twin]), case="case_id", n_resamples=200).table()
    rows = board.set_index("system")
    assert rows.loc["s0", "tie_class"] == rows.loc["t0", "tie_class"]
    assert rows.loc["s0", "rank_high"] >= 2 and rows.loc["t0", "rank_high"] >= 2


def test_a_difference_on_three_cases_is_not_certain():
    # every case differs alike, so the bootstrap SE is 0: the Wilson bound keeps 3 cases open
    value = np.array([1.0, 0.0])
    draws = np.tile(value, (200, 1))
    out = rank_sets(value, draws, np.full((2, 2), 3))
    assert out.rank_high.tolist() == [2, 2] and out.critical == pytest.approx(1.96, abs=0.01)
    assert rank_sets(value, draws, np.full((2, 2), 50)).rank_high.tolist() == [1, 2]
    df = pd.DataFrame(
        {"system": ["a"] * 3 + ["b"] * 3, "case_id": [1, 2, 3] * 2, "score": [1.0] * 3 + [0.0] * 3}
    )
    board = leaderboard(df, case="case_id", n_resamples=200).table()
    assert board["rank_low"].tolist() == [1, 1] and board["rank_high"].tolist() == [2, 2]


def test_order_and_renaming_do_not_change_the_board():
    df, _ = simulate(4)
    base = leaderboard(df, case="case_id", n_resamples=200).table()
    again = leaderboard(df.sample(frac=1, random_state=1), case="case_id", n_resamples=200)
    pd.testing.assert_frame_equal(base, again.table())


def test_pairwise_games_rank_by_bradley_terry():
    games = io.read(data_dir() / "examples" / "pairwise.jsonl")
    result = leaderboard(games, kind="pairwise", n_resamples=300)
    board = result.table()
    assert board["system"].iloc[0] == "alpha" and result.kind == "pairwise"
    assert (board["rank_low"] <= board["rank"]).all() and (
        board["rank"] <= board["rank_high"]
    ).all()
    assert board["value_best"].isna().all()


def test_refusals():
    df, _ = simulate(5, n_systems=3)
    with pytest.raises(StatsError, match="at least two systems"):
        leaderboard(df[df["system"] == "s0"], case="case_id")
    split = df.assign(case_id=np.where(df["system"] == "s2", df["case_id"] + 10_000, df["case_id"]))
    with pytest.raises(StatsError, match=r"share no items .*\['s2'\]"):
        leaderboard(split, case="case_id")
    one = pd.DataFrame(
        {
            "system": ["a", "a", "b", "b", "c", "c"],
            "case_id": [1, 2, 2, 3, 3, 1],
            "score": [1, 0, 1, 0, 1, 0.0],
        }
    )
    with pytest.raises(StatsError, match="share 1 scored case"):
        leaderboard(one, case="case_id")
    games = io.read(data_dir() / "examples" / "pairwise.jsonl")
    ab = games["system_a"].isin(["alpha", "bravo"]) & games["system_b"].isin(["alpha", "bravo"])
    cd = games["system_a"].isin(["charlie", "delta"]) & games["system_b"].isin(["charlie", "delta"])
    with pytest.raises(
        StatsError,
        match=r"2 groups that never play each other \(\{alpha, bravo\} and \{charlie, delta\}\)",
    ):
        leaderboard(games[ab | cd], kind="pairwise")
    with pytest.raises(StatsError, match="drop scale="):
        leaderboard(games, kind="pairwise", case="question_id", scale=(1, 10))
    with pytest.raises(StatsError, match="outside \\[0, 1\\]"):
        leaderboard(df.assign(score=df["score"] * 10), case="case_id")


def test_a_separated_system_is_not_placed():
    games = io.read(data_dir() / "examples" / "pairwise.jsonl")
    sweep = games.head(6).assign(system_a="winner", system_b="alpha", verdict="a>b", score=1.0)
    sweep = sweep.drop_duplicates(["case_id", "position", "repeat"])
    board = leaderboard(
        pd.concat([games, sweep], ignore_index=True), kind="pairwise", n_resamples=200
    ).table()
    row = board.set_index("system").loc["winner"]
    assert (row["rank_low"], row["rank_high"]) == (1, len(board)) and row["could_be_first"]
    assert "not placed" in row["method"]
    assert (board.set_index("system").drop("winner")["rank_high"] >= 2).all()


def paired(t_stat, n=12, seed=3):
    """Two systems whose case-level differences have a paired t statistic of ``t_stat``."""
    d = np.random.default_rng(seed).normal(0, 1, n)
    d = (d - d.mean()) / d.std(ddof=1) * 0.1
    d = d + t_stat * 0.1 / np.sqrt(n)
    a, b = 0.5 + d / 2, 0.5 - d / 2
    frame = pd.DataFrame(
        {"system": ["a"] * n + ["b"] * n, "case_id": list(range(n)) * 2, "score": np.r_[a, b]}
    )
    return frame, a, b


def test_two_systems_on_few_cases_are_separated_only_where_the_paired_t_test_is():
    # the plug-in bootstrap SE and normal tails separated a pair scipy's paired t-test does not
    # (p = 0.06 on 12 cases); on 10 identical systems x 30 cases that was 86% simultaneous
    # coverage (benchmarks/bench_items.py)
    from scipy import stats

    for t_stat, apart in [(2.1, False), (2.7, True)]:
        df, a, b = paired(t_stat)
        assert (stats.ttest_rel(a, b).pvalue < 0.05) == apart
        board = leaderboard(df, case="case_id", n_resamples=2000).table()
        assert (board["rank_high"].iloc[0] == 1) == apart, t_stat


def test_a_system_whose_every_row_errored_is_named_plainly():
    df, _ = simulate(6, n_systems=3, n_cases=20)
    df["error"] = np.where(df["system"] == "s0", "boom", None)
    with pytest.raises(StatsError, match=r"^systems 's0' and 's1' share 0 scored case"):
        leaderboard(df, case="case_id", n_resamples=200)


def test_cases_that_errored_for_every_system_still_count_in_the_bounds():
    df, _ = simulate(2, n_systems=3, n_cases=50)
    gone = df["case_id"] >= 45  # no system has a score on these five cases
    df.loc[gone, "score"] = None
    board = leaderboard(df, case="case_id", n_resamples=200).table().set_index("system")
    for name, row in board.iterrows():
        kept = df.loc[(df["system"] == name) & ~gone, "score"]
        assert row["n_missing"] == 5
        assert row["value_worst"] == pytest.approx(kept.sum() / 50)
        assert row["value_best"] == pytest.approx((kept.sum() + 5) / 50)


def test_systems_named_1_and_the_string_1_are_refused_not_merged():
    df, _ = simulate(2, n_systems=2, n_cases=30)
    df["system"] = df["system"].map({"s0": 1, "s1": "1"}).astype(object)
    with pytest.raises(StatsError, match="different types"):
        leaderboard(df, case="case_id", n_resamples=200)


def test_pairwise_games_without_probe_columns_name_their_cases_with_case():
    """Games of one's own (no probe / version columns): the games' reader asks for case=, and
    the pairwise board once refused it ("drop case="), so such games could not be ranked."""
    games = io.read(data_dir() / "examples" / "pairwise.jsonl")
    own = games.drop(columns=["probe", "version"]).rename(columns={"case_id": "question"})
    with pytest.raises(StatsError, match="case="):
        leaderboard(own, kind="pairwise")
    board = leaderboard(own, kind="pairwise", case="question", n_resamples=200).board
    same = leaderboard(games, kind="pairwise", n_resamples=200).board
    assert board["system"].tolist() == same["system"].tolist()
    assert board["value"].to_numpy() == pytest.approx(same["value"].to_numpy())
