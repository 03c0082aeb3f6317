"""What README.md and the embedded-model guide say each embedded model scores (issue 54.3) is
what the committed runs in data/runs/ hold: recounted here from their rows."""

from __future__ import annotations

from pathlib import Path

from jevalkit import load_probe
from jevalkit._paths import data_dir
from jevalkit.local import LOCAL_MODELS
from jevalkit.results import read_results

REPO = Path(__file__).resolve().parents[1]
RUNS = data_dir() / "runs"


def passed(file: str, version: int, label: str | None = None) -> tuple[int, int]:
    """(passed, rows) of one probe version (and label) in a committed run."""
    df = read_results(RUNS / file)
    df = df[df["version"] == version]
    if label is not None:
        df = df[df["label"] == label]
    assert df["error"].isna().all()
    return int(df["passed"].sum()), len(df)


def test_the_demo_run_holds_both_models_and_both_versions():
    df = read_results(RUNS / "schema-ten-records__demo.jsonl")
    assert len(df) == 60 and set(df["version"]) == {2, 4}
    for name, spec in LOCAL_MODELS.items():
        mine = df[df["model"] == name]
        assert set(mine["model_sha256"]) == {spec.sha256}
        assert set(mine["model_resolved"]) == {spec.served_as}
    # @4's free answers are @2's, read back from the cache; its constrained ones were sent
    free4 = df[(df["version"] == 4) & df["label"].str.contains("free")]
    assert free4["cached"].all() and not df[df["version"] == 2]["cached"].any()
    # version 4 fails exactly the answers whose ids are not 1 through 10 in order
    v2, v4 = load_probe("schema-ten-records@2"), load_probe("schema-ten-records@4")
    for output in df[df["version"] == 4]["output"]:
        if v2.score(output).passed and not v4.score(output).passed:
            assert "ids_in_order" in {c.id for c in v4.score(output).checks if c.passed is False}


def test_the_readme_and_guide_numbers_are_the_committed_runs():
    demo = "schema-ten-records__demo.jsonl"
    numbers = {
        "local @2 constrained": passed(demo, 2, "local: constrained, T=1"),
        "local @4 constrained": passed(demo, 4, "local: constrained, T=1"),
        "chat @2 constrained": passed(demo, 2, "local-chat: constrained, T=1"),
        "chat @4 constrained": passed(demo, 4, "local-chat: constrained, T=1"),
        "chat unit@1": passed("unit-conversion__local-chat.jsonl", 1),
        "chat unit@2": passed("unit-conversion__local-chat.jsonl", 2),
        "chat contact@1": passed("contact-extraction__local-chat.jsonl", 1),
        "chat contact@2": passed("contact-extraction__local-chat.jsonl", 2),
        "chat follow@1": passed("follow-constraints__local-chat.jsonl", 1),
        "chat follow@2": passed("follow-constraints__local-chat.jsonl", 2),
        "local unit@1": passed("unit-conversion__local.jsonl", 1),
        "local contact@1": passed("contact-extraction__local.jsonl", 1),
        "local follow@1": passed("follow-constraints__local.jsonl", 1),
        "local unit@2": passed("unit-conversion__v2__local.jsonl", 2, "T=0"),
        "local contact@2": passed("contact-extraction__v2__local.jsonl", 2, "T=0"),
        "local follow@2": passed("follow-constraints__v2__local.jsonl", 2, "T=0"),
    }
    for label in ("free, T=0", "free, T=1"):
        for model in LOCAL_MODELS:
            for version in (2, 4):
                assert passed(demo, version, f"{model}: {label}") == (0, 5)
    assert numbers == {
        "local @2 constrained": (5, 5),
        "local @4 constrained": (1, 5),
        "chat @2 constrained": (5, 5),
        "chat @4 constrained": (4, 5),
        "chat unit@1": (0, 40),
        "chat unit@2": (9, 40),
        "chat contact@1": (0, 25),
        "chat contact@2": (9, 25),
        "chat follow@1": (9, 24),
        "chat follow@2": (10, 24),
        "local unit@1": (0, 40),
        "local contact@1": (0, 12),
        "local follow@1": (0, 12),
        "local unit@2": (10, 40),
        "local contact@2": (15, 25),
        "local follow@2": (9, 24),
    }
    guide = (REPO / "docs" / "guide" / "embedded-model.md").read_text()
    for row in (
        "| `schema-ten-records@4` (ids checked), constrained, T=1 | 1 of 5 | 4 of 5 |",
        "| `unit-conversion@2` (few-shot completion) | 10 of 40; T=1 4 of 120 | 9 of 40 |",
        "| `contact-extraction@1` (chat messages) | 0 of 12 | 0 of 25 (19 cut) |",
        "| `follow-constraints@1` (chat messages) | 0 of 12 (mean 0.04) | 9 of 24 (mean 0.48) |",
        "| `follow-constraints@2` (few-shot completion) | 9 of 24 (mean 0.50); T=1 18 of 48 | "
        "10 of 24 (mean 0.56) |",
    ):
        assert row in guide, row
    readme = (REPO / "README.md").read_text()
    for row in (
        "| `schema-ten-records@2` / `@4` (ids checked), constrained, T=1 | 5 / 1 of 5 | 5 / 4 of 5 |",
        "| `unit-conversion@1` / `@2` (chat messages / few-shot) | 0 / 10 of 40 | 0 / 9 of 40 |",
        "| `contact-extraction@1` / `@2` | 0 of 12 / 15 of 25 | 0 / 9 of 25 |",
        "| `follow-constraints@1` / `@2` | 0 of 12 / 9 of 24 | 9 / 10 of 24 |",
    ):
        assert row in readme, row
