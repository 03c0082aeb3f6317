"""Issue 36 (Statistics IV): the answers that were wrong at the edges, each pinned here against
an outside reference (scipy, statsmodels) or a closed form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jevalkit.metrics import mean_score, pass_rate


def repeated(passed: np.ndarray) -> pd.DataFrame:
    """Cases x repeats of verdicts as results rows (score = the verdict)."""
    n_cases, repeats = passed.shape
    return pd.DataFrame(
        {
            "case_id": np.repeat([f"c{i:02d}" for i in range(n_cases)], repeats),
            "repeat": np.tile(np.arange(repeats), n_cases),
            "passed": passed.ravel().astype(bool),
            "score": passed.ravel().astype(float),
        }
    )


# ---- item 2: repeats that do not vary are not independent ----------------------------------


def test_repeats_without_spread_count_cases_not_rows():
    # unit-conversion: 20 cases x 3 repeats, every run failed (temperature 0)
    df = repeated(np.zeros((20, 3)))
    rate = pass_rate(df, case="case_id").iloc[0]
    score = mean_score(df, case="case_id").iloc[0]
    wilson = proportion_confint(0, 20, method="wilson")
    assert rate["ci_high"] == pytest.approx(wilson[1]) == pytest.approx(score["ci_high"])
    assert rate["ci_high"] == pytest.approx(0.161, abs=5e-4)  # was 0.060 (Wilson at n = 60)
    assert rate["design_effect"] == pytest.approx(3.0) and rate["n_effective"] == 20
    assert "effective n is the number of cases" in rate["method"]


def test_pass_rate_and_mean_score_of_the_same_verdicts_agree():
    # 10 cases x 3 epochs (an inspect import): the same 0/1 data, one estimand
    rng = np.random.default_rng(3)
    passed = rng.random((10, 3)) < rng.beta(3, 1, 10)[:, None]
    df = repeated(passed)
    rate = pass_rate(df, case="case_id").iloc[0]
    score = mean_score(df, case="case_id").iloc[0]
    assert rate["value"] == pytest.approx(score["value"])
    # CR1 cluster variance = the variance of case means / G (mean_score's), balanced design
    means = passed.mean(axis=1)
    iid = passed.ravel().var(ddof=1) / passed.size
    assert rate["design_effect"] == pytest.approx(means.var(ddof=1) / 10 / iid)
    # Korn-Graubard: the effective n at G - 1 degrees of freedom
    t = sps.t.ppf(0.975, 9)
    assert rate["n_effective"] == pytest.approx(30 / rate["design_effect"] * (1.96 / t) ** 2, 1e-3)
    width_rate, width_score = rate["ci_high"] - rate["ci_low"], score["ci_high"] - score["ci_low"]
    assert width_rate == pytest.approx(width_score, rel=0.1)  # Wilson's shape vs t's: close
