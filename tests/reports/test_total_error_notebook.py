"""The total_error notebook runs under papermill and its headline numbers are the library's."""

from __future__ import annotations

import math
import re

import pytest
from sendable import defects

from jevalkit import metrics, stats
from jevalkit._paths import data_dir
from jevalkit.reports import ReportError, run_report
from jevalkit.results import read_results

DEMO = data_dir() / "runs" / "schema-ten-records__local-demo.jsonl"


def test_total_error_report_on_the_demo_run(tmp_path):
    report = run_report(
        "total_error", results=DEMO, parameters={"facets": ["case", "label"]}, out=tmp_path
    )
    numbers = report.numbers()
    assert numbers["facets"] == ["label"] and numbers["left_out"] == ["case"]
    expected = stats.variance_components(read_results(DEMO), facets=["label"]).table()
    got = {c["component"]: c["variance"] for c in numbers["components"]}
    assert got == pytest.approx(dict(zip(expected["component"], expected["variance"], strict=True)))
    assert numbers["reliability"] == "not estimable: one case"
    assert math.isnan(numbers["noise_floor"]["noise_floor"] or math.nan)  # repeats never differed
    html = report.html.read_text()  # code cells hidden: the heading and the breakdown figure show
    assert "Variance components" in html and "data:image/png;base64" in html


def test_total_error_report_refuses_when_nothing_varies(tmp_path):
    with pytest.raises(ReportError, match="nothing to decompose"):
        run_report("total_error", results=DEMO, parameters={"facets": ["variant"]}, out=tmp_path)


def test_total_error_report_on_its_default_case_probe_with_variants(tmp_path):
    """The default: the simulated case probe, 40 cases x 3 wordings x 4 repeats (issue 38.2)."""
    report = run_report("total_error", out=tmp_path)
    numbers = report.numbers()
    example = data_dir() / "examples" / "variants.jsonl"
    df = read_results(example)
    assert numbers["results"] == str(example) and numbers["facets"] == ["case", "variant"]
    expected = stats.variance_components(df, facets=["case", "variant"]).table()
    got = {c["component"]: c["variance"] for c in numbers["components"]}
    assert got == pytest.approx(dict(zip(expected["component"], expected["variance"], strict=True)))
    assert set(got) == {"case", "variant", "case x variant", "residual"}
    assert numbers["reliability"][0]["g"] > 0.5  # 40 cases: G of cases is estimable
    row = numbers["mean_score"][0]
    library = metrics.mean_score(df, generalize=["case", "variant"], bimodality=False).iloc[0]
    assert row["value"] == pytest.approx(library["value"])
    assert row["method_facets"] == library["method_facets"]
    # the planner keeps the 3 variants the probe has, and says what 10 would buy; free rows
    assert "variant=3" in numbers["design"]["refused"]
    wider = numbers["design_with_more_levels"]["designs"]
    assert wider[0]["variant"] > 3 and wider[0]["cost_usd"] == 0
    html = report.html.read_text()
    assert defects(html, title="Total evaluation error") == []  # no dict dump, no index
    table = re.search(r"jevalkit-parameters\">(.*?)</table>", html, re.S).group(1)
    assert "'data/examples/variants.jsonl' (the default: bundled with jevalkit)" in table
    assert "results</td><td><code>None" not in table
