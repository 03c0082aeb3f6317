"""The documentation site builds (a smoke subset: `sphinx -t smoke`, the tour tutorial executed by
myst-nb and one package's reference), shows what the code printed, and loads nothing from the
network when opened (checked in the HTML and in Chromium)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser_lab import headless_chromium, needs_chromium

from jevalkit import metrics
from jevalkit.reports import open_results

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-t", "smoke", "-q", str(DOCS), str(out)],
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
    remote = re.compile(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=\"(https?:)?//", re.I)
    for html in site.rglob("*.html"):
        assert not remote.search(html.read_text()), html


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
