"""The total_error notebook runs under papermill and its headline numbers are the library's."""

from __future__ import annotations

import math

import pytest

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


def test_total_error_report_on_the_bundled_variant_run(tmp_path):
    """The default: schema-ten-records@3, three wordings x 5 repeats on the embedded model."""
    report = run_report("total_error", out=tmp_path)
    numbers = report.numbers()
    df = read_results(data_dir() / "runs" / "schema-ten-records__variants__local.jsonl")
    assert numbers["facets"] == ["variant"] and "case" in numbers["left_out"]
    expected = stats.variance_components(df, facets=["variant"]).table()
    got = {c["component"]: c["variance"] for c in numbers["components"]}
    assert got == pytest.approx(dict(zip(expected["component"], expected["variance"], strict=True)))
    row = numbers["mean_score"][0]
    library = metrics.mean_score(df, generalize=["variant"], bimodality=False).iloc[0]
    assert row["value"] == pytest.approx(library["value"])
    assert row["method_facets"] == library["method_facets"]
