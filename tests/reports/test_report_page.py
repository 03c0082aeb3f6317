"""A report reads like a report (issue 26.1, 26.2, 26.7): it reports on the data it was given or
refuses, it shows every figure, hides the code, shows the parameters once and loads nothing from the
network."""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest
from browser_lab import needs_chromium

from jevalkit._paths import data_dir
from jevalkit.reports import (
    ReportError,
    bundled_notebooks,
    declared_parameters,
    find_notebook,
    run_report,
)

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"
GRADES = data_dir() / "examples" / "grades.jsonl"
IMAGE = re.compile(r"<img [^>]*src=\"data:image/png;base64,")

PLOTS = """
from jevalkit import plots
first = plots.histogram([0, 1, 1], bins=3, title="first", xlabel="x")
"""


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def probe_report(tmp_path_factory):
    return run_report("probe_report", results=DEMO, out=tmp_path_factory.mktemp("probe"))


def test_every_bundled_notebook_takes_results_and_results_format():
    for name in bundled_notebooks():
        declared = declared_parameters(find_notebook(name))
        assert {"results", "results_format"} <= set(declared), name


def test_an_unknown_parameter_is_one_line_naming_the_notebooks_parameters(tmp_path):
    out = cli("report", "imported_log", "-p", "path", str(GRADES), "--out", str(tmp_path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "jevalkit: error: imported_log.ipynb: no parameter 'path'; this notebook's parameters: "
        "headline_path, results, results_format"
    ]
    assert not (tmp_path / "imported_log.html").exists()


def test_results_given_to_the_imported_log_are_the_results_reported(tmp_path):
    one_system = tmp_path / "one.jsonl"
    alpha = [line for line in GRADES.read_text().splitlines() if '"model": "alpha"' in line][:3]
    one_system.write_text("".join(line + "\n" for line in alpha))
    out = cli(
        "report",
        "imported_log",
        "--results",
        str(one_system),
        "--from",
        "grades",
        "--out",
        str(tmp_path / "r"),
    )
    assert out.returncode == 0, out.stderr
    import json

    numbers = json.loads((tmp_path / "r" / "imported_log.headline.json").read_text())
    assert numbers["path"] == str(one_system) and numbers["n_rows"] < 10
    assert numbers["systems"] == 1
    page = (tmp_path / "r" / "imported_log.html").read_text()
    assert ": 1 system, " in page and "1 systems" not in page  # it said "1 systems"
    assert "Passed unknown parameter" not in out.stderr
    assert "without encryption" not in out.stderr


def test_every_figure_of_a_kernel_is_shown(tmp_path):
    """Before the fix only the first figure drawn through jevalkit.plots reached the page."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell(
            'results = None\nresults_format = None\nheadline_path = "h.json"',
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell(PLOTS),
        nbformat.v4.new_code_cell(
            'second = plots.line_plot([1, 2], [2, 1], title="second", xlabel="x", ylabel="y", n=2)'
        ),
        nbformat.v4.new_code_cell(
            'third = plots.histogram([1, 2], bins=2, title="third", xlabel="x")'
        ),
    ]
    path = tmp_path / "three.ipynb"
    nbformat.write(nb, path)
    report = run_report(path, out=tmp_path / "out")
    assert len(IMAGE.findall(report.html.read_text())) == 3


def test_the_imported_log_report_shows_both_of_its_figures(tmp_path):
    report = run_report("imported_log", out=tmp_path)
    assert len(IMAGE.findall(report.html.read_text())) == 2  # mean scores and the histogram


def test_a_report_hides_code_shows_parameters_once_and_fetches_nothing(probe_report):
    page = probe_report.html.read_text()
    assert "save_headline" not in page and "open_results" not in page
    assert page.count('class="jevalkit-parameters"') == 1
    assert "schema-ten-records@2" in page and str(DEMO) in page
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=[\"']?(https?:)?//", page)
    assert "mathjax" not in page.lower() and "require.min.js" not in page
    assert "&#x27;pass_rate&#x27;: [" not in page  # no headline dump at the end
    assert "<th></th>" not in page  # tables without the 0, 1, 2 index


def test_show_code_keeps_the_code(tmp_path):
    report = run_report("imported_log", out=tmp_path, show_code=True)
    page = report.html.read_text()
    assert "save_headline" in page and page.count('class="jevalkit-parameters"') == 1


def test_an_unknown_notebook_parameter_from_python_is_refused(tmp_path):
    with pytest.raises(ReportError, match=r"no parameter 'path'; this notebook's parameters"):
        run_report("imported_log", parameters={"path": str(GRADES)}, out=tmp_path)


@needs_chromium
def test_in_a_browser_no_code_every_figure_and_no_request_leaves_the_machine(probe_report):
    from browser_lab import headless_chromium

    requests = []
    with headless_chromium() as browser:
        page = browser.new_page()
        page.on("request", lambda request: requests.append(request.url))
        page.goto(probe_report.html.as_uri())
        page.wait_for_load_state("networkidle")
        assert page.locator(".jp-CodeCell .jp-InputArea:visible").count() == 0
        images = page.locator("img")
        executed = nbformat.read(probe_report.notebook, as_version=4)
        figures = [
            output
            for cell in executed.cells
            for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})
        ]
        assert images.count() == len(figures) >= 1
        for i in range(images.count()):
            assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 0")
        assert page.locator("table.jevalkit-parameters").count() == 1
    outside = [url for url in requests if not url.startswith(("file:", "data:"))]
    assert outside == []
