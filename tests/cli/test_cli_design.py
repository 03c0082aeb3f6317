"""``jevalkit design`` on the committed demo run (three configurations of one probe)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DEMO = str(Path(__file__).parents[2] / "data" / "runs" / "schema-ten-records__local-demo.jsonl")


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_design_prints_components_and_the_chosen_design():
    # the demo has 3 labels: planned with at most 3 unless --limit says more may be written
    capped = cli("design", DEMO, "--facets", "case,label", "--target-half-width", "0.45")
    assert capped.returncode == 2 and "label=3" in capped.stderr
    done = cli(
        "design",
        DEMO,
        "--facets",
        "case,label",
        "--target-half-width",
        "0.45",
        "--limit",
        "label=10",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [c["component"] for c in out["components"]] == ["label", "residual"]
    assert out["left_out"] == ["case"]  # one probe: one case
    best = out["designs"][0]
    assert best["chosen"] and best["half_width"] <= 0.45


def test_design_says_when_no_design_reaches_the_target():
    done = cli("design", DEMO, "--facets", "case,label", "--target-half-width", "0.3")
    assert done.returncode == 2
    assert done.stderr.startswith("jevalkit: error: no design within the limits reaches")
    assert "Traceback" not in done.stderr
    # the CLI's flag, not the Python keyword (it said "raise limits=")
    assert "raise --limit FACET=N or the budget" in done.stderr and "limits=" not in done.stderr


def test_design_refuses_a_bad_limit_and_absent_facets():
    done = cli("design", DEMO, "--facets", "label", "--target-half-width", "0.5", "--limit", "x")
    assert done.returncode == 2 and "write FACET=N" in done.stderr
    done = cli("design", DEMO, "--facets", "variant", "--target-half-width", "0.5")
    assert done.returncode == 2 and "none of the facets ['variant'] varies" in done.stderr


def test_design_refuses_a_limit_it_would_ignore_or_that_allows_no_design():
    # a misspelt facet ("repeat" for "repeats") was a limit silently ignored; a limit of 0 or
    # 1 case was blamed on a budget nobody gave
    pilot = str(Path(DEMO).with_name("contact-extraction__v2__local.jsonl"))
    done = cli("design", pilot, "--target-half-width", "0.05", "--limit", "repeat=5")
    assert done.returncode == 2, done.stderr
    assert "--limit names 'repeat', neither a facet" in done.stderr and "'repeats'" in done.stderr
    done = cli("design", pilot, "--target-half-width", "0.05", "--limit", "case=0")
    assert done.returncode == 2 and "--limit case=0: a facet has at least 1 level" in done.stderr
    done = cli("design", pilot, "--target-half-width", "0.05", "--limit", "case=1")
    assert done.returncode == 2 and "the limit allows fewer than 2 levels of 'case'" in done.stderr
    assert "budget" not in done.stderr
