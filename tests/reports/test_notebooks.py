"""Every notebook runs under papermill on the bundled data, and its saved headline numbers are right."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest
from sendable import defects

from jevalkit import metrics
from jevalkit._paths import data_dir
from jevalkit.reports import (
    ReportError,
    failed_checks,
    first_failing_items,
    report_title,
    run_report,
)
from jevalkit.results import read_results

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"
JUDGE = data_dir() / "runs" / "judge__faithfulness__local.jsonl"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    return {
        name: run_report(name, results=results, out=out)
        for name, results in [
            ("probe_report", DEMO),
            ("consistency", None),  # the defaults: data that can answer each (issue 38.2)
            ("compare_models", None),
            ("mean_score", JUDGE),
            ("ordinal_spacing", JUDGE),
            ("judge_quality", JUDGE),
            ("imported_log", None),
            ("pairwise_ranking", None),
            ("judge_correction", None),
        ]
    }


def test_every_report_has_notebook_html_and_headline(reports):
    for report in reports.values():
        assert report.notebook.exists() and report.html.exists()
        assert "<html" in report.html.read_text()[:2000].lower()
        json.loads(report.headline.read_text())  # strict JSON (no NaN)


def test_probe_report_numbers(reports):
    numbers = reports["probe_report"].numbers()
    rates = {r["system"]: r for r in numbers["pass_rate"]}
    assert rates["constrained, T=1"]["value"] == 1.0 and rates["constrained, T=1"]["n"] == 5
    assert rates["free, T=0"]["value"] == 0.0
    assert rates["free, T=0"]["ci_high"] == pytest.approx(0.4345, abs=1e-4)  # Wilson, 0 of 5
    failed = {(r["system"], r["text"]): r["failed"] for r in numbers["failed_checks"]}
    assert failed[("free, T=1", "Parses as JSON with no prose or code fence")] == 5
    # the notebook shows the library's tables (the probe summary's), it does not restate them
    demo = read_results(DEMO)
    assert numbers["failed_checks"] == failed_checks(demo).to_dict("records")
    items = first_failing_items(demo).groupby("item")["runs"].sum()
    assert numbers["first_failing_item"] == {str(k): int(v) for k, v in items.items()}


def test_consistency_and_compare_default_to_data_that_can_answer(reports):
    # consistency: the simulated case probe with 3 variants x 4 repeats, each wording apart
    consistency = reports["consistency"].numbers()
    rows = consistency["consistency"]
    assert {r["variant"] for r in rows} == {"base", "terse", "checklist"}
    assert all(r["n_cases"] == 40 and r["k"] == 4 for r in rows)
    curve = consistency["repeats_needed"]["sim-model"]
    assert curve["se"][0] > curve["se"][-1] > 0  # an SE that falls with repeats, not a flat 0
    # compare_models: the real run of two configurations on the same 25 cases
    compare = reports["compare_models"].numbers()
    run = read_results(data_dir() / "runs" / "contact-extraction__v2__local.jsonl")
    library = metrics.compare(run, "T=0", by=None, metrics=["pass_rate", "mean_score"])
    got = {(r["system"], r["metric"]): r for r in compare["comparisons"]}
    for row in library.itertuples():
        assert got[(row.system, row.metric)]["n_paired"] == row.n_paired == 25
        assert got[(row.system, row.metric)]["delta"] == pytest.approx(row.delta)
    assert compare["changed_cases"]["T=1"]  # some cases changed between the two


def test_no_page_has_a_defect_a_reader_would_send_back(reports):
    for name, report in reports.items():
        title = report_title(nbformat.read(report.notebook, as_version=4))
        assert defects(report.html.read_text(), title=title) == [], name


def test_imported_log_notebook_on_the_example_grades(reports):
    from jevalkit import io
    from jevalkit.metrics import mean_score

    numbers = reports["imported_log"].numbers()
    assert numbers["format"] == "grades" and numbers["systems"] == 8
    expected = mean_score(
        io.read(data_dir() / "examples" / "grades.jsonl"), by="system", bimodality=False
    )
    got = {r["system"]: r["value"] for r in numbers["mean_score"]}
    assert got == pytest.approx(dict(zip(expected["system"], expected["value"], strict=True)))
    assert (
        numbers["bimodality"]["method"].startswith("discrete")
        and not numbers["bimodality"]["bimodal"]
    )


def test_judge_notebook_numbers_match_the_library(reports):
    from jevalkit.metrics import quality

    expected = quality(read_results(JUDGE)).iloc[0]
    got = reports["judge_quality"].numbers()["quality"][0]
    assert got["mae"] == pytest.approx(expected["mae"]) and got["n"] == 12
    mean = reports["mean_score"].numbers()["mean_score"][0]
    assert mean["n"] == 6  # six cases, repeats averaged within each
    # the gold MAE table has its own heading (it followed the histogram unnamed)
    assert reports["mean_score"].numbers()["mae"]
    page = reports["mean_score"].html.read_text()
    assert "Mean absolute error of the judge" in page
    assert reports["ordinal_spacing"].numbers()["n"] == 12


def test_a_probe_without_runs_gets_a_not_yet_run_page(tmp_path):
    report = run_report(
        "probe_report", results=DEMO, parameters={"probe": "schema-ten-records@1"}, out=tmp_path
    )
    numbers = report.numbers()
    assert numbers["status"] == "not yet run" and "pass_rate" not in numbers
    assert "Not yet run" in report.html.read_text()


def test_a_failing_cell_names_the_cell_and_keeps_the_partial_notebook(tmp_path):
    earlier = {tmp_path / "probe_report.ipynb": "{}", tmp_path / "probe_report.html": "<html>"}
    for path, text in earlier.items():  # an earlier run's pair
        path.write_text(text)
    # a missing file is refused before a kernel starts (issue 53); one that is there but holds
    # no rows fails in the notebook's cell that reads it
    with pytest.raises(ReportError, match=r"missing\.jsonl: no such results file"):
        run_report("probe_report", results=tmp_path / "missing.jsonl", out=tmp_path)
    assert not (tmp_path / "probe_report.partial.ipynb").exists()
    (tmp_path / "damaged.jsonl").write_text("not a row\n")
    with pytest.raises(
        ReportError, match=r"probe_report.ipynb: cell \d+ raised ResultsError"
    ) as info:
        run_report("probe_report", results=tmp_path / "damaged.jsonl", out=tmp_path)
    assert "\n" not in str(info.value)
    # kept under its own name: a partial .ipynb beside an earlier run's .html was a mismatched pair
    assert (tmp_path / "probe_report.partial.ipynb").exists()
    assert all(path.read_text() == text for path, text in earlier.items())  # left as they were
    assert "probe_report.ipynb and probe_report.html are not replaced" in str(info.value)
    # the error carries the failing cell's index in the kept notebook: the setup cell, which
    # reads the results (after papermill's injected-parameters cell)
    executed = json.loads(info.value.notebook.read_text())
    assert info.value.notebook == tmp_path / "probe_report.partial.ipynb"
    assert "open_results(" in "".join(executed["cells"][info.value.cell]["source"])


def test_report_cli(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "jevalkit.cli",
            "report",
            "probe_report",
            "--results",
            str(DEMO),
            "-p",
            "probe",
            "schema-ten-records@2",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "probe_report.html").exists() and (
        tmp_path / "probe_report.headline.json"
    ).exists()


def test_pairwise_ranking_notebook_matches_the_library(reports):
    from scipy import stats

    from jevalkit import io, metrics

    numbers = reports["pairwise_ranking"].numbers()
    games = io.read(data_dir() / "examples" / "pairwise.jsonl")
    expected = metrics.rank(games).table()
    got = {r["system"]: r["rating"] for r in numbers["ranking"]}
    assert got == pytest.approx(dict(zip(expected["system"], expected["rating"], strict=True)))
    # resampling cases keeps a case's games together: wider intervals than resampling game rows
    assert numbers["width_cases"] > numbers["width_games"]
    bias = numbers["position_bias"]
    p = stats.binomtest(int(bias["first_wins"]), int(bias["n_decisive"]), 0.5).pvalue
    assert bias["p_value"] == pytest.approx(p)


def test_judge_correction_notebook_matches_the_library(reports):
    from jevalkit import io
    from jevalkit.labels import corrected_mean, read_labels

    numbers = reports["judge_correction"].numbers()
    df = io.read(data_dir() / "examples" / "judged.jsonl")
    expected = corrected_mean(df, read_labels(data_dir() / "examples" / "labels.jsonl"))
    got = {(r["system"], r["estimator"]): r["value"] for r in numbers["estimates"]}
    want = dict(
        zip(
            zip(expected["system"], expected["estimator"], strict=True),
            expected["value"],
            strict=True,
        )
    )
    assert got == pytest.approx(want)
    assert numbers["labels_used"] == 120 and numbers["judged_items"] == 1200
    assert numbers["difference"][0]["system"] == "assistant-b - assistant-a"


def test_probe_report_on_a_probe_with_cases_and_variants(tmp_path, openai_server):
    from probe_folders import write_probe

    import jevalkit

    root = tmp_path / "probes"
    variants = [{"id": "terse", "messages": [{"role": "user", "content": "2*{{x}}="}]}]
    write_probe(root, variants=variants)
    probe = jevalkit.load_probe("double", root=root)

    def reply(body):  # base wording: right on even numbers; terse wording: always right
        text = body["messages"][-1]["content"]
        terse = text.startswith("2*")
        n = int(text[2:-1] if terse else text.removeprefix("What is twice ").removesuffix("?"))
        return str(2 * n) if terse or n % 2 == 0 else "0"

    openai_server.reply = reply
    out = tmp_path / "r.jsonl"
    jevalkit.run(
        probe,
        "test/m",
        base_url=openai_server.base_url,
        repeats=2,
        variants="all",
        cases="1-10",
        out=out,
        progress=False,
    )
    report = run_report("probe_report", results=out, parameters={"probe": "double@1"}, out=tmp_path)
    numbers = report.numbers()
    assert numbers["n_cases"] == 10 and numbers["n"] == 40
    by_variant = {r["variant"]: r["value"] for r in numbers["pass_rate_by_variant"]}
    assert by_variant == {"base": 0.5, "terse": 1.0}
    assert [r["pass_rate"] for r in numbers["worst_cases"]] == [0.5] * 5  # odd cases, worst first
    assert {r["case_id"] for r in numbers["worst_cases"]} == {"c01", "c03", "c05", "c07", "c09"}


def test_probe_report_labels_a_subset_run_in_its_numbers(tmp_path):
    # the committed contact-extraction run covers cases 1-12 of 25: the headline said nothing
    report = run_report(
        "probe_report",
        results=data_dir() / "runs" / "contact-extraction__local.jsonl",
        parameters={"probe": "contact-extraction@1"},
        out=tmp_path,
    )
    assert report.numbers()["subset"] == ["cases 1-12 of 25"]
    assert "A subset of the cases" in report.html.read_text()
