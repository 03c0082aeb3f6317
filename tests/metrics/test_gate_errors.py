"""The gate counts error rows (issue 24.6, 24.10, 24.20): a verdict resting on the rows that
happened to succeed is refused above a stated error share; pairwise games and bad limits are
refused in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from jevalkit.cli import main
from jevalkit.errors import StatsError
from jevalkit.metrics import gate, release_gate

TIMEOUT = {"type": "timeout", "message": "no answer", "status": None}


def results(n_ok: int, n_errors: int, system: str = "s") -> pd.DataFrame:
    ok = [{"case_id": f"c{i}", "passed": True, "error": None} for i in range(n_ok)]
    bad = [{"case_id": f"e{i}", "passed": None, "error": TIMEOUT} for i in range(n_errors)]
    return pd.DataFrame(ok + bad).assign(system=system)


def test_a_gate_resting_on_8_of_60_rows_is_refused_not_passed():
    row = gate(results(8, 52), minimum=0.6, case="case_id").iloc[0]
    assert row["decision"] == "refused" and row["n_errors"] == 52  # was PASS, n = 8
    assert "52 of 60 rows are errors (87%, limit 5%)" in row["reason"]
    allowed = gate(results(8, 52), minimum=0.6, case="case_id", max_error_rate=0.9).iloc[0]
    assert allowed["decision"] == "pass" and "(52 error rows left out)" in allowed["reason"]


def test_the_error_share_is_judged_per_group():
    df = pd.concat([results(40, 0, "a"), results(40, 10, "b")], ignore_index=True)
    table = gate(df, minimum=0.5, case="case_id", by="system").set_index("system")
    assert table.loc["a", "decision"] == "pass" and table.loc["b", "decision"] == "refused"
    assert table.loc["a", "n_errors"] == 0 and table.loc["b", "n_errors"] == 10


def test_the_cli_gate_exits_2_naming_the_errors(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    rows = results(8, 52).assign(
        kind="probe", probe="p", version=1, model="m", repeat=0, score=None
    )
    path.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows.to_dict("records")))
    assert main(["gate", str(path), "--min", "0.6"]) == 2
    assert "52 of 60 rows are errors" in capsys.readouterr().out
    assert main(["gate", str(path), "--min", "0.6", "--max-error-rate", "0.9"]) == 0


def test_a_release_gate_with_an_all_error_side_is_refused_not_a_traceback():
    base, head = results(50, 0), results(0, 50)
    row = release_gate(base, head, max_drop=0.05, case="case_id").iloc[0]  # was IndexError
    assert (
        row["decision"] == "refused" and "the candidate: 50 of 50 rows are errors" in row["reason"]
    )


@pytest.mark.parametrize("bad", [float("nan"), -0.1, 1.5])
def test_limits_outside_0_to_1_are_refused(bad):
    with pytest.raises(StatsError, match="min_consistency must be a number from 0 to 1"):
        release_gate(
            results(5, 0), results(5, 0), max_drop=0.1, case="case_id", min_consistency=bad
        )
    with pytest.raises(StatsError, match="max_error_rate must be a number from 0 to 1"):
        gate(results(5, 0), minimum=0.5, case="case_id", max_error_rate=bad)


def test_pairwise_games_are_refused_by_the_gate():
    games = pd.DataFrame(
        {"case_id": ["a", "b"], "score": [1.0, 0.0], "system_a": ["x", "x"], "system_b": ["y", "y"]}
    )
    with pytest.raises(StatsError, match="pairwise games"):
        gate(games, minimum=0.5, metric="mean_score", case="case_id")
