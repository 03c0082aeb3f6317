"""Probe pages: complete, and carrying Dataset JSON-LD only with real runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jevalkit
from jevalkit._paths import data_dir
from jevalkit.reports import probe_page

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"
PROBE = jevalkit.load_probe("schema-ten-records@2")


def test_page_without_runs_says_not_yet_run_and_has_no_jsonld():
    page = probe_page(PROBE)
    assert "Not yet run" in page and "application/ld+json" not in page
    for section in (
        "Prompt",
        "Parameters",
        "Rubric",
        "Scoring",
        "Worked examples",
        "Version history",
        "Run it yourself",
    ):
        assert f"<h2>{section}</h2>" in page
    assert "$OPENROUTER_API_KEY" in page and "scores 1)" in page


def test_page_with_runs_shows_rates_and_embeds_a_dataset():
    page = probe_page(PROBE, [DEMO])
    assert "Not yet run" not in page
    assert "<td>constrained, T=1</td><td>5</td><td>5</td><td>1.00</td>" in page
    ld = json.loads(
        re.search(r'<script type="application/ld\+json">(.*?)</script>', page, re.S).group(1)
    )
    assert (
        ld["@type"] == "Dataset"
        and ld["size"] == "15 runs"
        and ld["identifier"].endswith(PROBE.content_hash)
    )


def test_probes_page_cli(tmp_path):
    out = tmp_path / "page.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jevalkit.cli",
            "probes",
            "page",
            "schema-ten-records@2",
            "--results",
            str(DEMO),
            "--out",
            str(out),
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and "application/ld+json" in out.read_text()


def test_a_hostile_model_name_cannot_end_or_blank_the_structured_data(tmp_path):
    from html.parser import HTMLParser

    rows = [json.loads(line) for line in DEMO.read_text().splitlines()]
    for row in rows:
        row["model"], row["label"] = "<!--<script>alert(1)</script>", None
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    page = probe_page(PROBE, [hostile])

    class Collect(HTMLParser):
        def __init__(self):
            super().__init__()
            self.scripts, self.text, self.inside = [], [], None

        def handle_starttag(self, tag, attrs):
            self.inside = tag

        def handle_data(self, data):
            (self.scripts if self.inside == "script" else self.text).append(data)

    parsed = Collect()
    parsed.feed(page)
    assert len(parsed.scripts) == 1  # the JSON-LD only: nothing from the data became a script
    ld = json.loads(parsed.scripts[0])
    assert ld["about"] == ["<!--<script>alert(1)</script>"]  # round-trips as text
    assert "<!--" not in parsed.scripts[0] and "</script" not in parsed.scripts[0]
    body = "".join(parsed.text)
    assert "Worked examples" in body and "Version history" in body  # the page is not blanked
    assert "&lt;!--&lt;script&gt;" in page
