"""The documentation site builds (a smoke subset: `sphinx -t smoke`, the tour tutorial and a page
drawing every plot executed by myst-nb, and one package's reference) with warnings as errors,
shows what the code printed and the figures it drew, and loads nothing from the network when
opened (checked in the HTML and in Chromium). `docs/check_build.py` (run by `make docs` on the
whole site) passes on it and fails on a page whose figures went missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_lab import headless_chromium, needs_chromium

from jevalkit import metrics
from jevalkit.reports import open_results

DOCS = Path(__file__).resolve().parents[2] / "docs"
sys.path.insert(0, str(DOCS))

import check_build  # noqa: E402  (docs/check_build.py)

# as `make docs` runs it: warnings are errors, every one of them listed
SPHINX = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [*SPHINX, "-t", "smoke", str(DOCS), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_tour_is_executed_and_shows_the_librarys_numbers(site):
    page = (site / "tutorials" / "tour.html").read_text()
    df, _ = open_results(None, default="contact-extraction__v2__local.jsonl")
    rates = metrics.pass_rate(df, by="system")
    for low in rates["ci_low"]:  # as the report tables print them: 4 significant digits
        assert f"<td>{low:.4g}</td>" in page
    assert "<strong>Ranking</strong>" in page and 'class="jevalkit-method"' in page


def test_the_api_reference_comes_from_the_docstrings(site):
    page = (site / "api_smoke.html").read_text()
    assert "jevalkit.metrics.pass_rate" in page and "Wilson" in page


def test_no_page_loads_anything_from_the_network(site):
    for html in site.rglob("*.html"):
        assert not check_build.REMOTE.search(html.read_text()), html


def test_every_figure_a_page_draws_is_shown_and_the_check_passes(site):
    summary, problems = check_build.check_site(site)
    assert problems == []
    # the tour draws nothing; the figures page draws one figure per plot, each in its own cell
    assert summary == "docs check: 4 pages, 2 executed, 1 of them draw; 7 figures shown"
    page = (site / "smoke_figures.html").read_text()
    cells = page.split('<div class="cell docutils container">')[1:]
    assert len(cells) == len(check_build.PLOT_FUNCTIONS) == 7
    for cell in cells:  # the first figure switches the inline backend on; none switches it off
        assert cell.count("<img ") == 1 and 'src="_images/' in cell, cell[:300]
    for img in (site / "_images").glob("*.png"):
        assert img.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_check_fails_a_page_whose_figures_are_missing(site, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    page = broken / "smoke_figures.html"
    text = page.read_text()
    page.write_text(text.replace("<img ", "<span "))  # as a kernel on the Agg backend leaves it
    _, problems = check_build.check_site(broken)
    assert len(problems) == 7 and all(
        p.startswith("smoke_figures.html: code cell ") for p in problems
    )
    assert (
        "'fig = plots.histogram(" in problems[2] and "draws a figure and shows none" in problems[2]
    )
    # an image that points nowhere is named
    page.write_text(text.replace('src="_images/', 'src="_missing/', 1))
    _, problems = check_build.check_site(broken)
    assert len(problems) == 1 and "is not in the build" in problems[0], problems
    # a page marked orphan is refused (Sphinx's own toctree warning would be silenced by it)
    source = broken / "_sources" / "smoke_figures.md.txt"
    page.write_text(text)
    source.write_text(source.read_text().replace("---\n", "---\norphan: true\n", 1))
    _, problems = check_build.check_site(broken)
    assert problems == [
        "smoke_figures.html: its source is marked orphan (put it in a toctree instead)"
    ]


@needs_chromium
def test_in_a_browser_no_request_leaves_the_machine(site):
    with headless_chromium() as browser:
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((site / "tutorials" / "tour.html").as_uri())
        page.wait_for_load_state("networkidle")
        assert "Ranking" in page.inner_text("main")
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests
