"""Metrics over results DataFrames and arrays: units, intervals, edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from jevalkit.errors import StatsError
from jevalkit.metrics import consistency, mean_absolute_error, mean_score, pass_rate, win_rate


def results(scores_by_case: dict[str, list[float]], model: str = "m") -> pd.DataFrame:
    rows = []
    for case, scores in scores_by_case.items():
        for r, s in enumerate(scores):
            rows.append(
                {
                    "probe": "p",
                    "version": 1,
                    "case_id": case,
                    "model": model,
                    "label": None,
                    "system": model,
                    "expected_level": None,
                    "repeat": r,
                    "score": s,
                    "passed": s >= 1.0,
                    "error": None,
                }
            )
    return pd.DataFrame(rows)


def test_mean_score_uses_cases_as_units_and_matches_a_t_interval():
    df = results({"a": [1, 1, 0], "b": [0, 0, 0], "c": [1, 1, 1], "d": [0.5, 0.5, 1]})
    row = mean_score(df).iloc[0]
    case_means = np.array([2 / 3, 0, 1, 2 / 3])
    low, high = stats.t.interval(0.95, 3, loc=case_means.mean(), scale=stats.sem(case_means))
    assert row["n"] == 4 and row["n_samples"] == 12
    assert row["unit"] == "cases (probe+version+case_id)" and row["method"].startswith(
        "t interval over cases"
    )
    assert row["value"] == pytest.approx(case_means.mean())
    # the t interval of a [0, 1] mean, clipped to [0, 1] (and the method says so)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((max(low, 0), min(high, 1)))
    assert row["method"].endswith("clipped to [0, 1]")
    wide = mean_score(results({c: [0.4 + 0.05 * i] for i, c in enumerate("abcdef")})).iloc[0]
    values = 0.4 + 0.05 * np.arange(6)
    ref = stats.t.interval(0.95, 5, loc=values.mean(), scale=stats.sem(values))
    assert (wide["ci_low"], wide["ci_high"]) == pytest.approx(ref)


def test_mean_score_by_group_and_histogram():
    df = pd.concat([results({"a": [1.0], "b": [0.0]}, "x"), results({"a": [0.5], "b": [0.5]}, "y")])
    table = mean_score(df, by="model").set_index("model")
    assert table.loc["x", "histogram"] == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert table.loc["y", "value"] == 0.5


def test_mean_score_flags_a_split():
    split = [0.0] * 40 + [0.5] * 4 + [1.0] * 40
    row = mean_score(split).iloc[0]
    assert row["bimodal"] and row["value"] == 0.5
    assert row["bimodality_method"].startswith("discrete unimodality likelihood-ratio test")


def test_mean_score_small_n_and_nan():
    row = mean_score([0.7]).iloc[0]
    assert row["n"] == 1 and np.isnan(row["ci_low"]) and row["method"] == "n < 2: no interval"
    assert mean_score([]).iloc[0]["n"] == 0
    # a missing value is skipped and counted, in an array as in results
    row = mean_score([0.5, np.nan]).iloc[0]
    assert (row["n"], row["n_missing"], row["value"]) == (1, 1, 0.5)
    row = mean_score(
        pd.DataFrame({"score": [0.5, None, 1.0], "case_id": ["a", "b", "c"]}),
        case="case_id",
        system=None,
    ).iloc[0]
    assert (row["n"], row["n_missing"], row["value"]) == (2, 1, 0.75)


def test_error_rows_are_excluded_and_counted():
    df = results({"a": [1.0], "b": [0.0], "c": [1.0]}).astype({"passed": object})
    df.at[2, "error"] = {"type": "timeout"}
    df.loc[2, "score"] = np.nan
    df.loc[2, "passed"] = None
    assert mean_score(df).iloc[0][["n", "n_missing"]].tolist() == [2, 1]
    assert pass_rate(df).iloc[0][["n", "n_missing"]].tolist() == [2, 1]


def test_pass_rate_without_repeats_is_wilson():
    flags = [True] * 7 + [False] * 3
    row = pass_rate(flags).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        proportion_confint(7, 10, method="wilson")
    )
    assert row["method"] == "Wilson" and row["design_effect"] == 1.0


def test_pass_rate_with_repeats_is_clustered_and_wider():
    df = results({f"c{i}": [1.0] * 5 if i % 2 else [0.0] * 5 for i in range(20)})
    row = pass_rate(df).iloc[0]
    naive = proportion_confint(50, 100, method="wilson")
    assert row["value"] == 0.5 and row["n"] == 100 and row["n_cases"] == 20
    # repeats perfectly correlated (CR1: times G / (G - 1))
    assert row["design_effect"] == pytest.approx(5.0 * 99 / 100 * 20 / 19)
    assert row["ci_high"] - row["ci_low"] > 2 * (naive[1] - naive[0])
    assert row["method"] == (
        "Wilson, case-clustered (design effect, Korn-Graubard df; case = probe+version+case_id)"
    )


def test_pass_rate_of_one_case_says_so():
    row = pass_rate(results({"only": [0, 0, 0, 1, 0]})).iloc[0]
    assert row["method"] == "Wilson over repeats of one case (probe+version+case_id)"
    assert row["n"] == 5


def test_mean_absolute_error():
    pred, gold = [3.21, 2.0, 0.5, 4.0], [4, 2, 1, 3]
    row = mean_absolute_error(pred, gold).iloc[0]
    assert row["value"] == pytest.approx(np.mean(np.abs(np.subtract(pred, gold))))
    assert row["ci_low"] <= row["value"] <= row["ci_high"]


def test_win_rate_on_shared_cases_only():
    df = pd.concat(
        [
            results({"a": [1.0], "b": [0.5], "c": [0.0], "d": [1.0]}, "x"),
            results({"a": [0.5], "b": [0.5], "c": [1.0]}, "y"),
        ]
    )
    row = win_rate(df, "x", "y").iloc[0]
    assert (row["n"], row["wins"], row["ties"], row["losses"]) == (3, 1, 1, 1)
    assert row["value"] == 0.5
    with pytest.raises(StatsError, match="not found"):
        win_rate(df, "x", "z")


def test_consistency_modal_share_flips_and_alpha():
    df = results({"a": [1, 1, 1, 1], "b": [1, 1, 0, 1], "c": [0, 0, 0, 0], "d": [0, 1, 0, 1]})
    row = consistency(df).iloc[0]
    assert row["n_cases"] == 4 and row["k"] == 4
    assert row["value"] == pytest.approx((1 + 0.75 + 1 + 0.5) / 4)
    assert row["flip_rate"] == 0.5
    assert -1 <= row["alpha"] <= 1


def test_consistency_of_levels_reports_their_spread():
    df = results({"a": [0.5, 0.5], "b": [1.0, 1.0]})
    df["expected_level"] = [2.0, 3.0, 4.0, 4.0]
    row = consistency(df).iloc[0]
    assert row["level_sd"] == pytest.approx(np.mean([np.std([2, 3], ddof=1), 0.0]))


def test_consistency_needs_repeats():
    with pytest.raises(StatsError, match="k >= 2"):
        consistency(results({"a": [1.0], "b": [0.0]}))


def test_consistency_of_one_case():
    row = consistency(results({"a": [1, 1, 0, 1, 1]})).iloc[0]
    assert row["n_cases"] == 1 and row["value"] == 0.8 and np.isnan(row["ci_low"])
    assert np.isnan(row["alpha"])
