"""A judge's quality against gold labels, pinned to scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from jevalkit.metrics import quality


def test_quality_against_gold_is_pinned_to_scipy():
    df = pd.DataFrame(
        {
            "probe": "faithfulness",
            "gold": ["4", "3", "0", "1", "2", "4"],
            "verdict": ["4", "3", "1", "1", "3", "4"],
            "expected_level": [3.7, 2.9, 0.8, 1.2, 2.6, 3.5],
            "probs": [[0.2] * 5] * 6,
            "coverage": [0.9, 0.8, 0.95, 0.7, 0.9, 0.85],
            "error": [None] * 6,
        }
    )
    row = quality(df, case=None, system=None).iloc[0]
    x, y = df["expected_level"].to_numpy(), df["gold"].astype(float).to_numpy()
    assert row["mae"] == pytest.approx(np.mean(np.abs(x - y)))
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert row["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert row["exact_agreement"] == pytest.approx(4 / 6) and row["coverage_min"] == 0.7


def test_quality_of_a_probability_judge_has_brier_and_ece():
    df = pd.DataFrame(
        {
            "probe": "security",
            "gold": ["unsafe", "safe", "unsafe", "safe"],
            "verdict": ["unsafe", "safe", "safe", "safe"],
            "probs": [[0.1, 0.9], [0.8, 0.2], [0.6, 0.4], [0.9, 0.1]],
            "coverage": [1.0] * 4,
            "error": [None] * 4,
        }
    )
    row = quality(df, case=None, system=None).iloc[0]
    assert row["brier"] == pytest.approx(np.mean([(0.9 - 1) ** 2, 0.2**2, (0.4 - 1) ** 2, 0.1**2]))
    assert 0 <= row["ece"] <= 1
