"""``jevalkit compare`` on a file where each system ran two versions of a probe: the versions
are compared apart (the table names them, the CLI says so) and their changed cases listed per
version; ``--pool`` pools them on purpose (issue 50: compare skipped the settings rule)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import jevalkit
from jevalkit.cli import main
from jevalkit.io import write_results

RUNS = Path(__file__).parents[2] / "data" / "runs"


def runs_path(name: str) -> Path:
    return RUNS / name


@pytest.fixture
def two_versions(tmp_path):
    v1 = jevalkit.read_results(runs_path("follow-constraints__local.jsonl"))
    v2 = jevalkit.read_results(runs_path("follow-constraints__v2__local.jsonl"))
    v2 = v2[v2["label"] == "T=0"].assign(label=None)  # one setting of version 2, as "local"
    mine = pd.concat([v1, v2], ignore_index=True)
    theirs = mine.assign(model="other", passed=~mine["passed"].astype(bool))
    return write_results(pd.concat([mine, theirs], ignore_index=True), tmp_path / "both.jsonl")


def test_compare_keeps_two_versions_of_a_system_apart(two_versions, capsys):
    assert main(["compare", str(two_versions), "--baseline", "local", "--by", ""]) == 0
    out = capsys.readouterr().out
    assert "kept apart: probe, version differ within a system; pass --pool" in out
    table = jevalkit.metrics.compare(jevalkit.read_results(two_versions), "local", by=None)
    assert sorted(set(table["version"])) == [1, 2] and len(table) == 4
    assert "other against local (probe=follow-constraints, version=1)" in out
    assert "other against local (probe=follow-constraints, version=2)" in out


def test_pool_compares_the_versions_as_one(two_versions, capsys):
    assert main(["compare", str(two_versions), "--baseline", "local", "--by", "", "--pool"]) == 0
    out = capsys.readouterr().out
    assert "kept apart" not in out and "version=" not in out
