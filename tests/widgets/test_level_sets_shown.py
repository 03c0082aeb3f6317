"""LevelDistribution and the report HTML show an item's conformal level set."""

from __future__ import annotations

import numpy as np
import pytest

from jevalkit.errors import UsageError
from jevalkit.reports import distribution_html
from jevalkit.stats import level_sets
from jevalkit.widgets import LevelDistribution


def calibration(seed=0, n=200):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, n)
    guess = truth + rng.normal(0, 0.9, n)
    logits = -2.0 * (np.arange(5)[None, :] - guess[:, None]) ** 2
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    return probs / probs.sum(axis=1, keepdims=True), truth


def test_the_widget_shows_the_set_level_sets_gives_and_follows_probs():
    cal, truth = calibration()
    item = [0.05, 0.15, 0.5, 0.25, 0.05]
    expected = level_sets([item], cal, truth, coverage=0.8).sets[0]
    labels = ["1", "2", "3", "4", "5"]
    w = LevelDistribution(
        item, levels=labels, calibration_probs=cal, calibration_levels=truth, coverage=0.8
    )
    assert w.level_set == expected and len(expected) >= 2
    html = w._repr_mimebundle_()["text/html"]
    assert f"80% level set: <b>{labels[expected[0]]}</b> to <b>{labels[expected[-1]]}</b>" in html
    assert html.count("outline:2px") == len(expected)
    sharp = [0.0, 0.0, 0.01, 0.98, 0.01]
    w.probs = sharp
    assert w.level_set == level_sets([sharp], cal, truth, coverage=0.8).sets[0]
    # levels given as labels give the same set as indexes
    named = LevelDistribution(
        item, levels=labels, calibration_probs=cal,
        calibration_levels=[labels[t] for t in truth], coverage=0.8,
    )  # fmt: skip
    assert named.level_set == expected


def test_without_calibration_no_set_is_shown_and_bad_calibration_is_refused():
    w = LevelDistribution([0.3, 0.7], levels=["safe", "unsafe"])
    assert w.level_set == [] and "level set" not in w._bars.value
    with pytest.raises(UsageError, match="together"):
        LevelDistribution([0.3, 0.7], calibration_probs=[[0.5, 0.5]])
    with pytest.raises(UsageError, match="'maybe' is not one of the levels"):
        LevelDistribution(
            [0.3, 0.7], levels=["safe", "unsafe"], calibration_probs=[[0.5, 0.5]],
            calibration_levels=["maybe"],
        )  # fmt: skip


def test_level_labels_in_the_set_are_escaped():
    html = distribution_html(["<b>lo</b>", "hi&"], [0.4, 0.6], level_set=[0, 1], coverage=0.9)
    assert "<b>lo</b>" not in html.replace("<b>&lt;b&gt;lo&lt;/b&gt;</b>", "")
    assert "&lt;b&gt;lo&lt;/b&gt;" in html and "hi&amp;" in html
