"""CLI mends of issue 24 (items 13, 16, 18, 20): each a user mistake or a hostile value that
used to be a traceback, a silent acceptance or a misleading message."""

from __future__ import annotations

import json

from jevalkit._paths import data_dir
from jevalkit.cli import main

EXAMPLES = data_dir() / "examples"


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("jevalkit: error: "), err
    return lines[0]


def test_metrics_by_a_column_named_twice_is_refused(capsys):
    argv = ["metrics", str(EXAMPLES / "grades.jsonl"), "--from", "grades", "--by", "system,system"]
    assert main(argv) == 2  # was a traceback
    assert "columns named more than once: system" in one_error_line(capsys)


def test_duplicates_inside_one_imported_file_are_named_as_such(tmp_path, capsys):
    sample = {"doc_id": 0, "target": "2", "filter": "none", "metrics": ["acc"], "acc": 1.0}
    path = tmp_path / "samples_t_2026-11-30T10-00-00.123456.jsonl"
    path.write_text(json.dumps(sample) + "\n" + json.dumps(sample) + "\n")
    argv = ["import", str(path), "--model", "m", "--out", str(tmp_path / "o.jsonl")]
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert f"2 rows in {path} share a key" in line and "different files" not in line
