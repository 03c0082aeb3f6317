"""CLI mends of issue 24 (items 13, 16, 18, 20): each a user mistake or a hostile value that
used to be a traceback, a silent acceptance or a misleading message."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_import_never_writes_rows_jevalkit_then_refuses(tmp_path, capsys):
    import pandas as pd
    import pytest

    from jevalkit import io
    from jevalkit.errors import ImportFormatError
    from jevalkit.results import read_results

    fixture = Path(__file__).parents[1] / "io" / "fixtures" / "promptfoo-0.121.20-echo-repeat3.json"
    doc = json.loads(fixture.read_text())
    doc.setdefault("metadata", {})["evaluationCreatedAt"] = {"seconds": 1}
    log = tmp_path / "pf.json"
    log.write_text(json.dumps(doc))
    out = tmp_path / "o.jsonl"
    assert main(["import", str(log), "--out", str(out)]) == 0
    assert read_results(out)["started_at"].isna().all()  # was written as an object, then refused
    frame = io.from_table(
        pd.DataFrame({"q": [1], "m": ["a"], "s": [0.5]}), case="q", system="m", score="s"
    ).assign(label=[["not", "text"]])
    with pytest.raises(ImportFormatError, match=r"imported row 1: label: .* not written"):
        io.write_results(frame, tmp_path / "bad.jsonl")
    assert not (tmp_path / "bad.jsonl").exists()


def test_escape_sequences_from_an_endpoint_or_results_never_reach_the_terminal(
    openai_server, tmp_path, capsys
):
    evil = "m-\x1b]0;pwned\x07\x1b[2J\x9b31m"
    out = tmp_path / "r.jsonl"
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    argv += ["--out", str(out), "--no-cache"]
    assert main(argv) == 0
    openai_server.identity["m"] = (evil, "fp")  # the endpoint now names another model
    assert main([*argv, "--repeats", "2"]) == 0
    first = capsys.readouterr()
    assert "pwned" in first.err  # the drift warning names it ...
    grades = tmp_path / "g.jsonl"
    grades.write_text(
        "".join(json.dumps({"question_id": q, "model": evil, "score": 5}) + "\n" for q in range(3))
    )
    assert main(["metrics", str(grades), "--from", "grades", "--by", "system"]) == 0
    assert main(
        ["gate", str(grades), "--from", "grades", "--metric", "mean_score", "--min", "0.1"]
    ) in (0, 1)
    second = capsys.readouterr()
    for text in (first.out, first.err, second.out, second.err):
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text  # ... harmlessly
    assert "pwned" in second.out


def test_the_dry_run_refuses_what_the_real_run_refuses(tmp_path, capsys):
    base = ["run", "schema-ten-records", "--model", "m", "--dry-run", "--max-tokens", "50"]
    here = ["--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "r.jsonl")]
    cases = [
        (["--concurrency", "-1", *here], "concurrency must be a whole number of at least 1"),
        (["--timeout", "nan", *here], "timeout must be a positive number of seconds"),
        (["--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path)], "not a regular file"),
        (["--base-url", "file:///etc/passwd", "--out", str(tmp_path / "r.jsonl")], "not an http"),
        (["--budget-usd", "1", *here], "--budget-usd needs a price for 'm'"),
    ]
    for extra, needle in cases:
        assert main([*base, *extra]) == 2, extra  # each was "dry run: nothing was sent", exit 0
        assert needle in one_error_line(capsys)
    assert main([*base, *here]) == 0 and "dry run: nothing was sent" in capsys.readouterr().out


def test_adaptive_repeats_on_an_endpoint_that_only_errors_stop_and_say_so(
    openai_server, capsys, tmp_path
):
    openai_server.faults["m"] = ["500"] * 1000
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    argv += ["--out", str(tmp_path / "r.jsonl"), "--repeats", "auto", "--max-repeats", "200"]
    argv += ["--max-retries", "0", "--no-cache", "--max-tokens", "50"]
    assert main(argv) == 1  # was exit 0 after 200 requests, "pass_rate 0.500 [0, 1]"
    out = capsys.readouterr().out
    assert "stopped: nothing scored" in out and "pass_rate nan [nan, nan]" in out
    assert "not estimable: no request was scored" in out
    assert len(openai_server.requests) < 40
