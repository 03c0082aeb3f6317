"""Results objects render in a notebook as the reports render their tables (issue 38, item 5):
one function, jevalkit.results.table_html, serves both."""

from __future__ import annotations

import re

import pandas as pd

from jevalkit import io, metrics, stats
from jevalkit._paths import data_dir
from jevalkit.reports import example_path
from jevalkit.results import table_html


def test_a_ranking_in_a_cell_is_the_report_table():
    ranking = metrics.rank(io.read(example_path("pairwise.jsonl")), n_resamples=100)
    shown = ranking._repr_html_()
    assert table_html(ranking.table()) in shown  # the very table a report shows
    assert not re.search(r"<tbody>\s*<tr>\s*<th>", shown)  # no 0, 1, 2 index
    assert not re.search(r"<td>[^<]*Bradley-Terry", shown)  # the method is not in the rows
    assert re.search(r'class="jevalkit-method"><small>\[\d\] method: Bradley-Terry', shown)
    rating = ranking.table()["rating"].iloc[1]
    assert f"<td>{rating:.4g}</td>" in shown  # 4 significant digits


def test_a_method_shared_by_every_row_is_one_footnote_and_text_is_escaped():
    df = io.read(data_dir() / "runs" / "contact-extraction__v2__local.jsonl")
    table = metrics.pass_rate(df, by="system").assign(system=["<b>x</b>", "y"])
    table["method"] = "Wilson"
    shown = table_html(table)
    assert shown.count("Wilson") == 1 and "<th>method</th>" not in shown
    assert "&lt;b&gt;x&lt;/b&gt;" in shown and "<b>x</b>" not in shown


def test_an_index_that_labels_rows_is_kept():
    crosstab = pd.crosstab(pd.Series(["a", "b"], name="label"), pd.Series(["x", "y"], name="judge"))
    assert "<th>label</th>" in table_html(crosstab)
    filtered = pd.DataFrame({"v": [1.0, 2.0, 3.0]}).iloc[[2, 0]]
    assert not re.search(r"<th>\d</th>", table_html(filtered))


def test_a_design_in_a_cell_reads_as_levels_not_a_dict_dump():
    # total_error's G and Phi table showed {'case': 40, 'variant': 3, 'repeats': 4}
    study = stats.variance_components(
        io.read(example_path("variants.jsonl")), facets=["case", "variant"]
    )
    shown = table_html(metrics.reliability(study, object="case"))
    assert "{" not in shown and "&#x27;" not in shown
    assert re.search(r"<td>case=40, variant=3, repeats=4</td>", shown)
    escaped = table_html(pd.DataFrame({"d": [{"<b>": 1.23456}, None]}))
    assert "<td>&lt;b&gt;=1.235</td>" in escaped
