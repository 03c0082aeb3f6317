"""Reports you can send (issue 38, item 4): each defect a reader met, checked on the pages the
bundled notebooks write (tests/sendable.py names them), and the notebooks' default data that
exercises each analysis (item 2)."""

from __future__ import annotations

import re

import pytest
from sendable import defects

from jevalkit import io, metrics, stats
from jevalkit._paths import data_dir
from jevalkit.reports import run_report

VARIANT_RUN = data_dir() / "runs" / "schema-ten-records__variants__local.jsonl"
ONE_SYSTEM = data_dir() / "runs" / "judge__faithfulness__local.jsonl"
EXAMPLE = data_dir() / "examples" / "variants.jsonl"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    runs = {
        "total_error": ("total_error", None, {}),
        # the embedded model's variant run: 15 rows near a bound, mean_score warns
        "total_error_warns": ("total_error", VARIANT_RUN, {}),
        "mean_score": ("mean_score", None, {}),
        "imported_log_one_system": ("imported_log", ONE_SYSTEM, {}),
        "leaderboard": ("leaderboard", None, {"n_resamples": 200}),
        "consistency": ("consistency", None, {}),
        "compare_models": ("compare_models", None, {}),
    }
    out = {}
    for key, (name, results, parameters) in runs.items():
        report = run_report(
            name, results=results, parameters=parameters, out=tmp_path_factory.mktemp(key)
        )
        out[key] = (report, report.html.read_text())
    return out


TITLES = {
    "total_error": "Total evaluation error",
    "total_error_warns": "Total evaluation error",
    "mean_score": "Mean score",
    "imported_log_one_system": "An imported evaluation log",
    "leaderboard": "Leaderboard",
    "consistency": "Consistency across repeats",
    "compare_models": "Compare systems",
}


def test_no_page_has_a_defect_a_reader_would_send_back(pages):
    found = {key: defects(html, title=TITLES[key]) for key, (_, html) in pages.items()}
    assert found == {key: [] for key in pages}


def test_a_warning_is_a_short_note_without_a_path_or_code(pages):
    report, html = pages["total_error_warns"]
    notes = report.numbers()["notes"]
    assert len(notes) == 1 and notes[0].startswith("mean_score: 1 group(s) have fewer than 20")
    assert "<h2>Notes</h2>" in html and "have fewer than 20 units" in html
    assert "UserWarning" not in html and "table = metrics.mean_score" not in html
    assert "notes" not in pages["total_error"][0].numbers()  # nothing to note: no list


def test_the_parameters_table_names_the_file_read(pages):
    html = pages["total_error"][1]
    table = re.search(r"jevalkit-parameters\">(.*?)</table>", html, re.S).group(1)
    assert "data/examples/variants.jsonl" in table and "results_format</td><td><code>None" in table
    assert "results</td><td><code>None" not in table
    given = pages["total_error_warns"][1]  # a file given is shown as given
    assert str(VARIANT_RUN) in re.search(r"jevalkit-parameters\">(.*?)</table>", given, re.S).group(
        1
    )


def test_methods_are_footnotes_not_a_column(pages):
    html = pages["leaderboard"][1]
    method = "simultaneous 95% rank intervals"
    assert method in html and not re.search(rf"<td>[^<]*{method}", html)
    assert re.search(rf'class="jevalkit-method"><small>method: [^<]*{method}', html)


def test_one_system_gets_no_empty_comparison_heading(pages):
    html = pages["imported_log_one_system"][1]
    assert "The two best systems, case by case" not in html
    assert "Mean score and pass rate by system" in html


def test_total_error_defaults_to_a_case_probe_with_variants_and_repeats(pages):
    numbers = pages["total_error"][0].numbers()
    assert numbers["results"] == str(EXAMPLE) and numbers["facets"] == ["case", "variant"]
    expected = stats.variance_components(io.read(EXAMPLE), facets=["case", "variant"]).table()
    got = {c["component"]: c["variance"] for c in numbers["components"]}
    assert got == pytest.approx(dict(zip(expected["component"], expected["variance"], strict=True)))
    assert set(got) == {"case", "variant", "case x variant", "residual"}
    assert numbers["reliability"][0]["g"] > 0.5  # 40 cases: G of cases is estimable
    # the planner keeps the 3 variants the probe has; what 10 would buy is said beside it
    assert "refused" in numbers["design"] and "variant=3" in numbers["design"]["refused"]
    wider = numbers["design_with_more_levels"]["designs"]
    assert wider[0]["variant"] > 3 and wider[0]["cost_usd"] == 0  # the rows are free


def test_consistency_and_compare_default_to_data_that_can_answer(pages):
    consistency = pages["consistency"][0].numbers()
    rows = consistency["consistency"]
    assert {r["variant"] for r in rows} == {"base", "terse", "checklist"}
    assert all(r["n_cases"] == 40 and r["k"] == 4 for r in rows)
    curve = consistency["repeats_needed"]["sim-model"]
    assert curve["se"][0] > curve["se"][-1] > 0  # an SE that falls with repeats, not a flat 0
    compare = pages["compare_models"][0].numbers()
    run = io.read(data_dir() / "runs" / "contact-extraction__v2__local.jsonl")
    library = metrics.compare(run, "T=0", by=None, metrics=["pass_rate", "mean_score"])
    got = {(r["system"], r["metric"]): r for r in compare["comparisons"]}
    for row in library.itertuples():
        assert got[(row.system, row.metric)]["n_paired"] == row.n_paired == 25
        assert got[(row.system, row.metric)]["delta"] == pytest.approx(row.delta)
