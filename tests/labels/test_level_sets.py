"""labels.judged_level_sets: conformal level sets of judged items from a labels file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jevalkit.errors import StatsError
from jevalkit.labels import judged_level_sets
from jevalkit.stats import level_sets


def judged_and_labels(seed=0, n=300, labelled=150):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, n)
    guess = truth + rng.normal(0, 0.9, n)
    logits = -2.0 * (np.arange(5)[None, :] - guess[:, None]) ** 2
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = probs / probs.sum(axis=1, keepdims=True)
    judged = pd.DataFrame(
        {
            "kind": "judge",
            "probe": "faithfulness",
            "version": 1,
            "model": "judge-m",
            "label": "sys",
            "case_id": [f"c{i:03d}" for i in range(n)],
            "repeat": 0,
            "probs": [list(p) for p in probs],
        }
    )
    labels = pd.DataFrame(
        {
            "system": "sys",
            "case_id": [f"c{i:03d}" for i in range(labelled)],
            "level": [str(t) for t in truth[:labelled]],
            "labeller": "ann",
        }
    )
    return judged, labels, probs, truth


def test_the_sets_are_stats_level_sets_calibrated_on_the_labelled_items():
    judged, labels, probs, truth = judged_and_labels()
    sets = judged_level_sets(judged, labels, coverage=0.9)  # levels from faithfulness@1
    expected = level_sets(probs, probs[:150], truth[:150], coverage=0.9)
    table = sets.table()
    assert table["level_set"].tolist() == [[str(i) for i in s] for s in expected.sets]
    assert table["size"].tolist() == expected.size.tolist()
    assert sets.n_calibration == 150 and sets.n_items == 300
    assert table["person"].iloc[150:].isna().all() and table["covered"].iloc[150:].isna().all()
    assert sets.covered_calibration >= 0.9  # in sample: split conformal's rank rule
    headline = sets.scalars()
    assert headline["judge"] == "judge-m" and headline["mean_size"] == pytest.approx(
        float(expected.size.mean())
    )
    fresh = np.mean([t in s for t, s in zip(truth[150:], expected.sets[150:], strict=True)])
    assert fresh >= 0.8  # 150 fresh items, coverage 0.9 asked (seeded)


def test_row_order_changes_nothing_and_hostile_labels_are_refused():
    judged, labels, *_ = judged_and_labels()
    a = judged_level_sets(judged, labels).table()
    b = judged_level_sets(judged.iloc[::-1], labels.iloc[::-1]).table()
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(StatsError, match=r"levels \['9'\] that the judge does not have"):
        judged_level_sets(judged, labels.assign(level="9"))
    with pytest.raises(StatsError, match="no labelled item was judged"):
        judged_level_sets(judged, labels.assign(case_id="x" + labels["case_id"]))
    two = pd.concat([judged, judged.assign(model="other")])
    with pytest.raises(StatsError, match="name one"):
        judged_level_sets(two, labels)
    few = judged_level_sets(judged, labels.iloc[:5], coverage=0.9)
    assert (few.table()["size"] == 5).all() and "too few items" in few.method
