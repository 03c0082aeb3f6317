"""Issue 23: answers that looked plausible and were wrong. Each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jevalkit import io
from jevalkit.errors import StatsError
from jevalkit.metrics import (
    baseline_win_rates,
    case_changes,
    compare,
    consistency,
    gate,
    mean_score,
    rank,
    release_gate,
    win_rate,
)
from jevalkit.stats import bimodality, bimodality_groups, repeats_needed, wilson_ci


def one_case_against_three() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": ["x"] * 4,
            "system": ["A", "B", "B", "B"],
            "repeat": [0, 0, 1, 2],
            "passed": [True, True, True, True],
            "score": [0.5, 0.9, 0.8, 0.9],
        }
    )


# 5. one shared case, one run against three: never broadcast into "three paired cases"
def test_compare_does_not_pair_one_run_with_three():
    out = compare(one_case_against_three(), "A", by=None, case="case_id")
    assert out["n_paired"].tolist() == [1, 1]
    assert out["ci_low"].isna().all() and out["delta"].isna().all()
    assert out["method"].str.startswith("not estimable: one shared case, run once by 'A'").all()


def test_release_gate_refuses_one_paired_case():
    frame = one_case_against_three()
    base, head = frame[frame["system"] == "A"], frame[frame["system"] == "B"]
    for metric in ("pass_rate", "mean_score"):
        row = release_gate(base, head, max_drop=0.1, metric=metric, case="case_id").iloc[0]
        assert row["decision"] == "refused", row["reason"]
    # repeats on both sides: a probe without cases, gated over its repeats (issue 36 item 1)
    twice = pd.concat([base.assign(repeat=r) for r in range(3)])
    row = release_gate(twice, head, max_drop=0.1, metric="mean_score", case="case_id").iloc[0]
    assert row["decision"] != "refused" and "the estimand is this prompt's score" in row["reason"]


# 7. no zero-width interval for bounded data
def test_release_gate_does_not_pass_identical_cases_on_a_zero_width_interval():
    base = pd.DataFrame({"case_id": list("abcde"), "score": [1.0] * 5, "passed": [True] * 5})
    row = compare(
        pd.concat([base.assign(system="a"), base.assign(system="b")]),
        "a",
        by=None,
        case="case_id",
        metrics=["mean_score"],
    ).iloc[0]
    assert row["ci_low"] < 0 < row["ci_high"]
    assert "Wilson" in row["method"]
    for metric in ("pass_rate", "mean_score"):
        decision = release_gate(base, base, max_drop=0.05, metric=metric, case="case_id")
        assert decision["decision"][0] != "pass", metric


def test_gate_never_passes_on_a_zero_width_interval():  # a guard (held before the fixes too)
    flat = pd.DataFrame({"system": "A", "case_id": ["x"] * 5, "score": [0.0] * 5})
    row = gate(flat, minimum=0.0, metric="mean_score", case="case_id").iloc[0]
    assert row["ci_high"] > row["ci_low"]


# 8. the scale is checked in compare (and so in the release gate)
def test_compare_refuses_grades_in_a_verdict_column():
    frame = pd.DataFrame(
        {
            "case_id": list("abcd") * 2,
            "system": ["a"] * 4 + ["b"] * 4,
            "passed": [6, 7, 5, 8, 6, 6, 7, 7],
        }
    )
    with pytest.raises(StatsError, match=r"True/False .* found 6"):
        compare(frame, "a", by=None, case="case_id", metrics=["pass_rate"])
    base, head = frame[frame.system == "a"], frame[frame.system == "b"]
    with pytest.raises(StatsError, match="verdicts"):
        release_gate(base, head, max_drop=0.1, case="case_id")


def test_compare_refuses_scores_outside_the_scale_and_rescales_with_scale():
    frame = pd.DataFrame(
        {"case_id": list("abcd") * 2, "system": ["a"] * 4 + ["b"] * 4, "score": [1, 4, 7, 10] * 2}
    )
    with pytest.raises(StatsError, match=r"outside \[0, 1\]: pass scale="):
        compare(frame, "a", by=None, case="case_id", metrics=["mean_score"])
    row = compare(frame, "a", by=None, case="case_id", metrics=["mean_score"], scale=(1, 10))
    assert row["value"][0] == pytest.approx(0.5)


# 10. conflicting duplicate rows are not repeats
def test_compare_refuses_duplicated_rows_without_a_repeat_index():
    frame = pd.DataFrame(
        {
            "case_id": ["a", "a", "b", "c"] * 2,
            "system": ["x"] * 4 + ["y"] * 4,
            "passed": [True, False, True, True, True, True, False, True],
        }
    )
    with pytest.raises(StatsError, match="no repeat column"):
        compare(frame, "x", by=None, case="case_id", metrics=["pass_rate"])
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        compare(frame.assign(repeat=0), "x", by=None, case="case_id", metrics=["pass_rate"])
    numbered = frame.assign(repeat=[0, 1, 0, 0] * 2)
    row = compare(numbered, "x", by=None, case="case_id", metrics=["pass_rate"]).iloc[0]
    assert row["n_paired"] == 3 and np.isclose(row["value_baseline"], 0.5 / 3 + 2 / 3)


# 6. case_changes says why nothing pairs
def test_case_changes_refuses_case_ids_of_different_types():
    frame = pd.DataFrame(
        {"case_id": [1, 2, 3, "1", "2", "3"], "system": list("AAABBB"), "passed": [1, 0, 1] * 2}
    )
    with pytest.raises(StatsError, match="holds int for system 'A' but str for system 'B'"):
        case_changes(frame, "A", "B", case="case_id")
    with pytest.raises(StatsError, match="never pair"):
        compare(frame, "A", by=None, case="case_id", metrics=["pass_rate"])


def test_two_tables_of_one_benchmark_pair_and_different_probes_are_named(tmp_path):
    for name, grades in (("gpt.csv", [1, 0, 1]), ("claude.csv", [0, 0, 1])):
        pd.DataFrame({"q": [1, 2, 3], "llm": name[:-4], "ok": grades}).to_csv(
            tmp_path / name, index=False
        )
    read = [
        io.from_table(tmp_path / f, case="q", system="llm", passed="ok")
        for f in ("gpt.csv", "claude.csv")
    ]
    changes = case_changes(pd.concat(read), "gpt", "claude")
    assert changes[["case_id", "status"]].values.tolist() == [["1", "regressed"]]
    apart = [read[0], read[1].assign(probe="other")]
    with pytest.raises(StatsError, match=r"no case pairs .* column 'probe' holds \['table'\]"):
        case_changes(pd.concat(apart), "gpt", "claude")


# 10. one run per case: agreement is NaN, as documented
def test_case_changes_agreement_is_nan_for_one_run():
    frame = pd.DataFrame({"case_id": [1, 2, 1, 2], "system": list("AABB"), "passed": [1, 0, 0, 0]})
    out = case_changes(frame, "A", "B", case="case_id", include_unchanged=True)
    assert out["agreement_a"].isna().all() and out["agreement_b"].isna().all()
    assert out["status"].tolist() == ["regressed", "unchanged"]


# 7. zero-width intervals outside mean_score / pass_rate
def test_win_rate_of_five_sweeps_is_not_certain():
    frame = pd.DataFrame(
        {
            "system": ["x"] * 5 + ["y"] * 5,
            "case_id": list("abcde") * 2,
            "score": [1.0] * 5 + [0.0] * 5,
        }
    )
    row = win_rate(frame, "x", "y", case="case_id").iloc[0]
    assert row["value"] == 1.0 and row["ci_high"] == 1.0
    assert row["ci_low"] == pytest.approx(wilson_ci(5, 5)[0]) and "Wilson" in row["method"]


def test_consistency_of_perfectly_consistent_cases_is_not_certain():
    frame = pd.DataFrame({"case_id": list("aabbcc"), "repeat": [0, 1] * 3, "passed": [True] * 6})
    row = consistency(frame, case="case_id", system=None, level=None).iloc[0]
    assert row["ci_low"] == pytest.approx(wilson_ci(3, 3)[0]) and row["ci_high"] == 1.0
    one = consistency(frame[frame.case_id == "a"], case="case_id", system=None, level=None)
    one = one.iloc[0]
    assert np.isnan(one["ci_low"]) and "one case" in one["method"]


def games(rows) -> pd.DataFrame:
    scores = {"a>>b": 1.0, "a>b": 0.75, "a=b": 0.5, "b>a": 0.25, "b>>a": 0.0}
    return pd.DataFrame(
        [
            {
                "system_a": a,
                "system_b": b,
                "verdict": v,
                "score": scores[v],
                "case_id": c,
                "position": "a_first" if i % 2 == 0 else "b_first",
            }
            for i, (a, b, v, c) in enumerate(rows)
        ]
    )


def test_baseline_win_rate_on_one_case_has_no_interval():
    table = baseline_win_rates(
        games([("m", "base", "a>b", "q1"), ("m", "base", "b>a", "q1")]), "base", case="case_id"
    )
    row = table.iloc[0]
    assert row["value"] == 0.5 and np.isnan(row["ci_low"]) and "one case" in row["method"]


# 4. rank: disconnected graphs and separation
def test_rank_refuses_a_disconnected_comparison_graph():
    rows = [
        (a, b, v, f"q{i}")
        for i in range(6)
        for a, b, v in (
            ("A", "B", "a>b" if i % 3 else "b>a"),
            ("C", "D", "a>b" if i % 2 else "b>a"),
        )
    ]
    with pytest.raises(StatsError, match=r"\{A, B\} and \{C, D\}"):
        rank(games(rows), n_resamples=20, case="case_id")


def test_rank_reports_separated_systems_as_unbounded_not_as_numbers():
    rows = []
    for i in range(8):
        rows += [
            ("A", "B", "a>b" if i % 3 else "b>a", f"q{i}"),
            ("B", "C", "a>b" if i % 2 else "b>a", f"q{i}"),
            ("A", "C", "b>a" if i % 4 else "a>b", f"q{i}"),
            ("W", "A", "a>b", f"q{i}"),
            ("L", "B", "b>a", f"q{i}"),
        ]
    table = rank(games(rows), anchor="A", n_resamples=50, case="case_id").table()
    table = table.set_index("system")
    assert table.loc["W", "rating"] == np.inf and table.loc["L", "rating"] == -np.inf
    assert table.loc["W", "method"].startswith("not identified: won every game")
    assert np.isnan(table.loc["W", "ci_low"]) and np.isnan(table.loc["L", "ci_high"])
    finite = table.loc[["B", "C"]]
    assert np.isfinite(finite[["rating", "ci_low", "ci_high"]].to_numpy()).all()
    assert (finite["ci_high"] > finite["ci_low"]).all()


# 9. the estimand is said, and both are supported
def test_win_rates_count_verdicts_or_weigh_preferences_and_say_which():
    rows = [
        ("m", "base", v, f"q{i}")
        for i, v in enumerate(["a>>b", "a>b", "a>b", "b>>a", "a=b", "b>a"])
    ]
    counted = baseline_win_rates(games(rows), "base", case="case_id").iloc[0]
    weighted = baseline_win_rates(games(rows), "base", estimand="preference", case="case_id").iloc[
        0
    ]
    assert counted["value"] == pytest.approx((3 + 0.5) / 6)
    assert weighted["value"] == pytest.approx((1 + 0.75 + 0.75 + 0 + 0.5 + 0.25) / 6)
    assert "verdicts counted" in counted["method"] and "preference" in weighted["method"]
    strengths = rank(
        games([*rows, ("base", "m", "a>b", "q9")]),
        anchor="base",
        n_resamples=20,
        estimand="preference",
        case="case_id",
    )
    assert "preference strength" in strengths.table()["method"][0]
    with pytest.raises(StatsError, match="estimand must be one of"):
        baseline_win_rates(games(rows), "base", estimand="mean", case="case_id")


# 2. averaged grades are not called bimodal
def test_case_means_of_one_peaked_grades_are_not_flagged():
    rng = np.random.default_rng(1)
    flagged = []
    for _ in range(20):
        quality = rng.normal(0, 1, 150)
        grades = np.clip(
            np.round(6.5 + 1.3 * (quality[:, None] + rng.normal(0, 0.7, (150, 2)))), 1, 10
        )
        frame = pd.DataFrame({"q": np.repeat(np.arange(150), 2), "g": grades.ravel()})
        row = mean_score(frame, score="g", case="q", system=None, scale=(1, 10)).iloc[0]
        assert row["bimodality_method"].endswith("(19 levels)")  # the lattice of 2-grade means
        flagged.append(bool(row["bimodal"]))
    assert np.mean(flagged) <= 0.15  # nominal 0.05; before the fix 30% here, 82-100% in the audit
    split = pd.DataFrame({"q": np.repeat(np.arange(60), 2), "g": np.repeat([1, 10] * 30, 2)})
    assert bool(mean_score(split, score="g", case="q", system=None, scale=(1, 10))["bimodal"][0])


def test_grade_counts_on_too_fine_a_lattice_are_not_tested():
    sizes = [6] * 40  # means of six 1-10 grades on a lattice of 1/54 steps: 55 values
    frame = pd.DataFrame({"q": np.repeat(np.arange(40), sizes), "g": 5 + np.arange(sum(sizes)) % 3})
    row = mean_score(frame, score="g", case="q", system=None, scale=(1, 10)).iloc[0]
    assert row["bimodality_method"].startswith("not tested: cases hold [6] grades")
    assert not row["bimodal"] and np.isnan(row["bimodality_p"])


def test_a_few_cases_with_an_extra_grade_do_not_make_one_peak_two():
    """review-c: 30 one-grade cases and two graded twice (a row pasted twice) put the case
    means on the lattice of halves, every other value empty: the comb read as two peaks
    (p = 0.0005, bimodal) on a sample that tested unimodal without the two copies."""
    rng = np.random.default_rng(7)
    flagged = []
    for _ in range(30):
        grades = np.clip(np.round(rng.normal(6, 2, 32)), 1, 10)
        frame = pd.DataFrame({"q": np.r_[np.arange(30), 0, 1], "g": np.r_[grades[:30], grades[:2]]})
        row = mean_score(frame, score="g", case="q", system=None, scale=(1, 10)).iloc[0]
        assert (
            "on the 28 of 30 cases holding 1 grade(s) (cases hold [1, 2]"
            in (row["bimodality_method"])
        )
        flagged.append(bool(row["bimodal"]))
    assert np.mean(flagged) <= 0.15  # nominal 0.05; before the fix 100%
    sizes = [1] * 40 + [3] * 3  # a real split is still found
    split = pd.DataFrame({"q": np.repeat(np.arange(43), sizes), "g": [1, 10] * 24 + [10]})
    assert bool(mean_score(split, score="g", case="q", system=None, scale=(1, 10))["bimodal"][0])


def test_bimodality_groups_gives_each_sample_its_own_p_value():
    rng = np.random.default_rng(0)
    samples = [rng.integers(1, 6, 80) for _ in range(4)]
    together = bimodality_groups(samples, levels=[range(1, 6)] * 4)
    alone = [bimodality(x, levels=range(1, 6)).iloc[0] for x in samples]
    assert together["p_value"].tolist() == [a["p_value"] for a in alone]


# 10. repeats_needed sees position-swapped games
def test_repeats_needed_separates_the_order_effect_from_repeat_noise():
    rng = np.random.default_rng(3)
    n, k = 60, 3
    case = rng.normal(0.5, 0.15, n)
    rows = []
    for c in range(n):
        for position, shift in (("a_first", 0.25), ("b_first", -0.25)):  # a strong order effect
            for _ in range(k):
                rows.append((c, position, case[c] + shift + rng.normal(0, 0.05)))
    frame = pd.DataFrame(rows, columns=["case", "position", "score"])
    # scores near 0.5 +- 0.25 + noise stray past [0, 1]: read on (-1, 2)
    blind = repeats_needed(frame["score"], frame["case"], scale=(-1, 2))
    aware = repeats_needed(frame["score"], frame["case"], orders=frame["position"], scale=(-1, 2))
    assert blind.recommended_repeats > 5  # the order effect taken for repeat noise
    assert aware.recommended_repeats <= 2
    assert aware.within < blind.within / 10


# calibration: where the t interval under-covers, mean_score says so and warns once
def test_mean_score_warns_where_its_interval_under_covers():
    scores = [1.0] * 8 + [0.5, 0.75]
    with pytest.warns(UserWarning, match=r"1 group\(s\) have fewer than 20 units"):
        row = mean_score(scores, bimodality=False).iloc[0]
    assert row["method"].endswith("few units near a bound: may cover less than nominal")


# 4, in a variation: a cycle of single games (A beat B, B beat C, C beat A) identifies equal
# strengths and no order; rank numbered them 1, 2, 3 by name, and one case gave a bootstrap
# standard error of 0.0 beside a missing interval
def test_rank_gives_tied_strengths_one_rank_and_no_zero_standard_error():
    cycle = [("A", "B"), ("B", "C"), ("C", "A")]
    for cases in (["c0", "c1", "c2"], ["c0", "c0", "c0"]):
        games = pd.DataFrame(
            {
                "case_id": cases,
                "system_a": [a for a, _ in cycle],
                "system_b": [b for _, b in cycle],
                "repeat": 0,
                "position": "a_first",
                "verdict": "a>b",
                "score": 1.0,
            }
        )
        table = rank(games, anchor="A", n_resamples=100, case="case_id").table()
        table = table.set_index("system")
        assert table["rating"].tolist() == pytest.approx([1000.0] * 3)
        assert table["rank"].tolist() == [1, 1, 1]
        no_interval = table["ci_low"].isna()
        assert table.loc[no_interval, "strength_se"].isna().all()


# 10, in a variation: compare refuses conflicting duplicate rows of a case, but win_rate and
# consistency averaged them as repeats (B's 0.6 and 0.0 under one repeat index became a loss on
# every case; a doubled run counted as agreement)
def test_win_rate_and_consistency_refuse_duplicated_rows():
    rows = []
    for c in range(10):
        rows.append({"system": "A", "case_id": f"c{c}", "repeat": 0, "score": 0.5})
        rows.append({"system": "B", "case_id": f"c{c}", "repeat": 0, "score": 0.6})
        rows.append({"system": "B", "case_id": f"c{c}", "repeat": 0, "score": 0.0})
    frame = pd.DataFrame(rows)
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        win_rate(frame, baseline="A", case="case_id")
    runs = pd.DataFrame(
        {"case_id": ["a", "a", "b", "b", "a"], "repeat": [0, 1, 0, 1, 1], "passed": [1, 0, 1, 1, 1]}
    )
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        consistency(runs, case="case_id", system=None, level=None)
