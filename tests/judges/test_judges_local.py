"""Every evaluator on the embedded Gemma 3 270M returns a valid distribution (marker local_model)."""

from __future__ import annotations

import math

import pytest

from jevalkit.judges import JudgeConfig, load_cases
from jevalkit.runner import judge

pytestmark = pytest.mark.local_model

MODEL_JUDGES = [
    "llm_judge",
    "faithfulness",
    "answer_relevancy",
    "answer_correctness",
    "translation",
    "security",
    "factuality",
]


@pytest.mark.parametrize("evaluator", MODEL_JUDGES)
def test_each_evaluator_returns_a_distribution(evaluator, tmp_path, local_server):
    cases = load_cases(evaluator)[:2]
    # completion style: a base model puts its mass on level tokens only there; coverage is
    # recorded, and no threshold is applied so the test sees every distribution
    df = judge(
        evaluator,
        cases,
        "local",
        out=tmp_path / "j.jsonl",
        progress=False,
        config=JudgeConfig(prompt_style="completion", min_coverage=1e-9),
    ).rows
    assert len(df) == 2
    for row in df.itertuples():
        assert row.error is None, row.error
        assert math.isclose(sum(row.probs), 1.0, abs_tol=1e-9)
        assert 0 < row.coverage <= 1 and 0 <= row.score <= 1
        assert row.model_resolved == "gemma-3-270m-q4_k_m" and row.method == "logprobs"


def test_pairwise_plays_both_orders_on_the_embedded_model(tmp_path, local_server):
    from jevalkit.metrics import position_bias

    cases = load_cases("pairwise")[:2]
    df = judge(
        "pairwise",
        cases,
        "local",
        out=tmp_path / "p.jsonl",
        progress=False,
        config=JudgeConfig(prompt_style="completion", min_coverage=1e-9),
    ).rows
    assert len(df) == 4 and sorted(df["position"]) == ["a_first", "a_first", "b_first", "b_first"]
    for row in df.itertuples():
        assert row.error is None, row.error
        assert math.isclose(sum(row.probs), 1.0, abs_tol=1e-9)
        assert row.system_a == cases[0]["system_a"] and 0 <= row.score <= 1
    assert position_bias(df).iloc[0]["n_pairs"] == 2
