"""Reports you can send (issue 38, item 4): warnings as notes, no empty heading. The other
defects are checked on the pages the other report tests write (tests/sendable.py names them:
test_notebooks, test_total_error_notebook, test_item_notebooks)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sendable import defects

from jevalkit._paths import data_dir
from jevalkit.reports import run_report

VARIANT_RUN = data_dir() / "runs" / "schema-ten-records__variants__local.jsonl"
ONE_SYSTEM = data_dir() / "runs" / "judge__faithfulness__local.jsonl"


def graded(tmp_path) -> Path:
    """The embedded model's variant run with graded scores near 0 in place of its 0/1 verdicts:
    15 values near a bound, where mean_score's t interval warns (0/1 scores get pass_rate's
    Wilson interval and no warning)."""
    lines = VARIANT_RUN.read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    for i, row in enumerate(rows):
        row["score"] = round(0.02 * (i % 5) + (0.3 if row["score"] == 1.0 else 0.0), 2)
    path = tmp_path / VARIANT_RUN.name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = {}
    for key, name, results in (
        ("warns", "total_error", graded(tmp_path_factory.mktemp("graded"))),
        ("one_system", "imported_log", ONE_SYSTEM),
    ):
        report = run_report(name, results=results, out=tmp_path_factory.mktemp(key))
        out[key] = (report, report.html.read_text(), results)
    return out


def test_a_warning_is_a_short_note_without_a_path_or_code(pages):
    report, html, results = pages["warns"]
    notes = report.numbers()["notes"]
    assert len(notes) == 1 and notes[0].startswith("mean_score: 1 group(s) have fewer than 20")
    assert "<h2>Notes</h2>" in html and "have fewer than 20 units" in html
    assert "UserWarning" not in html and "table = metrics.mean_score" not in html
    assert defects(html, title="Total evaluation error") == []
    # a file given is shown as given
    table = re.search(r"jevalkit-parameters\">(.*?)</table>", html, re.S).group(1)
    assert repr(str(results)) in table


def test_one_system_gets_no_empty_comparison_heading(pages):
    report, html, _ = pages["one_system"]
    assert "The two best systems, case by case" not in html
    assert "Mean score and pass rate by system" in html
    assert defects(html, title="An imported evaluation log") == []
    assert "notes" not in report.numbers()  # nothing to note: no list


CLEAN = "<html><head><title>T</title></head><body><h1>T</h1>{}</body></html>"


@pytest.mark.parametrize(
    ("planted", "defect"),
    [
        ('<div class="jp-CodeMirrorEditor jp-Editor"><div class="highlight hl-ipython3">', "code"),
        ('<div data-mime-type="application/vnd.jupyter.stderr">', "stderr"),
        ("<pre>/tmp/ipykernel_1/x.py:2: UserWarning</pre>", "line number"),
        ("<table><tbody><tr><th>0</th><td>1</td></tr></tbody></table>", "row index"),
        ('<table><tbody><tr><th class="row_heading level0 row0" >0</th>', "row index"),
        ('<img src="data:image/png;base64,AAA"><img src="data:image/png;base64,AAA">', "twice"),
        (r"<p>leaderboard\.page.html</p>", "Markdown escape"),
        ("<pre>{'results': 'x.jsonl'}</pre>", "headline"),
        ("<table><tr><td>{&#x27;case&#x27;: 40}</td></tr></table>", "table cell"),
        ('<script src="https://cdn.example/require.js"></script>', "network"),
        ('<link rel="stylesheet" href="//cdn.example/x.css">', "network"),
        ('<img src="http://example.org/x.png">', "network"),
    ],
)
def test_the_checker_finds_each_defect_it_names(planted, defect):
    assert defects(CLEAN.format(""), title="T") == []
    found = defects(CLEAN.format(planted), title="T")
    assert len(found) == 1 and defect in found[0], found


def test_the_checker_leaves_links_and_css_comments_alone():
    page = CLEAN.format(
        '<style>/* https://github.com/x */</style><a href="https://example.org">docs</a>'
    )
    assert defects(page, title="T") == []
    assert defects(CLEAN.format(""), title="Notebook") == ["tab title 'T', not 'Notebook'"]


def test_the_checker_leaves_a_json_answer_in_a_table_cell_alone():
    # model output that is JSON (contact-extraction's records) is the answer, not a dict dump
    cell = (
        "<table><tr><td>{&quot;name&quot;: &quot;Ines&quot;, &quot;age&quot;: 22}</td></tr></table>"
    )
    assert defects(CLEAN.format(cell), title="T") == []
