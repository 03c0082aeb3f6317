"""Prompt variants: paraphrased messages declared in the probe, run with ``variants="all"``,
each row carrying its ``variant``."""

from __future__ import annotations

import pytest
from probe_folders import write_probe

import jevalkit
from jevalkit.client import request_seed
from jevalkit.errors import ProbeError, UsageError


def run_here(server, tmp_path, probe="schema-ten-records", **options):
    options.setdefault("progress", False)
    options.setdefault("out", tmp_path / "r.jsonl")
    return jevalkit.run(probe, "test/m", base_url=server.base_url, **options).rows


def test_all_variants_are_sent_with_their_own_messages(openai_server, tmp_path):
    probe = jevalkit.load_probe("schema-ten-records@3")
    df = run_here(openai_server, tmp_path, variants="all", repeats=5, temperature=1.0, seed=2)
    assert len(df) == 15 and sorted(set(df["variant"])) == ["base", "checklist", "terse"]
    assert df.groupby("variant").size().eq(5).all()
    sent = {}
    for request in openai_server.requests:
        sent.setdefault(request["body"]["messages"][0]["content"], []).append(request)
    assert len(sent) == 3
    for variant in probe.variant_ids:
        messages = probe.chat_messages(variant=variant)
        assert [r["body"]["messages"] for r in sent[messages[0]["content"]]] == [messages] * 5
    seeds = df.groupby("variant")["parameters"].apply(lambda s: sorted(p["seed"] for p in s))
    for variant, sent_seeds in seeds.items():  # each wording its own draws, repeats apart
        assert sent_seeds == [request_seed(2, r, None, variant) for r in range(5)]
    assert len({s for ss in seeds for s in ss}) == 15
    again = run_here(openai_server, tmp_path, variants="all", repeats=5, temperature=1.0, seed=2)
    assert len(openai_server.requests) == 15 and len(again) == 15  # resumed: nothing re-sent


def test_chosen_variants_and_unknown_ones(openai_server, tmp_path):
    df = run_here(openai_server, tmp_path, variants=["terse"])
    assert df["variant"].tolist() == ["terse"] and df.loc[0, "passed"]
    with pytest.raises(UsageError, match="has no variant 'loud'; it has base, terse, checklist"):
        run_here(openai_server, tmp_path, variants=["loud"])
    df = run_here(openai_server, tmp_path, "schema-ten-records@2", variants="all")
    assert df["variant"].tolist() == ["base"]  # a probe without variants has its own wording


def test_variants_cross_cases_and_each_variant_is_checked_against_every_case(
    openai_server, tmp_path
):
    root = tmp_path / "probes"
    variants = [
        {"id": "polite", "messages": [{"role": "user", "content": "Please double {{x}}."}]},
        {"id": "terse", "messages": [{"role": "user", "content": "2*{{x}}="}]},
    ]
    write_probe(root, variants=variants)
    probe = jevalkit.load_probe("double", root=root)
    df = run_here(openai_server, tmp_path, probe, variants="all", repeats=2, cases="1-4")
    assert len(df) == 4 * 3 * 2
    assert len({(r.case_id, r.variant, r.repeat) for r in df.itertuples()}) == 24
    bad = [{"id": "odd", "messages": [{"role": "user", "content": "Double {{y}}"}]}]
    with pytest.raises(ProbeError, match=r"case 'c01': no field 'y'.*\(variant odd\)"):
        write_probe(tmp_path / "other", variants=bad)
    with pytest.raises(ProbeError, match="variants"):
        write_probe(
            tmp_path / "third", variants=[{"id": "base", "messages": variants[0]["messages"]}]
        )


def test_the_cli_takes_variants(openai_server, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "r.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jevalkit.cli",
            "run",
            "schema-ten-records",
            "--model",
            "test/m",
            "--base-url",
            openai_server.base_url,
            "--out",
            str(out),
            "--variants",
            "base,terse",
            "--repeats",
            "2",
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = jevalkit.read_results(out)
    assert sorted(rows["variant"]) == ["base", "base", "terse", "terse"]
