"""No script from results runs in a generated report (issue 19.1): every bundled notebook is run
on hostile results and its HTML opened in headless Chromium; no dialog may fire."""

from __future__ import annotations

import json

import pytest
from browser_lab import needs_chromium

from jevalkit._paths import data_dir, runs_dir
from jevalkit.reports import bundled_notebooks, run_report

EVIL = '<img src=x onerror="alert(document.domain)">'
EVIL_TOO = "<script>alert(2)</script>"


def hostile_copy(name: str, path) -> None:
    rows = [json.loads(line) for line in (runs_dir() / name).read_text().splitlines()]
    for i, row in enumerate(rows):
        row["model"] = EVIL
        row["label"] = f"{EVIL_TOO} {row.get('label') or ''} {i % 2}"
        row["output"] = f"{EVIL} {row.get('output') or ''}"
        row["score_errors"] = [f"$[0]: {EVIL}"] if row.get("score_errors") else []
        if row.get("case_id") is not None:
            row["case_id"] = f"{EVIL_TOO}{row['case_id']}"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    probe_rows, judge_rows = root / "probe.jsonl", root / "judge.jsonl"
    hostile_copy("schema-ten-records__local-demo.jsonl", probe_rows)
    hostile_copy("judge__faithfulness__local.jsonl", judge_rows)
    games = root / "games.jsonl"
    rows = [
        json.loads(line)
        for line in (data_dir() / "examples" / "pairwise.jsonl").read_text().splitlines()
    ]
    for row in rows:
        row["model_1"], row["model_2"] = EVIL + row["model_1"], EVIL_TOO + row["model_2"]
    games.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    judged, labels = root / "judged.jsonl", root / "labels.jsonl"
    for name, path, system in (
        ("judged.jsonl", judged, "label"),
        ("labels.jsonl", labels, "system"),
    ):
        rows = [
            json.loads(line) for line in (data_dir() / "examples" / name).read_text().splitlines()
        ]
        for row in rows:
            row[system] = EVIL_TOO + row[system]
            row["case_id"] = EVIL + row["case_id"]
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    bench = root / "benchmark.jsonl"  # many systems: the item and leaderboard notebooks need them
    rows = [
        json.loads(line)
        for line in (data_dir() / "examples" / "benchmark.jsonl").read_text().splitlines()
    ]
    for row in rows:
        row["model"] = EVIL + row["model"]
        row["case_id"] = EVIL_TOO + row["case_id"]
    bench.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cascade, cascade_labels = root / "cascade.jsonl", root / "cascade_labels.jsonl"
    for name, path in (
        ("cascade_judged.jsonl", cascade),
        ("cascade_labels.jsonl", cascade_labels),
    ):
        rows = [
            json.loads(line) for line in (data_dir() / "examples" / name).read_text().splitlines()
        ]
        for row in rows:
            row["case_id"] = EVIL + row["case_id"]
            if "model" in row:
                row["model"] = EVIL_TOO + row["model"]
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cascade_cases = root / "cascade_cases.jsonl"  # the answers people read in the queue
    ids = sorted({json.loads(line)["case_id"] for line in cascade.read_text().splitlines()})
    cascade_cases.write_text(
        "".join(
            json.dumps({"id": i, "input": f"{EVIL_TOO} q", "output": f"{EVIL} answer {i}"}) + "\n"
            for i in ids
        )
    )
    variants = root / "variants.jsonl"
    hostile_copy("schema-ten-records__variants__local.jsonl", variants)
    contacts = root / "contacts.jsonl"  # two configurations on the same cases, for the widgets
    hostile_copy("contact-extraction__v2__local.jsonl", contacts)
    inputs = {
        "benchmark_health": bench,
        "leaderboard": bench,
        "total_error": variants,
        "probe_report": probe_rows,
        "consistency": probe_rows,
        "compare_models": probe_rows,
        "pairwise_ranking": games,
        "imported_log": judge_rows,
        "judge_correction": judged,
        "explore_results": contacts,
        "judge_cascade": cascade,
    }
    extra = {
        "judge_correction": {"labels": str(labels)},
        "explore_results": {"judge_results": str(judge_rows)},
        "judge_cascade": {"labels": str(cascade_labels), "cases": str(cascade_cases)},
    }
    written = []
    for notebook in bundled_notebooks():
        results = inputs.get(notebook, judge_rows)
        parameters = extra.get(notebook, {})
        report = run_report(notebook, results=results, parameters=parameters, out=root / notebook)
        written.append(report.html)
    return written


def test_every_notebook_renders_hostile_results(reports):
    names = {p.parent.name for p in reports}
    assert names == set(bundled_notebooks())
    for html in reports:
        text = html.read_text()
        assert EVIL not in text and EVIL_TOO not in text, html


@needs_chromium
def test_no_dialog_fires_in_a_browser(reports):
    from browser_lab import headless_chromium

    fired = []
    with headless_chromium() as browser:
        page = browser.new_page()
        page.on("dialog", lambda dialog: (fired.append(dialog.message), dialog.dismiss()))
        for html in reports:
            page.goto(html.as_uri())
            page.wait_for_load_state("load")
            page.wait_for_timeout(200)
            assert "jp-Notebook" in page.content() or "jp-Cell" in page.content()
    assert fired == []


def test_the_cascade_queue_shows_the_hostile_answers_escaped(reports):
    """The Labeler's queue of judge_cascade carries the case file's answers (model output,
    untrusted): they are in the report, escaped, never as markup."""
    (html,) = [p for p in reports if p.parent.name == "judge_cascade"]
    text = html.read_text()
    assert "&lt;img src=x onerror=" in text and " answer " in text
    assert "<img src=x" not in text
