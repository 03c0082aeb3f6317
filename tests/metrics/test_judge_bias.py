"""Position and length bias of a pairwise judge, against scipy and statsmodels (issue 14)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jevalkit import io
from jevalkit.errors import StatsError
from jevalkit.metrics import length_bias, position_bias
from jevalkit.reports import example_path

EXAMPLE = example_path("pairwise.jsonl")


def test_position_bias_against_scipy_binomtest_and_the_example_data():
    games = io.read(EXAMPLE)
    row = position_bias(games).iloc[0]
    score = games["score"].to_numpy()
    decisive = score != 0.5
    first = np.where(games["position"] == "a_first", score > 0.5, score < 0.5) & decisive
    assert row["first_wins"] == first.sum() and row["n_decisive"] == decisive.sum()
    assert row["p_value"] == pytest.approx(
        sps.binomtest(int(first.sum()), int(decisive.sum())).pvalue, abs=1e-12
    )
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        proportion_confint(first.sum(), decisive.sum(), method="wilson")
    )
    assert (
        row["first_win_share"] > 0.5 and row["p_value"] < 0.05
    )  # the example's built-in bias is found


def test_length_bias_against_statsmodels_logit():
    rng = np.random.default_rng(1)
    rows = []
    for case in range(400):
        la, lb = int(rng.integers(50, 1500)), int(rng.integers(50, 1500))
        p = 1 / (1 + np.exp(-(la - lb) / 500))  # the longer answer tends to win
        score = 1.0 if rng.random() < p else 0.0
        rows.append(
            {
                "case_id": str(case),
                "system_a": "x",
                "system_b": "y",
                "position": "a_first",
                "verdict": "a>b" if score else "b>a",
                "score": score,
                "error": None,
                "source": {"a": {"length": la}, "b": {"length": lb}},
            }
        )
    games = pd.DataFrame(rows)
    row = length_bias(games).iloc[0]
    x = np.array([(s["a"]["length"] - s["b"]["length"]) / 100 for s in games["source"]])
    fit = sm.Logit(games["score"].to_numpy(), sm.add_constant(x)).fit(disp=False)
    assert row["coef_per_100_chars"] == pytest.approx(fit.params[1], abs=1e-9)
    assert row["longer_win_share"] > 0.5 and row["p_value"] < 0.01
    with pytest.raises(StatsError, match="carry no output lengths"):
        length_bias(io.read(EXAMPLE))
