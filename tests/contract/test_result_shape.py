"""A results object that replaced a table (a ranking, a leaderboard, a G-study, an item fit)
has no length and does not unpack: ``len()`` or a loop over it would count or walk its fields,
a silently wrong answer where a DataFrame gave its rows. Results that replaced a tuple still
unpack (statsmodels' HolderTuple); a run's result refuses ``in`` in words."""

from __future__ import annotations

import pandas as pd
import pytest

from jevalkit import io, metrics, stats
from jevalkit import results as rows
from jevalkit.contract import Result
from jevalkit.reports import example_path
from jevalkit.runner import RunResult


def test_a_ranking_has_no_length_and_does_not_unpack():
    ranking = metrics.rank(io.read(example_path("pairwise.jsonl")), n_resamples=50)
    assert len(ranking.table()) > 0
    for misuse, words in (
        (len, r"len\(result.table\(\)\)"),
        (list, r"iterate over result.table\(\)"),
        (lambda r: r[0], r"result.table\(\).iloc"),
        (lambda r: "system" in r, r"'system' in result.table\(\)"),
    ):
        with pytest.raises(TypeError, match=words):
            misuse(ranking)
    assert ranking  # an answer is truthy, however many rows


def test_a_g_study_has_no_length():
    frame = pd.DataFrame(
        {
            "system": "A",
            "case_id": [f"c{i}" for i in range(6) for _ in range(2)],
            "repeat": [0, 1] * 6,
            "score": [0.1, 0.2, 0.5, 0.4, 0.9, 0.8, 0.3, 0.3, 0.7, 0.6, 0.2, 0.4],
        }
    )
    g = stats.variance_components(frame, case="case_id")
    with pytest.raises(TypeError, match=r"rows are \.table\(\)"):
        len(g)


def test_a_result_that_replaced_a_tuple_still_unpacks():
    low, high = stats.wilson_ci(3, 10)
    assert 0 < low < 0.3 < high < 1 and len(stats.wilson_ci(3, 10)) == 2


def test_the_error_share_is_a_results_object_that_still_unpacks():
    share = rows.error_share(pd.DataFrame({"error": [None, {"type": "timeout"}, None, None]}))
    assert isinstance(share, Result)
    errors, total = share
    assert (errors, total) == (share.errors, share.total) == (1, 4) and share.share == 0.25
    assert share.table().to_dict("records") == [{"errors": 1, "total": 4, "share": 0.25}]
    empty = rows.error_share(pd.DataFrame({"x": []}))
    assert tuple(empty) == (0, 0) and empty.share != empty.share  # no rows: no share (NaN)


def test_a_run_result_refuses_in_with_the_fix():
    with pytest.raises(TypeError, match=r"'score' in result.rows"):
        "score" in RunResult(pd.DataFrame({"score": [1.0]}))  # noqa: B015


def test_the_facts_about_rows_read_a_run_result_as_its_rows():
    frame = pd.DataFrame(
        {
            "system": "m",
            "probe": "p",
            "version": 1,
            "case_id": ["a", "a", "b"],
            "repeat": [0, 1, 0],
            "passed": [True, None, False],
            "finish_reason": ["stop", "length", "stop"],
            "error": [None, {"type": "timeout"}, None],
        }
    )
    run = RunResult(frame, stopped="stopped at the budget")
    assert tuple(rows.error_share(run)) == tuple(rows.error_share(frame)) == (1, 3)
    assert rows.scored(run) == rows.scored(frame) == 2
    assert rows.truncated(run).tolist() == rows.truncated(frame).tolist()
    assert rows.has_repeats(run) and rows.has_repeats(frame)
    assert rows.error_summary(run).equals(rows.error_summary(frame))
    both = rows.combine_runs(run, run)
    assert (
        len(both.rows) == 6
        and both.baseline == "base: m"
        and both.systems == ("base: m", "head: m")
    )


def test_combined_runs_are_read_as_their_rows_and_refuse_to_unpack():
    # combine_runs gave a (frame, name) tuple; its answer is rows with facts beside them, read
    # by field name, and every statistic takes it as a results frame
    base = pd.DataFrame({"system": "m", "case_id": list("abcd"), "passed": [1, 1, 0, 1]})
    both = rows.combine_runs(base, base.assign(passed=[1, 0, 0, 1]))
    with pytest.raises(TypeError, match=r"its rows are \.rows"):
        _frame, _name = both
    table = metrics.pass_rate(both, by="system", case="case_id")
    assert table["system"].tolist() == ["base: m", "head: m"]
    assert table["value"].tolist() == [0.75, 0.5]
