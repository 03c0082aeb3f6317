"""Resuming a case probe over rows written from other content, against the loopback server."""

from __future__ import annotations

import json

import pytest
from probe_folders import write_probe

import jevalkit
from jevalkit.errors import ResultsError
from jevalkit.results import read_results


def test_resume_after_an_unpublished_case_file_changed_is_refused(openai_server, tmp_path):
    # an unpublished user probe is not checked against a lock: editing its case file in place
    # and resuming kept the old rows (old prompts) beside new ones under one probe version
    root = tmp_path / "probes"
    write_probe(root, publish=False)
    openai_server.reply = lambda body: "4"
    out = tmp_path / "r.jsonl"

    def run(**options):
        probe = jevalkit.load_probe("double", root=root)
        return jevalkit.run(
            probe,
            "test/m",
            base_url=openai_server.base_url,
            progress=False,
            **{"out": out, **options},
        ).rows

    run(cases="1-3")
    cases = root / "double" / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    rows[1]["x"] = 200  # case c02 now asks another question
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ResultsError, match=r"double@1 written from other content .* --out"):
        run(cases="1-3")
    assert len(read_results(out)) == 3  # nothing half-written
    assert len(run(cases="1-3", out=tmp_path / "new.jsonl")) == 3
    sent = [r["body"]["messages"][-1]["content"] for r in openai_server.requests]
    assert sent.count("What is twice 200?") == 1 and len(sent) == 4  # c01, c03 from the cache


def test_a_shard_refuses_rows_of_other_content_in_the_results_file(openai_server, tmp_path):
    # a shard writes into its own part file; the rows it skips (already in the results file)
    # must still be checked against the probe's content, as a single-process resume checks them
    root = tmp_path / "probes"
    write_probe(root, publish=False)
    openai_server.reply = lambda body: "4"
    out = tmp_path / "r.jsonl"

    def run(**options):
        probe = jevalkit.load_probe("double", root=root)
        return jevalkit.run(
            probe, "test/m", base_url=openai_server.base_url, progress=False, out=out, **options
        ).rows

    run(cases="1-3")
    cases = root / "double" / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    rows[1]["x"] = 200
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ResultsError, match=r"double@1 written from other content"):
        run(cases="1-3", shard="0/2")
    assert not list((tmp_path / "r.jsonl.parts").glob("*.jsonl"))  # nothing half-written
