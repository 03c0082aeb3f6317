"""The CLI as a user runs it: a real subprocess, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def jevalkit(*args: str, stdin: bytes | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.fixture
def data_copy(tmp_path: Path, probes_copy: Path) -> Path:
    return probes_copy.parent


def test_probes_list():
    out = jevalkit("probes", "list")
    assert out.returncode == 0 and b"schema-ten-records@2" in out.stdout


def test_probes_check_passes_and_prints_one_line_per_example():
    out = jevalkit("probes", "check")
    lines = out.stdout.decode().splitlines()
    assert out.returncode == 0
    assert sum(line.startswith("ok   schema-ten-records@2") for line in lines) == 5
    ok = sum(line.startswith("ok   ") for line in lines)
    assert ok > 5 and lines[-1] == f"{ok} ok, 0 failed"


def test_probes_check_fails_on_a_tampered_file(data_copy):
    path = data_copy / "probes/schema-ten-records/v2.yaml"
    path.write_text(path.read_text().replace("temperature: 0", "temperature: 0.5"))
    out = jevalkit("probes", "check", env={"JEVALKIT_DATA_DIR": str(data_copy)})
    assert out.returncode == 1 and b"content changed" in out.stdout


def test_malformed_probe_exits_2_with_one_line_and_no_traceback(data_copy):
    path = data_copy / "probes/schema-ten-records/v2.yaml"
    path.write_text(path.read_text().replace("role: user", "role: 12"))
    out = jevalkit(
        "probes", "show", "schema-ten-records@2", env={"JEVALKIT_DATA_DIR": str(data_copy)}
    )
    err = out.stderr.decode()
    assert out.returncode == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "messages[1].role: 12 is not one of" in err and "v2.yaml" in err


def test_score_from_stdin_prints_json():
    out = jevalkit("score", "schema-ten-records@2", stdin=b'[{"id": 1}]')
    result = json.loads(out.stdout)
    assert out.returncode == 0
    assert result["probe"] == "schema-ten-records@2" and result["value"] == 0.0
    assert result["first_failing_item"] == 0


def test_score_from_file(tmp_path):
    probe_text = subprocess.run(
        [
            sys.executable,
            "-c",
            "import jevalkit; print(jevalkit.load_probe('schema-ten-records').examples[0].output)",
        ],
        capture_output=True,
        check=True,
    ).stdout
    path = tmp_path / "out.json"
    path.write_bytes(probe_text)
    out = jevalkit("score", "schema-ten-records", "--file", str(path))
    assert out.returncode == 0 and json.loads(out.stdout)["passed"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "nope"], "unknown probe 'nope'"),
        (
            ["score", "schema-ten-records", "--file", "/no/such/file"],
            "/no/such/file: no such output file",
        ),
    ],
)
def test_score_errors_exit_2(args, message):
    out = jevalkit(*args)
    assert out.returncode == 2 and message in out.stderr.decode() and b"Traceback" not in out.stderr


def test_probes_show_prints_a_card():
    out = jevalkit("probes", "show", "schema-ten-records@2")
    assert out.returncode == 0 and out.stdout.startswith(b"# schema-ten-records@2")


def test_console_script_is_installed():
    exe = shutil.which("jevalkit", path=str(Path(sys.executable).parent))
    assert exe is not None
    assert subprocess.run([exe, "--help"], capture_output=True).returncode == 0


def test_score_a_case_of_a_probe_with_cases():
    out = jevalkit("score", "unit-conversion", "--case", "km-to-m-1", stdin=b"3000\n")
    assert out.returncode == 0 and json.loads(out.stdout)["passed"] is True
    assert json.loads(out.stdout)["case_id"] == "km-to-m-1"
    out = jevalkit("score", "unit-conversion", stdin=b"3000")
    assert (
        out.returncode == 2
        and b"the expected answer is per case: name the case (--case ID)" in out.stderr
    )
    out = jevalkit("score", "unit-conversion", "--case", "nope", stdin=b"3000")
    assert out.returncode == 2 and b"unit-conversion@2 has no case 'nope'" in out.stderr
