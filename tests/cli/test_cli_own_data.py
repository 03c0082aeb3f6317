"""A first hour on one's own data (issue 54.2): several results files to `metrics` and `report`,
a report's probe from the file, runs of other labels kept apart, and the messages a newcomer
met ("'int' object has no attribute 'partition'", "edited or damaged", a person queue refused
as not results) naming the value and the fix."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from jevalkit import io
from jevalkit._paths import data_dir
from jevalkit.cli import main
from jevalkit.errors import ImportFormatError, ReportError
from jevalkit.labels import label_sample
from jevalkit.reports import report_probe
from jevalkit.results import read_results
from jevalkit.runner import run

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"  # schema-ten-records@2
VARIANTS = data_dir() / "runs" / "schema-ten-records__variants__local.jsonl"  # @3


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def one_line(code: int, err: str) -> str:
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    return err


@pytest.fixture
def two_labels(openai_server, tmp_path):
    """One model at the same settings under two --label names, in two files."""
    paths = []
    for label in ("prompt-a", "prompt-b"):
        path = tmp_path / f"{label}.jsonl"
        run(
            "schema-ten-records",
            "m",
            base_url=openai_server.base_url,
            repeats=6,
            temperature=1.0,
            seed=0,
            label=label,
            out=path,
            progress=False,
        )
        paths.append(path)
    return paths


def test_metrics_reads_several_files_and_keeps_labels_apart(two_labels, capsys):
    a, b = two_labels
    frames = [read_results(a), read_results(b)]
    assert frames[0]["params_hash"].iloc[0] == frames[1]["params_hash"].iloc[0]  # one setting
    code, out, err = cli(capsys, "metrics", a, b, "--json")  # was "unrecognized arguments"
    assert code == 0, err
    rates = [r for r in json.loads(out) if r["metric"] == "pass_rate"]
    assert sorted(r["system"] for r in rates) == ["prompt-a", "prompt-b"]
    assert all(r["n"] == 6 for r in rates)
    code, out, _ = cli(capsys, "metrics", a, b)
    assert "kept apart: system differ within a group" in out and "pass --pool" in out
    pooled = json.loads(cli(capsys, "metrics", a, b, "--pool", "--json")[1])
    assert [r["n"] for r in pooled if r["metric"] == "pass_rate"] == [12]
    # the same file twice is one run given twice: refused in one line, not pooled
    err = one_line(*cli(capsys, "metrics", a, a)[::2])
    assert f"{a}: given twice; give each results file once" in err


def test_a_foreign_csv_and_a_person_queue_are_named_as_what_they_are(tmp_path, capsys):
    table = tmp_path / "scores.csv"
    table.write_text("question,model,score\nq1,a,1\n")
    err = one_line(*cli(capsys, "metrics", table)[::2])
    assert "edited or damaged" not in err
    assert "not a jevalkit results file (JSON lines" in err and "'question,model,score'" in err
    assert "jevalkit.io.from_table" in err
    # a file whose later line broke is still one an edit or a crash damaged
    broken = tmp_path / "r.jsonl"
    broken.write_text(DEMO.read_text().splitlines()[0] + "\nnot json\n")
    assert "edited or damaged" in one_line(*cli(capsys, "metrics", broken)[::2])
    # the cascade's queue for people (a label plan): said what it is and how to label it
    judged = read_results(data_dir() / "examples" / "judged.jsonl")
    plan = label_sample(judged, 5, seed=1).assign(strategy="cascade")  # 5 cases x 2 systems
    queue = tmp_path / "queue.jsonl"
    plan.to_json(queue, orient="records", lines=True)
    for read in (io.read, io.read_source):
        with pytest.raises(ImportFormatError, match=r"queue\.jsonl: a label plan .*Labeler"):
            read(queue)
    assert "a label plan" in one_line(*cli(capsys, "metrics", queue)[::2])
    # and what the message says to do works: the Labeler takes the queue as read
    from jevalkit.widgets import Labeler

    labeler = Labeler(
        pd.read_json(queue, lines=True), levels=["safe", "unsafe"], out=tmp_path / "l.jsonl"
    )
    assert len(labeler.items) == 10


def test_a_report_reports_the_probe_version_its_results_hold(tmp_path, capsys):
    """`report probe_report --results x@3.jsonl` said "Not yet run" for the default @2, exit 0."""
    code, _, err = cli(
        capsys, "report", "probe_report", "--results", VARIANTS, "--out", tmp_path / "r"
    )
    assert code == 0, err
    numbers = json.loads((tmp_path / "r" / "probe_report.headline.json").read_text())
    assert numbers["probe"] == "schema-ten-records@3" and numbers["status"] == "run"
    assert numbers["n"] == 15 and numbers["truncated"] == 13  # cut off at 240 tokens
    html = (tmp_path / "r" / "probe_report.html").read_text()
    assert "13 of 15 answers were cut off at max_tokens" in html
    assert "cut off at max_tokens after 240 tokens" in html  # the failing outputs say so


def test_report_refusals_name_the_value_and_the_fix(tmp_path, capsys):
    out = tmp_path / "r"
    # two files, two versions: which one is the report about? refused before a kernel starts
    err = one_line(
        *cli(capsys, "report", "probe_report", "--results", DEMO, VARIANTS, "--out", out)[::2]
    )
    assert "the results hold 2 probe versions (schema-ten-records@2: 15 row(s)" in err
    assert "choose one: -p probe schema-ten-records@2" in err
    err = one_line(
        *cli(
            capsys,
            "report",
            "probe_report",
            *("--results", DEMO, "--results", VARIANTS),
            *("-p", "probe", "schema-ten-records@4", "--out", out),
        )[::2]
    )
    assert "no rows of schema-ten-records@4; they hold schema-ten-records@2: 15 row(s)" in err
    # a number where a probe name belongs ("'int' object has no attribute 'partition'")
    err = one_line(*cli(capsys, "report", "probe_report", "-p", "probe", "3", "--out", out)[::2])
    assert "-p probe 3: name a probe as text, id or id@N" in err and "partition" not in err
    err = one_line(
        *cli(capsys, "report", "leaderboard", "-p", "n_resamples", "'many'", "--out", out)[::2]
    )
    assert "-p n_resamples 'many': expected a number, as its default 2000 is" in err
    assert not out.exists() or not any(out.iterdir())  # nothing ran


def test_report_probe_picks_refuses_and_reports_not_yet_run():
    both = pd.concat([read_results(DEMO), read_results(VARIANTS)], ignore_index=True)
    name, rows = report_probe(both, "schema-ten-records@3")
    assert name == "schema-ten-records@3" and len(rows) == 15
    with pytest.raises(ReportError, match=r"holds? 2 versions of it .*-p probe"):
        report_probe(both, "schema-ten-records")
    name, rows = report_probe(both, "schema-ten-records@4")  # a page says "not yet run"
    assert name == "schema-ten-records@4" and rows.empty
    with pytest.raises(ReportError, match="no rows of schema-ten-records@4"):
        report_probe(both, "schema-ten-records@4", required=True)
    with pytest.raises(ReportError, match=re.escape("-p probe ['x']: name a probe as text")):
        report_probe(both, ["x"])
