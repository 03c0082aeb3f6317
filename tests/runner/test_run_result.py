"""A run returns a RunResult: its rows and the facts of the run as named fields (issue 34: no
run fact travels in DataFrame.attrs), which every statistic takes as its rows."""

from __future__ import annotations

import pandas as pd
import pytest

import jevalkit
from jevalkit.metrics import mean_score, pass_rate
from jevalkit.results import COLUMNS, read_results
from jevalkit.runner import RunResult, judge
from jevalkit.stats import AdaptiveEstimate, AdaptiveRepeats
from jevalkit.widgets import CompareView, ResultsBrowser

ADAPTIVE_COLUMNS = [
    "metric",
    "n_cases",
    "n",
    "sweeps",
    "rounds",
    "value",
    "ci_low",
    "ci_high",
    "half_width",
    "target_half_width",
    "stop_reason",
    "dropped_sweeps",
    "method",
]


def run_here(server, out, **options):
    return jevalkit.run(
        "schema-ten-records",
        "m",
        base_url=server.base_url,
        out=out,
        progress=False,
        cache=False,
        concurrency=1,
        **options,
    )


def test_a_budget_stopped_run_says_why_and_keeps_its_rows(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    result = run_here(openai_server, out, repeats=6, budget_requests=4)
    assert isinstance(result, RunResult)
    assert "4 requests" in result.stopped and result.budget_overrun is False
    assert result.design is None and result.dashboard is None
    assert len(result.rows) == 4 == len(openai_server.requests)
    assert list(result.rows.columns) == [*COLUMNS, "system"] and result.rows.attrs == {}
    # the rows are the file's: nothing written was lost, nothing returned was made up
    pd.testing.assert_frame_equal(result.rows, read_results(out))
    # every statistic reads a RunResult as its rows
    pd.testing.assert_frame_equal(pass_rate(result), pass_rate(result.rows))
    pd.testing.assert_frame_equal(
        mean_score(result, by="system"), mean_score(result.rows, by="system")
    )
    # re-running resumes: the rest is sent and the run is not stopped
    rest = run_here(openai_server, out, repeats=6)
    assert rest.stopped is None and len(rest.rows) == 6 == len(openai_server.requests)


def test_an_adaptive_run_carries_its_interval(openai_server, tmp_path):
    result = run_here(
        openai_server,
        tmp_path / "r.jsonl",
        design=AdaptiveRepeats(target_half_width=0.4, max_repeats=60),
        temperature=1.0,
        seed=1,
    )
    assert isinstance(result.design, AdaptiveEstimate)
    summary = result.design.table()
    assert list(summary.columns) == ADAPTIVE_COLUMNS and len(summary) == 1
    row = summary.iloc[0]
    assert row["n"] == len(result.rows) and row["rounds"] == result.rows["round"].max() + 1
    assert row["ci_low"] <= row["value"] <= row["ci_high"] and result.stopped is None
    assert "design" in result._repr_html_() and "sweeps" in result._repr_html_()  # in Jupyter


def test_a_run_result_is_not_a_frame_and_says_where_the_rows_are(openai_server, tmp_path):
    result = run_here(openai_server, tmp_path / "r.jsonl", repeats=2)
    mask = result.rows["passed"].astype(bool)
    for read in (len, list, lambda r: r["passed"], lambda r: r[mask], lambda r: r[0]):
        with pytest.raises(TypeError, match=r"RunResult is a results object: its rows are \.rows"):
            read(result)
    with pytest.raises(AttributeError, match=r"its rows are \.rows \(result\.rows\.groupby\)"):
        result.groupby("case_id")
    # the widgets take it as its rows
    pd.testing.assert_frame_equal(ResultsBrowser(result).df, result.rows)
    assert CompareView(result, result.rows, names=("a", "b")).difference == 0.0
    assert result.table() is result.rows and result.scalars() == {
        "stopped": None,
        "budget_overrun": False,
        "design": None,
        "dashboard": None,
    }


def test_the_html_view_escapes_model_output(openai_server, tmp_path):
    openai_server.reply = lambda body: "<script>alert('x')</script><img src=x onerror=alert(1)>"
    result = run_here(openai_server, tmp_path / "r.jsonl", repeats=2, budget_requests=1)
    page = result._repr_html_()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "RunResult: 1 row(s)" in page
    assert "stopped at the budget" in page  # the facts are shown with the rows


def test_two_run_results_are_the_systems_of_a_pairwise_judge(openai_server, tmp_path):
    a = run_here(openai_server, tmp_path / "a.jsonl", repeats=1)
    b = jevalkit.run(
        "schema-ten-records",
        "other",
        base_url=openai_server.base_url,
        out=tmp_path / "b.jsonl",
        progress=False,
    )
    judged = judge(
        "pairwise",
        None,
        "j",
        systems=(a, b),
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
    )
    assert set(judged.rows["system_a"]) == {"m"} and set(judged.rows["system_b"]) == {"other"}
    assert len(judged.rows) == 2 and judged.stopped is None  # one case, both orders
