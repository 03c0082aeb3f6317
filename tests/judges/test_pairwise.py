"""Pairwise judging in both orders, bias diagnostics, and Bradley-Terry rankings (issue 14)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from jevalkit import io
from jevalkit._paths import data_dir
from jevalkit.errors import StatsError
from jevalkit.judges import JudgeConfig, load_cases
from jevalkit.metrics import baseline_win_rates, pairwise_preferences, position_bias, rank
from jevalkit.results import read_results
from jevalkit.runner import judge as run_judge
from jevalkit.runner import run

EXAMPLE = data_dir() / "examples" / "pairwise.jsonl"


def chat_logprobs(pairs):
    alts = [{"token": t, "logprob": math.log(p)} for t, p in pairs]
    return {
        "content": [{"token": pairs[0][0], "logprob": alts[0]["logprob"], "top_logprobs": alts}]
    }


def test_every_comparison_is_played_in_both_orders_and_mapped_back(openai_server, tmp_path):
    # a judge that always prefers the answer shown first: "5" = A much better
    openai_server.logprobs = lambda body: chat_logprobs([("5", 0.7), ("4", 0.2), ("3", 0.1)])
    df = run_judge(
        "pairwise",
        "pairwise",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "p.jsonl",
        progress=False,
    ).rows
    assert len(df) == 12 and set(df["kind"]) == {"pairwise"}
    assert sorted(df["position"].unique()) == ["a_first", "b_first"]
    first = df[df["position"] == "a_first"].iloc[0]
    second = df[df["position"] == "b_first"].iloc[0]
    assert first["verdict"] == "a>>b" and second["verdict"] == "b>>a"
    assert first["probs"] == pytest.approx([0, 0, 0.1, 0.2, 0.7]) and second[
        "probs"
    ] == pytest.approx([0.7, 0.2, 0.1, 0, 0])
    assert first["score"] == pytest.approx(0.9) and second["score"] == pytest.approx(0.1)
    shown = [r["body"]["messages"][1]["content"] for r in openai_server.requests]
    outputs = load_cases("pairwise")[0]
    assert any(f"Answer A: {outputs['output_a']}" in s for s in shown)
    assert any(f"Answer A: {outputs['output_b']}" in s for s in shown)  # the swapped order
    prefs = pairwise_preferences(df)
    assert (
        len(prefs) == 6
        and not prefs["swap_consistent"].any()
        and np.allclose(prefs["preference"], 0.5, rtol=0, atol=1e-12)
    )
    bias = position_bias(df).iloc[0]
    assert bias["first_win_share"] == 1.0 and bias["swap_consistency"] == 0.0
    assert all(s["a"]["length"] > 0 for s in df["source"])
    run_judge(
        "pairwise",
        "pairwise",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "p.jsonl",
        progress=False,
    )
    assert len(openai_server.requests) == 12  # resumed: nothing sent twice


def test_completion_style_and_outputs_of_two_runs(openai_server, tmp_path):
    run(
        "schema-ten-records",
        "x",
        base_url=openai_server.base_url,
        out=tmp_path / "a.jsonl",
        repeats=2,
        progress=False,
    )
    openai_server.reply = lambda body: '[{"id": 1}]'
    run(
        "schema-ten-records",
        "y",
        base_url=openai_server.base_url,
        out=tmp_path / "b.jsonl",
        repeats=2,
        progress=False,
        cache=False,
    )
    openai_server.logprobs = lambda body: {
        "tokens": ["4"],
        "top_logprobs": [{"4": math.log(0.6), "2": math.log(0.4)}],
    }
    df = run_judge(
        "pairwise",
        None,
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        systems=(tmp_path / "a.jsonl", tmp_path / "b.jsonl"),
        config=JudgeConfig(prompt_style="completion"),
        progress=False,
    ).rows
    assert len(df) == 4 and set(df["system_a"]) == {"x"} and set(df["system_b"]) == {"y"}
    prompts = [r["body"]["prompt"] for r in openai_server.requests if "prompt" in r["body"]]
    assert all(
        (p.endswith("Verdict: ") and 'Answer B: [{"id": 1}]' in p) or 'Answer A: [{"id": 1}]' in p
        for p in prompts
    )


def test_pairwise_on_imported_results_with_slashes_in_ids(openai_server, tmp_path):
    """Issue 26.10: imported runs (probe ``tiny/includes``, case ids with slashes) were looked up
    as bundled probes ('tiny/includes@0': expected `probe-id@N`); the input comes from the rows."""

    def imported(model, outs, name):
        n = len(outs)
        frame = io.results_from_columns(
            n,
            {
                "probe": "tiny/includes",
                "case_id": [f"sample/{i}" for i in range(n)],
                "repeat": 0,
                "version": 0,
                "score": 1.0,
                "output": outs,
                "model": model,
                "error": [None] * n,
                "source": [{"input": f"question {i}?", "target": "t"} for i in range(n)],
            },
            where=name,
        )
        return io.write_results(frame, tmp_path / name)

    a = imported("ma", ["alpha", "beta"], "a.jsonl")
    b = imported("mb", ["gamma", "delta"], "b.jsonl")
    openai_server.logprobs = lambda body: chat_logprobs([("4", 0.6), ("2", 0.4)])
    df = run_judge(
        "pairwise",
        None,
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        systems=(a, b),
        progress=False,
    ).rows
    assert len(df) == 4 and df["error"].isna().all()
    assert set(df["system_a"]) == {"ma"} and set(df["system_b"]) == {"mb"}
    shown = " ".join(r["body"]["messages"][1]["content"] for r in openai_server.requests)
    assert "question 0?" in shown and "question 1?" in shown
    assert len(pairwise_preferences(df)) == 2  # one combined row per case


def glm_strengths(games: pd.DataFrame, systems: list[str], anchor: str, strong=1.0, style=None):
    """An independent fit: statsmodels GLM (binomial) on game rows, a tie as half a win."""
    x = np.zeros((len(games), len(systems)))
    for i, (a, b) in enumerate(zip(games["system_a"], games["system_b"], strict=True)):
        x[i, systems.index(a)] += 1
        x[i, systems.index(b)] -= 1
    x = np.delete(x, systems.index(anchor), axis=1)
    if style is not None:
        x = np.column_stack([x, style])
    verdict = games["verdict"].str.lower()
    y = verdict.map({"a>>b": 1.0, "a>b": 1.0, "a=b": 0.5, "b>a": 0.0, "b>>a": 0.0}).to_numpy()
    w = np.where(verdict.str.contains(">>"), strong, 1.0)
    fit = sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-12)
    return fit.params


def test_bradley_terry_strengths_agree_with_statsmodels_to_1e6():
    games = io.read(EXAMPLE)
    systems = sorted(set(games["system_a"]) | set(games["system_b"]))
    table = rank(games, anchor="delta", n_resamples=50).table().set_index("system")
    params = glm_strengths(games, systems, "delta")
    others = [s for s in systems if s != "delta"]
    assert table.loc[others, "strength"].to_numpy() == pytest.approx(params, abs=1e-6)
    assert table.loc["delta", "rating"] == 1000.0
    assert table.loc["alpha", "rating"] == pytest.approx(
        1000 + 400 / math.log(10) * table.loc["alpha", "strength"]
    )
    # the same seed gives the same bootstrap
    again = rank(games, anchor="delta", n_resamples=50).table().set_index("system")
    pd.testing.assert_series_equal(again["ci_low"], table["ci_low"])
    assert np.isnan(table.loc["delta", "ci_low"])  # the anchor is fixed: no interval


def test_strong_verdicts_ties_and_style_control_against_statsmodels(tmp_path):
    rng = np.random.default_rng(0)
    names = ["p", "q", "r", "s"]
    rows = []
    for case in range(300):
        a, b = rng.choice(names, 2, replace=False)
        verdict = rng.choice(["a>>b", "a>b", "a=b", "b>a", "b>>a"], p=[0.15, 0.3, 0.15, 0.25, 0.15])
        style = {
            "a": {
                "length": int(rng.integers(50, 900)),
                "headers": int(rng.integers(0, 3)),
                "lists": int(rng.integers(0, 5)),
                "bold": int(rng.integers(0, 4)),
            },
            "b": {
                "length": int(rng.integers(50, 900)),
                "headers": int(rng.integers(0, 3)),
                "lists": int(rng.integers(0, 5)),
                "bold": int(rng.integers(0, 4)),
            },
        }
        rows.append(
            {
                "case_id": str(case),
                "system_a": str(a),
                "system_b": str(b),
                "position": "a_first",
                "verdict": verdict,
                "score": 0.5,
                "error": None,
                "source": style,
            }
        )
    games = pd.DataFrame(rows)
    ranking = rank(games, anchor="p", strong_weight=3.0, style=True, n_resamples=20, case="case_id")
    table = ranking.table().set_index("system")
    features = []
    for f in ("length", "headers", "lists", "bold"):
        a = np.array([s["a"][f] for s in games["source"]], float)
        b = np.array([s["b"][f] for s in games["source"]], float)
        d = np.divide(a - b, a + b, out=np.zeros_like(a), where=(a + b) > 0)
        features.append(d / d.std())
    params = glm_strengths(games, names, "p", strong=3.0, style=np.column_stack(features))
    assert table.loc[["q", "r", "s"], "strength"].to_numpy() == pytest.approx(params[:3], abs=1e-6)
    assert list(ranking.style_coefficients.values()) == pytest.approx(params[3:], abs=1e-6)
    with pytest.raises(StatsError, match="style control needs"):
        rank(io.read(EXAMPLE), style=True, n_resamples=5)


def test_case_resampling_keeps_a_cases_games_together():
    games = io.read(EXAMPLE)
    by_case = rank(games, anchor="delta", n_resamples=300)
    by_game = rank(games, anchor="delta", n_resamples=300, resample="games")
    assert "over 80 cases" in by_case.table()["method"][1]
    assert "over 480 games" in by_game.table()["method"][1]
    assert 0 <= by_case.separability <= 1 and by_case.draws.shape == (300, 6)


def test_win_rates_against_a_baseline_with_case_intervals():
    games = io.read(EXAMPLE)
    table = baseline_win_rates(games, "delta").set_index("system")
    involved = games[(games["system_a"] == "delta") | (games["system_b"] == "delta")]
    mine = involved[(involved["system_a"] == "alpha") | (involved["system_b"] == "alpha")]
    y = np.where(mine["system_a"] == "alpha", mine["score"], 1 - mine["score"])
    assert table.loc["alpha", "value"] == pytest.approx(y.mean())
    assert (
        table.loc["alpha", "ci_low"] <= table.loc["alpha", "value"] <= table.loc["alpha", "ci_high"]
    )


def test_results_from_the_judge_read_back_as_games(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs([("4", 0.6), ("2", 0.4)])
    run_judge(
        "pairwise",
        "pairwise",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "p.jsonl",
        progress=False,
    )
    df = read_results(tmp_path / "p.jsonl")
    table = rank(df, n_resamples=20).table()
    assert set(table["system"]) == {"careful", "sloppy"}
