"""Every command reads another tool's file as ``import`` does (issue 26.9), and the command
knows its version (issue 26.13)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from jevalkit import __version__
from jevalkit.cli import main

PROMPTFOO = Path(__file__).resolve().parents[1] / "io" / "fixtures"
PROMPTFOO = PROMPTFOO / "promptfoo-0.121.20-echo-repeat3.json"


def jevalkit(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_from_the_command_and_python_m():
    out = subprocess.run(
        [sys.executable, "-m", "jevalkit", "--version"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == f"jevalkit {__version__}"


def test_metrics_and_gate_detect_a_promptfoo_file_without_from(capsys):
    code, out, err = jevalkit(capsys, "metrics", str(PROMPTFOO), "--json")
    assert code == 0, err
    records = json.loads(out)
    assert {r["metric"] for r in records} >= {"pass_rate"}
    # 2 prompts x 2 test cases x 3 repeats = 12 rows: the mean score is over the 2 cases
    assert {r["n"] for r in records if r["metric"] == "mean_score"} == {2}
    code, out, err = jevalkit(capsys, "gate", str(PROMPTFOO), "--min", "0.9")
    # 2 cases: the effective n is at most 2 cases, so 0.5 cannot be told from 0.9 (issue 36)
    assert code in (1, 2) and out.startswith(("FAIL", "REFUSED", "UNDECIDED")), (out, err)


def test_a_broken_archive_is_named_as_such_not_as_bad_utf8(capsys, tmp_path):
    path = tmp_path / "x.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("junk.txt", "not an inspect log")
    code, _, err = jevalkit(capsys, "metrics", str(path))
    assert code == 2 and "UTF-8" not in err and "x.eval" in err
    assert len(err.strip().splitlines()) == 1


def test_report_reads_another_tools_log_without_from(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "jevalkit",
            "report",
            "imported_log",
            "--results",
            str(PROMPTFOO),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    numbers = json.loads((tmp_path / "imported_log.headline.json").read_text())
    assert numbers["format"] == "promptfoo" and numbers["cases"] == 2


def test_two_logs_of_one_task_and_model_import_together_under_labels(capsys, tmp_path):
    """Issue 26.8: without a label they share every key and were refused."""
    from jevalkit import io
    from jevalkit.results import read_results

    copy = tmp_path / "again.json"
    copy.write_bytes(PROMPTFOO.read_bytes())
    out = tmp_path / "both.jsonl"
    code, _, err = jevalkit(capsys, "import", str(PROMPTFOO), str(copy), "--out", str(out))
    assert code == 2 and "share a key" in err
    code, _, err = jevalkit(
        capsys,
        "import",
        str(PROMPTFOO),
        str(copy),
        "--label",
        "v1",
        "--label",
        "v2",
        "--out",
        str(out),
    )
    assert code == 0, err
    rows = read_results(out)
    assert len(rows) == 24 and rows["system"].nunique() == 4  # two prompts in each log
    assert {s.split(" · ")[0] for s in rows["system"]} == {"v1", "v2"}
    assert {s.split(" · ")[0] for s in io.read(PROMPTFOO, label="v3")["system"]} == {"v3"}
    code, _, err = jevalkit(
        capsys, "import", str(PROMPTFOO), str(copy), "--label", "v1", "--out", str(out)
    )
    assert code == 2 and "one --label per file" in err
