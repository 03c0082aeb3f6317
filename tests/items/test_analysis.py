"""Item analysis pinned to pingouin and scipy; the planted defects of the example data found."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats as sps

from jevalkit import io
from jevalkit._paths import data_dir
from jevalkit.errors import StatsError
from jevalkit.items import analysis, cronbach_alpha, simulate_2pl


@pytest.fixture(scope="module")
def sim():
    return simulate_2pl(n_systems=40, n_items=25, seed=11).rows


def wide(df):
    return df.pivot_table(index="system", columns="case_id", values="score", aggfunc="mean")


def test_alpha_and_its_interval_match_pingouin(sim):
    result = analysis(sim, case="case_id")
    alpha, ci = pingouin.cronbach_alpha(wide(sim))
    assert result.alpha == pytest.approx(alpha, abs=1e-12)
    # pingouin rounds its interval to 3 decimals
    assert (result.alpha_ci_low, result.alpha_ci_high) == pytest.approx(tuple(ci), abs=5e-4)
    assert tuple(cronbach_alpha(wide(sim).to_numpy())) == pytest.approx(
        (result.alpha, result.alpha_ci_low, result.alpha_ci_high), abs=1e-12
    )


def test_alpha_if_deleted_matches_pingouin_on_the_reduced_matrix(sim):
    table = analysis(sim, case="case_id").table()
    matrix = wide(sim)
    for j in [0, 7, 24]:
        item = matrix.columns[j]
        expected = pingouin.cronbach_alpha(matrix.drop(columns=item))[0]
        assert table["alpha_if_deleted"][j] == pytest.approx(expected, abs=1e-12)


def test_discrimination_is_the_corrected_item_total_pearson_r(sim):
    table = analysis(sim, case="case_id").table()
    matrix = wide(sim).to_numpy()
    for j in [0, 3, 12]:
        rest = np.delete(matrix, j, axis=1).sum(axis=1)
        r, p = sps.pearsonr(matrix[:, j], rest)
        assert table["discrimination"][j] == pytest.approx(r, abs=1e-12)
        assert table["discrimination_p"][j] == pytest.approx(p, rel=1e-9)


def test_difficulty_and_share_differ():
    df = pd.DataFrame(
        {
            "system": list("abcd") * 2,
            "case_id": [1] * 4 + [2] * 4,
            "score": [1, 1, 1, 0, 0, 1, 1, 0.0],
        }
    )
    table = analysis(df, case="case_id").table()
    assert table["difficulty"].tolist() == [0.75, 0.5]
    assert table["share_differ"].tolist() == [0.25, 0.5]


def test_the_example_benchmarks_planted_defects_are_found():
    result = analysis(io.read(data_dir() / "examples" / "benchmark.jsonl"))
    table = result.table()
    flagged = lambda col: set(table.loc[table[col], "case_id"])  # noqa: E731
    assert flagged("dead") == {f"item-{j}" for j in range(70, 76)}
    assert "item-77" in flagged("negative")
    assert flagged("flaky") == {f"item-{j}" for j in range(66, 70)}
    assert result.n_complete == 23  # sys-05 errored on 8 items
    assert (result.n_dead, result.n_flaky) == (6, 4)
    assert set(result.flagged()["case_id"]) >= flagged("dead") | flagged("flaky")
    assert table.loc[table["case_id"] == "item-72", "n_systems"].item() == 23


def test_refusals_are_one_line():
    few = pd.DataFrame(
        {"system": ["a", "a", "b", "b"], "case_id": [1, 2, 1, 2], "score": [1, 0, 0, 1.0]}
    )
    with pytest.raises(StatsError, match="at least 3 systems"):
        analysis(few, case="case_id")
    dead = pd.DataFrame(
        {"system": list("abc") * 2, "case_id": [1] * 3 + [2] * 3, "score": [1.0] * 6}
    )
    with pytest.raises(StatsError, match="no item varies"):
        analysis(dead, case="case_id")
    apart = pd.DataFrame(
        {"system": list("aabbcc"), "case_id": [1, 2, 1, 2, 3, 4], "score": [1, 0, 0, 1, 1, 0.0]}
    )
    with pytest.raises(
        StatsError, match=r"share no items across 2 groups \(\['a', 'b'\] and \['c'\]\)"
    ):
        analysis(apart, case="case_id")
    with pytest.raises(StatsError, match="outside \\[0, 1\\]: pass scale"):
        analysis(dead.assign(score=7.0), case="case_id")


def test_order_and_renaming_do_not_change_the_numbers(sim):
    base = analysis(sim, case="case_id")
    shuffled = sim.sample(frac=1, random_state=3).assign(system=lambda f: "x" + f["system"])
    again = analysis(shuffled, case="case_id")
    pd.testing.assert_frame_equal(base.table(), again.table())
    assert base.scalars() == again.scalars()


def test_cronbach_alpha_of_a_constant_total_is_not_a_number():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert all(np.isnan(cronbach_alpha(x)))
    assert "not estimable" in cronbach_alpha(x).method


def test_cronbach_alpha_of_items_moving_together_has_no_zero_width_interval():
    x = np.array([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    alpha, low, high = cronbach_alpha(x)
    assert alpha == 1.0 and np.isnan(low) and np.isnan(high)
    missing = cronbach_alpha(np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 0.0]]))
    assert np.isnan(missing.estimate) and "1 cells missing" in missing.method


def test_duplicated_rows_are_refused_not_averaged(sim):
    # the input step's duplicate rule, in its words (the matrix reads its rows through it)
    copied = pd.concat([sim, sim.iloc[:1]])
    with pytest.raises(StatsError, match=r"1 row\(s\) repeat a case.*duplicated rows are not"):
        analysis(copied, case="case_id")
    coarse = sim.drop(columns="repeat")
    coarse = pd.concat([coarse, coarse.iloc[:1]])
    with pytest.raises(StatsError, match="no repeat column to tell repeats from duplicated rows"):
        analysis(coarse, case="case_id")


def test_discrimination_q_is_benjamini_hochberg_over_the_tested_items(sim):
    from statsmodels.stats.multitest import multipletests

    table = analysis(sim, case="case_id").table()
    tested = table["discrimination_p"].notna()
    expected = multipletests(table.loc[tested, "discrimination_p"], method="fdr_bh")[1]
    assert table.loc[tested, "discrimination_q"].tolist() == pytest.approx(expected.tolist())


def test_rows_without_a_case_id_are_refused_not_made_one_item():
    df = pd.DataFrame(
        {"system": list("aabbcc"), "case_id": [1, None] * 3, "score": [1, 0, 0, 1, 1, 1.0]}
    )
    with pytest.raises(StatsError, match="'case_id' has 3 rows without a case id"):
        analysis(df, case="case_id")


def test_one_item_is_refused_and_an_untestable_item_is_not_called_ok():
    one = pd.DataFrame({"system": list("abcd"), "case_id": [1] * 4, "score": [1, 0, 1, 0.0]})
    with pytest.raises(StatsError, match="at least 2 items"):
        analysis(one, case="case_id")
    # item 3 varies but only two systems ran it: no correlation over two points
    rows = [(s, c, float((i + c) % 2)) for i, s in enumerate("abcde") for c in (1, 2)]
    rows += [("a", 3, 1.0), ("b", 3, 0.0)]
    table = (
        analysis(pd.DataFrame(rows, columns=["system", "case_id", "score"]), case="case_id")
        .table()
        .set_index("case_id")
    )
    assert np.isnan(table.loc[3, "discrimination"]) and table.loc[3, "status"] == "untested"
    assert not table.loc[[1, 2], "status"].str.contains("untested").any()


def test_rounding_noise_is_neither_discrimination_nor_a_live_item():
    # x varies; a, b, c are dead, so x's rest score is one constant (up to the last bit)
    vals = [0, 1 / 3, 2 / 3, 1.0, 0.1, 0.9] * 4
    rows = [(f"s{i}", "x", v) for i, v in enumerate(vals)]
    rows += [
        (f"s{i}", c, k)
        for i in range(len(vals))
        for c, k in (("a", 0.7), ("b", 2 / 3), ("c", 1 / 3))
    ]
    table = analysis(
        pd.DataFrame(rows, columns=["system", "case_id", "score"]), case="case_id"
    ).table()
    x = table.set_index("case_id").loc["x"]
    assert np.isnan(x["discrimination"]) and x["status"] == "untested"
    # every system's repeats of y are 0.1, 0.2, 0.3 in some order: the means differ in the last bit
    orders = [(0.1, 0.2, 0.3), (0.3, 0.2, 0.1), (0.2, 0.3, 0.1)]
    rows = [(f"s{i}", "y", r, v) for i in range(9) for r, v in enumerate(orders[i % 3])]
    rows += [(f"s{i}", c, 0, float((i + k) % 2)) for i in range(9) for k, c in enumerate("ab")]
    table = (
        analysis(
            pd.DataFrame(rows, columns=["system", "case_id", "repeat", "score"]), case="case_id"
        )
        .table()
        .set_index("case_id")
    )
    assert table.loc["y", "dead"] and table.loc["y", "share_differ"] == 0
    assert np.isnan(table.loc["y", "discrimination"])


def test_an_item_one_system_ran_is_untested_not_dead():
    rows = [(s, c, float((i + c) % 2)) for i, s in enumerate("abcde") for c in (1, 2)]
    rows += [("a", 3, 1.0)]
    table = (
        analysis(pd.DataFrame(rows, columns=["system", "case_id", "score"]), case="case_id")
        .table()
        .set_index("case_id")
    )
    assert not table.loc[3, "dead"] and table.loc[3, "status"] == "untested"


def test_case_ids_one_and_string_one_in_every_system_are_refused_not_two_items():
    rows = [
        (s, c, float((i + j) % 2)) for i, s in enumerate("abcd") for j, c in enumerate([1, "1", 2])
    ]
    with pytest.raises(StatsError, match="holds both 1 and '1': two cases or one"):
        analysis(pd.DataFrame(rows, columns=["system", "case_id", "score"]), case="case_id")


def test_alpha_with_a_missing_cell_uses_pairwise_deletion():
    # issue 36 item 11: alpha was NaN (listwise deletion over all items) when systems missed
    # items; pairwise-complete covariances keep every system
    df = simulate_2pl(n_systems=30, n_items=20, seed=3).rows
    full = analysis(df, case="case_id")
    holes = df[df["system"].str[3:].astype(int) % 20 != df["case_id"].str[1:].astype(int)]
    r = analysis(holes, case="case_id")  # systems 0-19 each miss one item: 10 complete
    x = holes.pivot_table(index="system", columns="case_id", values="score")
    cov = x.cov().to_numpy()  # pandas' pairwise-complete covariance
    k = cov.shape[0]
    assert r.alpha == pytest.approx(k / (k - 1) * (1 - np.trace(cov) / cov.sum()))
    assert abs(r.alpha - full.alpha) < 0.05 and r.alpha_ci_low < r.alpha < r.alpha_ci_high
    assert "pairwise deletion" in r.method
    every = df[df["system"].str[3:].astype(int) % 20 != df["case_id"].str[1:].astype(int) % 20]
    assert np.isfinite(analysis(every, case="case_id").alpha)  # no system is complete
