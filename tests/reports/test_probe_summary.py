"""The demo's probe_summary.md (issue 54.2): model output shown without HTML escapes that
render as text, one section per probe version, and answers cut off at max_tokens said to be cut
(not "not valid JSON")."""

from __future__ import annotations

import re

import pandas as pd

from jevalkit._paths import data_dir
from jevalkit.reports import headline, probe_summary_markdown, violations
from jevalkit.results import read_results

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"  # @2, 400 tokens
VARIANTS = data_dir() / "runs" / "schema-ten-records__variants__local.jsonl"  # @3, 240 tokens


def test_quotes_in_model_output_read_as_quotes_not_as_broken_entities():
    text = probe_summary_markdown(read_results(DEMO), title="demo")
    # "prose before the JSON (starts with 'If there are two or ')": its quotes were `&\#x27;`
    assert "&\\#x27;" not in text and "&#x27;" not in text
    assert re.search(r"starts with 'If there are two or '", text), text
    assert "<" not in text.replace("```", "")  # model output never reaches Markdown as HTML


def test_a_summary_of_two_versions_keeps_them_apart():
    both = pd.concat([read_results(DEMO), read_results(VARIANTS)], ignore_index=True)
    text = probe_summary_markdown(both, title="two")
    assert "## Pass rate by probe version" in text
    assert "| constrained, T=1 | 5/5 (1.00) | not run |" in text
    assert "| local | not run | 2/15 (0.13) |" in text
    assert "## schema\\-ten\\-records@2" in text and "## schema\\-ten\\-records@3" in text
    assert text.count("### Pass rate") == 2
    heads = {(h["probe"], h["system"]): h for h in headline(both)}
    assert heads[("schema-ten-records@3", "local")]["truncated"] == 13
    assert heads[("schema-ten-records@2", "constrained, T=1")]["truncated"] == 0


def test_a_cut_answer_is_reported_as_cut():
    rows = read_results(VARIANTS)
    cut = rows[rows["finish_reason"] == "length"].iloc[0]
    said = violations(cut)
    assert (
        said[0]
        == "cut off at max_tokens after 240 tokens (finish_reason 'length'): raise max_tokens"
    )
    assert all(
        "not valid JSON" not in s or s.startswith("incomplete, so not valid JSON") for s in said
    )
    whole = rows[rows["finish_reason"] != "length"].iloc[0]
    assert violations(whole) == list(whole["score_errors"])
    text = probe_summary_markdown(rows, title="cut")
    assert "Violations: cut off at max\\_tokens after 240 tokens" in text
    assert "| local | 15 | 2 | 0 | 13 | 0.13 |" in text  # n, passed, errors, cut off, rate
