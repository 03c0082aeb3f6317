"""Judges against the loopback server with crafted logprobs, and deterministic tool-call checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jevalkit.judges import (
    JudgeConfig,
    JudgeError,
    Judgment,
    equivalent,
    load_cases,
    load_judge_prompt,
    tool_call_accuracy,
)
from jevalkit.runner import judge


def chat_logprobs(pairs):
    alts = [{"token": t, "logprob": math.log(p)} for t, p in pairs]
    return {
        "content": [{"token": pairs[0][0], "logprob": alts[0]["logprob"], "top_logprobs": alts}]
    }


def test_reference_distribution_gives_verdict_4_and_expected_level_3_21():
    j = Judgment.from_probs(
        list("01234"), [0.02, 0.05, 0.13, 0.30, 0.50], coverage=1, method="logprobs"
    )
    assert j.verdict == "4" and round(j.expected_level, 2) == 3.21
    assert j.entropy == pytest.approx(
        -sum(p * math.log2(p) for p in [0.02, 0.05, 0.13, 0.30, 0.50])
    )


def test_probabilities_from_crafted_logprobs(openai_server, tmp_path):
    # 0.6 of the mass on level tokens, with " 4"/"4" variants and other casing; 0.4 elsewhere
    pairs = [
        (" 4", 0.25),
        ("4", 0.05),
        ("3", 0.18),
        ("2", 0.06),
        ("1", 0.04),
        ("0", 0.02),
        ("The", 0.4),
    ]
    openai_server.logprobs = lambda body: chat_logprobs(pairs)
    df = judge(
        "faithfulness",
        "faithfulness",
        "judge-model",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
    ).rows
    assert len(df) == 6 and df["error"].isna().all()
    row = df.iloc[0]
    expected = np.array([0.02, 0.04, 0.06, 0.18, 0.30]) / 0.6
    assert row["probs"] == pytest.approx(expected.tolist())
    assert row["coverage"] == pytest.approx(0.6)
    assert row["expected_level"] == pytest.approx(float(np.dot(expected, range(5))))
    assert row["verdict"] == "4" and row["method"] == "logprobs" and row["kind"] == "judge"
    body = openai_server.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 1


def test_yes_no_tokens_are_matched_whatever_the_case(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs(
        [(" Yes", 0.3), ("yes", 0.1), ("NO", 0.5), ("x", 0.1)]
    )
    df = judge(
        "security",
        "security",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "s.jsonl",
        progress=False,
    ).rows
    row = df.iloc[0]
    assert row["probs"] == pytest.approx([0.5 / 0.9, 0.4 / 0.9])
    assert row["score"] == pytest.approx(0.4 / 0.9)  # score = p(unsafe)
    assert row["verdict"] == "safe"


def test_missing_logprobs_is_a_loud_error_not_a_fallback(openai_server, tmp_path):
    openai_server.logprobs = None
    df = judge(
        "faithfulness",
        "faithfulness",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
    ).rows
    assert df["probs"].isna().all() and df["verdict"].isna().all()
    assert all("returned no logprobs" in e["message"] for e in df["error"])


def test_low_coverage_is_refused_naming_the_threshold(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs([("Question", 0.9), ("4", 0.02)])
    df = judge(
        "faithfulness",
        "faithfulness",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
        config=JudgeConfig(min_coverage=0.3),
    ).rows
    assert all(
        "2.0% of the probability" in e["message"] and "threshold 30%" in e["message"]
        for e in df["error"]
    )


def test_completion_style_uses_the_completions_endpoint(openai_server, tmp_path):
    openai_server.logprobs = lambda body: {
        "tokens": ["C"],
        "top_logprobs": [{"C": math.log(0.7), "D": math.log(0.2), "x": math.log(0.1)}],
    }
    df = judge(
        "factuality",
        "factuality",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "f.jsonl",
        progress=False,
        config=JudgeConfig(prompt_style="completion"),
    ).rows
    req = openai_server.requests[0]
    assert req["path"].endswith("/completions") and not req["path"].endswith("/chat/completions")
    assert req["body"]["prompt"].endswith("Rating:") and req["body"]["logprobs"] == 20
    row = df.iloc[0]
    assert row["verdict"] == "equivalent"
    # classification score from the choice table: C = 1.0, D = 0.0
    assert row["score"] == pytest.approx(0.7 / 0.9)


def test_sampling_gives_the_empirical_distribution(openai_server, tmp_path):
    answers = {0: "4", 1: "4", 2: "3", 3: "no idea", 4: " 4."}
    openai_server.reply = lambda body: answers[body["seed"] % 5]
    df = judge(
        "faithfulness",
        [load_cases("faithfulness")[0]],
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "s.jsonl",
        progress=False,
        seed=0,
        config=JudgeConfig(method="sampling", n_samples=5, min_coverage=0.5),
    ).rows
    row = df.iloc[0]
    assert row["method"] == "sampling" and row["coverage"] == pytest.approx(0.8)
    assert row["probs"] == pytest.approx([0, 0, 0, 0.25, 0.75])
    assert {r["body"]["temperature"] for r in openai_server.requests} == {1.0}


def test_judge_rows_resume_and_cache_per_repeat(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs([("4", 0.9), ("3", 0.1)])
    kwargs = dict(
        base_url=openai_server.base_url, out=tmp_path / "j.jsonl", progress=False, repeats=2
    )
    judge("faithfulness", "faithfulness", "m", **kwargs)
    assert len(openai_server.requests) == 12
    df = judge("faithfulness", "faithfulness", "m", **kwargs).rows
    assert len(openai_server.requests) == 12 and len(df) == 12


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("3", 3, True),
        (3.0, 3, True),
        ("Celsius", " celsius ", True),
        ("a  b", "a b", True),
        (True, 1, False),
        ("true", True, False),
        ({"x": [1, "2"]}, {"x": ["1", 2]}, True),
        ({"x": 1}, {"x": 1, "y": 2}, False),
        ([1, 2], [2, 1], False),
        ("paris", "london", False),
        (None, None, True),
    ],
)
def test_equivalent_values(a, b, same):
    assert equivalent(a, b) is same


def test_tool_call_accuracy_reports_which_call_and_argument():
    got = [
        {"name": "search", "arguments": '{"q": "x", "limit": "10"}'},
        {"name": "book", "arguments": {"seats": 2}},
    ]
    want = [
        {"name": "search", "arguments": {"limit": 10, "q": "X"}},
        {"name": "book", "arguments": {"seats": 1}},
    ]
    s = tool_call_accuracy(got, want)
    assert s.value == 0.5 and not s.passed
    assert s.errors == ("call 1 (book): argument seats: expected 1, got 2",)
    assert tool_call_accuracy([], want).errors[0] == "call 0: missing call to search"
    free = tool_call_accuracy(
        [{"name": "n", "arguments": {"note": "call me tomorow"}}],
        [{"name": "n", "arguments": {"note": "call me tomorrow"}}],
        free_text=["note"],
    )
    assert free.passed


def test_bundled_tool_call_cases_match_their_gold(tmp_path):
    df = judge(
        "tool_call_accuracy", "tool_call_accuracy", out=tmp_path / "t.jsonl", progress=False
    ).rows
    assert len(df) == 6 and (df["verdict"] == df["gold"]).all()


def test_every_judge_file_loads_and_its_examples_name_levels():
    for name in (
        "llm_judge",
        "faithfulness",
        "answer_relevancy",
        "answer_correctness",
        "translation",
        "security",
        "factuality",
    ):
        prompt = load_judge_prompt(name)
        cases = load_cases(name)
        assert len(cases) >= 6 and all(c["gold"] in prompt.labels for c in cases)
        assert prompt.completion_prompt(cases[0]).rstrip().endswith("Rating:")


def test_bad_case_file_is_one_line(tmp_path):
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"id": "a", "output": "x"}\n{"id": "a", "output": "y"}\n')
    with pytest.raises(JudgeError.__mro__[1], match=r"c.jsonl:2: duplicate case id 'a'"):
        load_cases(bad)


def test_explanation_when_asked_for(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs([("4", 0.9), ("3", 0.1)])
    openai_server.reply = lambda body: (
        "Every claim is in the context." if len(body["messages"]) > 2 else "4"
    )
    df = judge(
        "faithfulness",
        [load_cases("faithfulness")[0]],
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "e.jsonl",
        progress=False,
        config=JudgeConfig(explain=True),
    ).rows
    assert df.loc[0, "explanation"] == "Every claim is in the context."
    follow_up = openai_server.requests[-1]["body"]["messages"]
    assert (
        follow_up[-2] == {"role": "assistant", "content": "4"}
        and "explain" in follow_up[-1]["content"]
    )
    assert df.loc[0, "parameters"]["explain"] is True


def test_free_text_tool_arguments_go_to_a_model_judge(openai_server, tmp_path):
    openai_server.logprobs = lambda body: chat_logprobs([("Yes", 0.85), ("No", 0.15)])
    case = {
        "id": "ft",
        "free_text_arguments": ["query"],
        "tool_calls": [
            {"name": "search", "arguments": {"query": "inexpensive Rome flights", "limit": "5"}}
        ],
        "expected_tool_calls": [
            {"name": "search", "arguments": {"query": "cheap flights to Rome", "limit": 5}}
        ],
    }
    df = judge(
        "tool_call_accuracy",
        [case],
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "t.jsonl",
        progress=False,
    ).rows
    assert df.loc[0, "verdict"] == "match" and len(openai_server.requests) == 1
    asked = openai_server.requests[0]["body"]["messages"][1]["content"]
    assert "cheap flights to Rome" in asked and "inexpensive Rome flights" in asked
    openai_server.logprobs = lambda body: chat_logprobs([("Yes", 0.1), ("No", 0.9)])
    df = judge(
        "tool_call_accuracy",
        [case],
        "m2",
        base_url=openai_server.base_url,
        out=tmp_path / "u.jsonl",
        progress=False,
    ).rows
    assert (
        df.loc[0, "verdict"] == "mismatch"
        and "judged p(same meaning) 0.10" in df.loc[0, "score_errors"][0]
    )


def test_several_judge_models_over_the_same_outputs_are_a_facet(openai_server, tmp_path):
    from jevalkit import stats
    from jevalkit.errors import UsageError
    from jevalkit.runner import judge_models

    openai_server.logprobs = lambda body: chat_logprobs(
        [("4", 0.7), ("3", 0.3)] if body["model"] == "m1" else [("2", 0.6), ("3", 0.4)]
    )
    result = judge_models(
        "faithfulness",
        "faithfulness",
        ["m1", "m2"],
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
        repeats=2,
    )
    df = result.rows
    assert sorted(df["model"].unique()) == ["m1", "m2"] and len(df) == 24
    assert result.stopped is None and not result.budget_overrun and result.design is None
    assert (tmp_path / "j__m1.jsonl").exists() and (tmp_path / "j__m2.jsonl").exists()
    vc = stats.variance_components(result, facets=["case", "model"]).table()  # takes the rows
    shares = vc.set_index("component")["share"]
    assert shares["model"] > 0.9  # the two judges differ by a level on every case
    with pytest.raises(UsageError, match="once each"):
        judge_models("faithfulness", "faithfulness", ["m1", "m1"])


def test_judge_and_probe_names_follow_one_id_at_version_rule(tmp_path):
    """Issue 34: load_judge_prompt accepted `@01` and listed `v01.yaml` (as version 1) that its
    reader then refused; probes refused both. One parser (datafiles.parse_ref) and one file rule
    (datafiles.version_files) serve both now."""
    import shutil

    from jevalkit.errors import JudgeFileError, ProbeError
    from jevalkit.judges import judges_dir, load_judge_prompt
    from jevalkit.probes import load_probe

    for ref in ("faithfulness@01", "faithfulness@0", "faithfulness@x", "Faithfulness"):
        with pytest.raises(JudgeFileError, match="expected `judge-id` or `judge-id@N`"):
            load_judge_prompt(ref)
    for ref in ("schema-ten-records@02", "schema-ten-records@0"):
        with pytest.raises(ProbeError, match="expected `probe-id` or `probe-id@N`"):
            load_probe(ref)
    assert load_judge_prompt("faithfulness@1").version == 1
    root = tmp_path / "judges"
    shutil.copytree(judges_dir() / "faithfulness", root / "faithfulness")
    (root / "faithfulness" / "v1.yaml").rename(root / "faithfulness" / "v01.yaml")
    with pytest.raises(JudgeFileError, match=r"v01.yaml: a version file is named v<N>.yaml"):
        load_judge_prompt("faithfulness", root=root)
