"""The gate decides per system (issue 26.6): a results file with three systems got one pooled
decision, and the pooled systems' different verdicts on a case read as a flaky evaluator."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from jevalkit.errors import StatsError
from jevalkit.metrics import gate, pass_rate
from jevalkit.runner import run


def three_systems() -> pd.DataFrame:
    verdicts = {"steady": True, "broken": False, "also steady": True}
    return pd.DataFrame(
        [
            {"probe": "p", "version": 1, "case_id": f"c{c}", "system": s, "repeat": r, "passed": ok}
            for s, ok in verdicts.items()
            for c in range(8)
            for r in range(3)
        ]
    )


def test_three_systems_get_three_decisions_not_one_flaky_refusal():
    df = three_systems()
    # declared one system, three systems' rows of a case and repeat are duplicates (the pooled
    # gate once called their different verdicts flips, then, once consistency refused
    # duplicates, passed them): refused in one line
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        gate(df, minimum=0.5, system=None)
    table = gate(df, minimum=0.5)
    decisions = dict(zip(table["system"], table["decision"], strict=True))
    assert decisions == {"also steady": "pass", "broken": "fail", "steady": "pass"}
    expected = pass_rate(df, by="system").set_index("system")
    for row in table.itertuples():
        assert row.ci_low == pytest.approx(expected.loc[row.system, "ci_low"])
        assert row.reason.startswith(f"system={row.system}: ")


def test_the_system_column_is_required_unless_declared_absent():
    df = three_systems().drop(columns="system")
    with pytest.raises(StatsError, match="system"):
        gate(df, minimum=0.5)
    one = three_systems().query("system == 'steady'").drop(columns="system")
    assert len(gate(one, minimum=0.5, system=None)) == 1
    # naming the system in by= as well changes nothing
    assert len(gate(three_systems(), minimum=0.5, by="system")) == 3


def test_the_gate_command_prints_one_decision_per_system(openai_server, tmp_path):
    path = tmp_path / "r.jsonl"
    for label, temperature in (("cold", 0.0), ("warm", 1.0)):
        run(
            "schema-ten-records",
            "m",
            base_url=openai_server.base_url,
            repeats=6,
            temperature=temperature,
            seed=0,
            label=label,
            out=path,
            progress=False,
        )
    out = subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", "gate", str(path), "--min", "0.5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = out.stdout.splitlines()
    assert len(lines) == 2, out.stdout
    assert lines[0].startswith("PASS") and "system=cold" in lines[0]
    assert lines[1].startswith("REFUSED") and "system=warm" in lines[1]
    assert out.returncode == 2
