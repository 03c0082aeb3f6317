"""The benchmark_health and leaderboard notebooks run under papermill on the bundled simulated
benchmark, and their headlines carry the planted defects and the rank intervals."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from sendable import defects

from jevalkit._paths import data_dir
from jevalkit.metrics import Race
from jevalkit.reports import run_report
from jevalkit.results import replay


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("item-reports")


def test_benchmark_health_finds_the_planted_defects(out):
    report = run_report("benchmark_health", out=out, parameters={"ks": [10, 20], "max_systems": 6})
    numbers = json.loads(report.headline.read_text())
    assert (numbers["dead"], numbers["flaky"], numbers["n_items"]) == (6, 4, 80)
    assert numbers["irt"]["n_calibrated"] == 74
    check = numbers["leave_systems_out"]
    assert {r["k"] for r in check} == {10, 20} and all(r["n_systems"] == 6 for r in check)
    assert defects(report.html.read_text(), title="Benchmark health") == []  # no row index
    assert {r["method"] for r in check} == {"irt", "stratified", "random", "active"}


def test_leaderboard_report_and_page(out):
    report = run_report("leaderboard", out=out, parameters={"n_resamples": 300})
    numbers = json.loads(report.headline.read_text())
    assert numbers["n_systems"] == 24 and "sys-02" in numbers["could_be_first"]
    rows = {r["system"]: r for r in numbers["board"]}
    assert rows["sys-05"]["n_missing"] == 8
    assert all(r["rank_low"] <= r["rank"] <= r["rank_high"] for r in rows.values())
    page = (out / "leaderboard.page.html").read_text()
    assert page.count("<svg") >= 48  # a score interval and a rank interval per system
    html = report.html.read_text()
    assert defects(html, title="Leaderboard") == []  # the page's name, not `leaderboard\.page`
    method = "simultaneous 95% rank intervals"  # a footnote, not repeated in every row
    assert not re.search(rf"<td>[^<]*{method}", html)
    assert re.search(rf'class="jevalkit-method"><small>method: [^<]*{method}', html)


def test_leaderboard_report_on_pairwise_games(tmp_path):
    report = run_report(
        "leaderboard",
        results=data_dir() / "examples" / "pairwise.jsonl",
        out=tmp_path,
        parameters={"kind": "pairwise", "results_format": "pairwise", "n_resamples": 200},
    )
    numbers = json.loads(report.headline.read_text())
    assert numbers["kind"] == "pairwise" and numbers["could_be_first"][0] == "alpha"


def test_leaderboard_report_shows_a_race(tmp_path):
    rows = [
        {"source": f"m{j}", "probe": "p", "version": 1, "case_id": c, "repeat": 0,
         "score": float((c * (j + 3)) % 7 < 6 - j)}
        for j in range(4)
        for c in range(150)
    ]  # fmt: skip
    outcome = replay(Race(models=[f"m{j}" for j in range(4)], target="top:2"), pd.DataFrame(rows))
    path = outcome.outcome.save(tmp_path / "race.json")
    report = run_report("leaderboard", out=tmp_path / "rep", parameters={"race": str(path)})
    numbers = json.loads(report.headline.read_text())
    assert numbers["target"] == "top:2" and numbers["certified"] is True
    assert numbers["answer"] == ["m0", "m1"] and numbers["n_systems"] == 4
    assert {r["status"] for r in numbers["systems"]} == {"in top 2", "not in top 2"}
    html = report.html.read_text()
    assert defects(html, title="Leaderboard") == []
    assert "A race of 4 systems over 150 cases" in html
    page = (tmp_path / "rep" / "leaderboard.page.html").read_text()
    assert "settled at" in page and page.count("<svg") == 8
