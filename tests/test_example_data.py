"""data/examples/README.md describes every bundled example file, with the row counts and
columns the files have (review-c: judged.jsonl, labels.jsonl and cascade_new.jsonl were in no
description)."""

from __future__ import annotations

import re

import pandas as pd

from jevalkit._paths import data_dir

EXAMPLES = data_dir() / "examples"
README = (EXAMPLES / "README.md").read_text()


def test_every_example_file_is_described():
    files = sorted(
        p.name
        for p in EXAMPLES.iterdir()
        if p.suffix in (".jsonl", ".gz") and not p.name.endswith(".sources.json")
    )
    assert [name for name in files if f"`{name}`" not in README] == []


def test_the_described_counts_and_columns_are_the_files():
    judged = pd.read_json(EXAMPLES / "judged.jsonl", lines=True)
    labels = pd.read_json(EXAMPLES / "labels.jsonl", lines=True)
    new = pd.read_json(EXAMPLES / "cascade_new.jsonl", lines=True)
    assert len(judged) == 1200 and judged["case_id"].nunique() == 600
    assert sorted(judged["label"].unique()) == ["assistant-a", "assistant-b"]
    assert len(labels) == 120 and labels["case_id"].nunique() == 60
    assert set(labels["sampling_probability"]) == {0.1}
    for column in labels.columns:
        assert f"`{column}`" in README, column
    assert list(new.columns) == ["id", "input", "output"] and len(new) == 12
    assert re.search(r"`n00` \.\.\. `n11`", README)
    grades = pd.read_json(EXAMPLES / "grades.jsonl", lines=True)
    assert len(grades) == 8 * 80 * 2 and grades["model"].nunique() == 8
    variants = pd.read_json(EXAMPLES / "variants.jsonl", lines=True)
    assert len(variants) == 40 * 3 * 4
