"""``repeats="auto"`` for judges (issue 25.2): the same adaptive rounds as probe runs, a case
being a judge case (for a pairwise judge, both orders of a comparison)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jevalkit.errors import UsageError
from jevalkit.runner import judge
from jevalkit.stats import AdaptiveRepeats


def chat_logprobs(pairs):
    alts = [{"token": t, "logprob": math.log(p)} for t, p in pairs]
    return {
        "content": [{"token": pairs[0][0], "logprob": alts[0]["logprob"], "top_logprobs": alts}]
    }


def by_case(body):
    text = body["messages"][-1]["content"]
    high = 0.9 if len(text) % 2 else 0.3  # differs between the bundled cases
    return chat_logprobs([("4", high), ("0", 1 - high)])


def test_a_judge_run_with_repeats_auto_stops_when_the_interval_is_narrow(openai_server, tmp_path):
    openai_server.logprobs = by_case
    result = judge(
        "faithfulness",
        "faithfulness",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
        design=AdaptiveRepeats(target_half_width=0.3, max_repeats=40, metric="mean_score"),
    )
    df, row = result.rows, result.design.table().iloc[0]
    assert row["metric"] == "mean_score" and row["n_cases"] == 6
    assert row["stop_reason"] == "target met" and row["half_width"] <= 0.3
    # each case's judgment is the same every repeat: the interval covers the mean judge score
    per_case = df.groupby("case_id")["score"].mean()
    assert row["ci_low"] <= per_case.mean() <= row["ci_high"]
    assert df["round"].max() == row["rounds"] - 1 and len(df) < 6 * 40
    assert len(openai_server.requests) == len(df)  # every row was one request, none twice
    # resuming the same call sends nothing new
    again = judge(
        "faithfulness",
        "faithfulness",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
        design=AdaptiveRepeats(target_half_width=0.3, max_repeats=40, metric="mean_score"),
    )
    assert len(openai_server.requests) == len(df)
    assert again.design.table().iloc[0]["value"] == pytest.approx(row["value"])


def test_pairwise_repeats_auto_keeps_both_orders_of_a_case_together(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs([("4", 0.6), ("2", 0.4)])
    result = judge(
        "pairwise",
        "pairwise",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "p.jsonl",
        progress=False,
        design=AdaptiveRepeats(target_half_width=0.45, max_repeats=30, metric="mean_score"),
    )
    df, row = result.rows, result.design.table().iloc[0]
    games = df.groupby(["case_id", "repeat"])["position"].agg(sorted)
    assert all(g == ["a_first", "b_first"] for g in games)  # never one order without the other
    assert row["n"] == len(games) and row["stop_reason"] == "target met"
    # the estimate: the mean over cases of system_a's preference (both orders averaged)
    pref = df.groupby("case_id")["score"].mean().mean()
    assert row["ci_low"] <= pref <= row["ci_high"]
    with pytest.raises(UsageError, match=r"no pass/fail verdict .*use the metric mean_score"):
        judge(
            "pairwise",
            "pairwise",
            "m",
            base_url=openai_server.base_url,
            out=tmp_path / "p2.jsonl",
            progress=False,
            design=AdaptiveRepeats(metric="pass_rate", target_half_width=0.45, max_repeats=30),
        )


def test_fixed_repeats_are_unchanged_and_bad_repeats_are_one_line(openai_server, tmp_path):
    openai_server.logprobs = by_case
    result = judge(
        "faithfulness",
        "faithfulness",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
        repeats=2,
    )
    df = result.rows
    assert len(df) == 12 and result.design is None and set(df["round"]) == {0}
    assert np.isfinite(df["score"]).all()
    with pytest.raises(UsageError, match="repeats must be a whole number of at least 1 or 'auto'"):
        judge("faithfulness", "faithfulness", "m", repeats=0, out=tmp_path / "x.jsonl")
    # a target is a design's setting (AdaptiveRepeats), not a run option
    with pytest.raises(TypeError, match="unexpected keyword argument 'target_half_width'"):
        judge("faithfulness", "faithfulness", "m", target_half_width=0.1, out=tmp_path / "x.jsonl")
    with pytest.raises(UsageError, match=r"in Python give design=jevalkit.stats.AdaptiveRepeats"):
        judge("faithfulness", "faithfulness", "m", repeats="auto", out=tmp_path / "x.jsonl")
    assert len(openai_server.requests) == 12  # the refused call sent nothing


def test_the_judge_command_takes_repeats_auto_and_says_how_it_stopped(
    openai_server, tmp_path, capsys
):
    from jevalkit.cli import main

    openai_server.logprobs = by_case
    argv = ["judge", "faithfulness", "--data", "faithfulness", "--model", "m"]
    argv += ["--base-url", openai_server.base_url, "--out", str(tmp_path / "j.jsonl")]
    assert (
        main([*argv, "--repeats", "auto", "--target-half-width", "0.3", "--max-repeats", "40"]) == 0
    )
    out = capsys.readouterr().out
    assert "adaptive repeats: mean_score" in out and "stopped: target met" in out
