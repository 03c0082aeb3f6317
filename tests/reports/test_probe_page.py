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
    rows = [row for row in rows if row["label"] == rows[0]["label"]]  # one system, 5 repeats
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


def test_a_probe_with_cases_shows_its_cases_and_per_case_results_worst_first(
    tmp_path, openai_server
):
    from probe_folders import case_rows, write_probe

    from jevalkit.reports import probe_page

    rows = case_rows(12)
    rows[0]["x"] = "<script>alert(1)</script>"
    root = tmp_path / "probes"
    write_probe(root, rows=rows)
    probe = jevalkit.load_probe("double", root=root)
    # case c05 fails every repeat, c06 one of two, the rest pass
    answers = {"5": "0", "<script>alert(1)</script>": "0"}
    counter = {"6": 0}

    def reply(body):
        text = body["messages"][-1]["content"].removeprefix("What is twice ").removesuffix("?")
        if text == "6":
            counter["6"] += 1
            return "12" if counter["6"] == 1 else "13"
        return answers.get(text, str(2 * int(text)) if text.isdigit() else "0")

    openai_server.reply = reply
    out = tmp_path / "r.jsonl"
    jevalkit.run(
        probe,
        "test/m",
        base_url=openai_server.base_url,
        repeats=2,
        out=out,
        progress=False,
        concurrency=1,
    )
    page = probe_page(probe, [out])
    assert "12 cases, from <code>cases.jsonl</code>" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    assert "Per case, worst first" in page
    order = [page.index(f"<td>{c}</td>") for c in ("c01", "c05", "c06", "c02")]
    assert order[0] < order[2] < order[3] and order[1] < order[2]  # 0/2, 0/2, then 1/2, then 2/2
    assert "application/ld+json" in page and "exact_match scorer" in page


def test_a_subset_run_is_labelled_as_a_subset_on_the_probe_page(tmp_path, openai_server):
    # the page showed a --cases / --sample run's pass rate as the probe's, with no word of it
    from probe_folders import write_probe

    root = tmp_path / "probes"
    write_probe(root)
    probe = jevalkit.load_probe("double", root=root)
    openai_server.reply = lambda body: "<b>0</b>"
    out = tmp_path / "r.jsonl"
    run = dict(base_url=openai_server.base_url, out=out, progress=False)
    jevalkit.run(probe, "test/m", cases="1-4", **run)
    jevalkit.run(probe, "test/full", **run)
    page = probe_page(probe, [out])
    assert "A subset of the cases." in page
    assert "<li>test/m: cases 1-4 of 30</li>" in page and "test/full:" not in page
    everything = tmp_path / "all.jsonl"
    jevalkit.run(probe, "test/full", **{**run, "out": everything})
    assert "A subset of the cases" not in probe_page(probe, [everything])
