"""Running probes with cases against the loopback server: one job per (case, variant, repeat),
per-case scores, resume, cache, subsets, budgets, adaptive repeats and the dry run per case."""

from __future__ import annotations

import re

import pytest
from probe_folders import write_probe

import jevalkit
from jevalkit.errors import UsageError
from jevalkit.results import read_results, row_key
from jevalkit.stats import AdaptiveRepeats


def doubling_reply(body):
    """Right for even numbers, one too many for odd ones."""
    (n,) = re.findall(r"(-?\d+)", body["messages"][-1]["content"])
    n = int(n)
    return str(2 * n + (n % 2))


@pytest.fixture
def probes(tmp_path, openai_server):
    root = tmp_path / "probes"
    write_probe(root)
    openai_server.reply = doubling_reply
    return root


def run_cases(server, tmp_path, root, **options):
    options.setdefault("progress", False)
    options.setdefault("out", tmp_path / "r.jsonl")
    probe = jevalkit.load_probe("double", root=root)
    return jevalkit.run(probe, "test/m", base_url=server.base_url, **options)


def test_thirty_cases_three_repeats_score_each_case(openai_server, tmp_path, probes):
    df = run_cases(openai_server, tmp_path, probes, repeats=3).rows
    assert len(df) == 90 and len(openai_server.requests) == 90
    assert sorted(set(df["case_id"])) == [f"c{i:02d}" for i in range(1, 31)]
    assert all(sorted(g) == [0, 1, 2] for _, g in df.groupby("case_id")["repeat"])
    for row in df.itertuples():
        n = int(row.case_id[1:])
        assert row.passed == (n % 2 == 0) and row.score == float(n % 2 == 0)
        assert row.output == str(2 * n + n % 2)
        assert row.variant is None and row.subset is None
    sent = sorted(r["body"]["messages"][-1]["content"] for r in openai_server.requests)
    assert sent.count("What is twice 1?") == 3 and len(set(sent)) == 30
    pr = jevalkit.metrics.pass_rate(df)
    assert int(pr.loc[0, "n_cases"]) == 30 and pr.loc[0, "value"] == pytest.approx(0.5)


def test_resume_and_cache_work_per_case(openai_server, tmp_path, probes):
    run_cases(openai_server, tmp_path, probes, repeats=2, cases="1-10")
    assert len(openai_server.requests) == 20
    df = run_cases(openai_server, tmp_path, probes, repeats=2).rows  # resumes: 40 more
    assert len(openai_server.requests) == 60 and len(df) == 60
    rows = read_results(tmp_path / "r.jsonl")
    assert len(rows) == 60 and len({row_key(r) for r in rows.to_dict("records")}) == 60
    again = run_cases(openai_server, tmp_path, probes, repeats=2, out=tmp_path / "b.jsonl").rows
    assert len(openai_server.requests) == 60 and again["cached"].all()  # per (case, repeat)
    assert (again.sort_values(["case_id", "repeat"])["output"].tolist()) == (
        df.sort_values(["case_id", "repeat"])["output"].tolist()
    )


def test_a_range_and_a_seeded_sample_are_recorded_in_the_rows(openai_server, tmp_path, probes):
    df = run_cases(openai_server, tmp_path, probes, cases="3-5,30").rows
    assert sorted(df["case_id"]) == ["c03", "c04", "c05", "c30"]
    assert set(df["subset"]) == {"cases 3-5,30 of 30"}
    a = run_cases(
        openai_server, tmp_path, probes, sample=7, sample_seed=3, out=tmp_path / "a.jsonl"
    ).rows
    b = run_cases(openai_server, tmp_path, probes, sample=7, seed=3, out=tmp_path / "b.jsonl").rows
    assert sorted(a["case_id"]) == sorted(b["case_id"]) and len(a) == 7
    assert set(a["subset"]) == {"random sample of 7 of 30 cases, seed 3"}
    c = run_cases(
        openai_server, tmp_path, probes, sample=7, sample_seed=4, out=tmp_path / "c.jsonl"
    ).rows
    assert sorted(c["case_id"]) != sorted(a["case_id"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cases": "0-3"}, r"--cases '0-3': 0-3 is outside 1-30"),
        ({"cases": "a-b"}, r"expected positions like 1-50"),
        ({"sample": 31, "sample_seed": 1}, r"--sample must be from 1 to 30"),
        ({"sample": 5}, r"--sample needs a seed"),
    ],
)
def test_bad_subsets_are_refused_before_sending(openai_server, tmp_path, probes, options, message):
    with pytest.raises(UsageError, match=message):
        run_cases(openai_server, tmp_path, probes, **options)
    assert openai_server.requests == []


def test_a_subset_of_a_probe_without_cases_is_refused(openai_server, tmp_path):
    with pytest.raises(UsageError, match="schema-ten-records@4 has no cases"):
        jevalkit.run(
            "schema-ten-records",
            "m",
            base_url=openai_server.base_url,
            cases="1-2",
            out=tmp_path / "r.jsonl",
            progress=False,
        )


def test_a_request_budget_stops_between_cases_and_resumes(openai_server, tmp_path, probes):
    stopped = run_cases(
        openai_server, tmp_path, probes, repeats=2, budget_requests=15, concurrency=2
    )
    assert len(stopped.rows) == 15 and stopped.stopped
    df = run_cases(openai_server, tmp_path, probes, repeats=2).rows
    assert len(df) == 60 and len(openai_server.requests) == 60


def test_adaptive_repeats_sweep_over_cases(openai_server, tmp_path, probes):
    result = run_cases(
        openai_server,
        tmp_path,
        probes,
        cases="1-8",
        design=AdaptiveRepeats(target_half_width=0.45, min_repeats=2, max_repeats=6),
        temperature=1.0,
        seed=1,
    )
    summary, df = result.design.table().iloc[0], result.rows
    assert summary["n_cases"] == 8
    counts = df.groupby("case_id").size()
    assert len(counts) == 8 and (counts >= 2).all() and (counts <= 6).all()
    for _, rows in df.groupby("case_id"):
        assert sorted(rows["repeat"]) == list(range(len(rows)))  # repeats numbered per case
    assert summary["value"] == pytest.approx(0.5, abs=1e-9)  # even cases pass, odd fail


def test_dry_run_counts_requests_and_prompt_tokens_per_case(tmp_path, probes, monkeypatch):
    # a plan refuses what the run would (no key for a remote endpoint): give it a key
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-0123456789abcdef")
    probe = jevalkit.load_probe("double", root=probes)
    table = jevalkit.plan(probe, "openai/gpt-4o-mini", repeats=3, out=tmp_path / "r.jsonl")
    assert int(table.iloc[0]["requests"]) == 90
    one = jevalkit.plan(probe, "openai/gpt-4o-mini", repeats=3, cases="1", out=tmp_path / "r.jsonl")
    assert int(one.iloc[0]["requests"]) == 3
    # the prompt grows by one digit from case 10 on: the estimate follows the filled prompts
    assert table.iloc[0]["prompt_tokens"] > 30 * one.iloc[0]["prompt_tokens"] - 90


def test_per_case_gold_reaches_the_rows(openai_server, tmp_path):
    root = tmp_path / "probes"
    rows = [
        {"id": f"g{i}", "x": i, "expected": str(2 * i), "gold": "easy" if i < 3 else 7}
        for i in range(1, 6)
    ]
    write_probe(
        root,
        rows=rows,
        examples=[
            {"label": "r", "case": "g1", "output": "2", "expect": "pass"},
            {"label": "w", "case": "g1", "output": "3", "expect": "fail"},
        ],
    )
    openai_server.reply = doubling_reply
    df = run_cases(openai_server, tmp_path, root).rows
    assert dict(zip(df["case_id"], df["gold"], strict=True)) == {
        "g1": "easy",
        "g2": "easy",
        "g3": 7,
        "g4": 7,
        "g5": 7,
    }
    sent = " ".join(r["body"]["messages"][-1]["content"] for r in openai_server.requests)
    assert "easy" not in sent  # gold never reaches a prompt
