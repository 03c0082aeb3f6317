"""The PPI, PPI++ and Rogan-Gladen estimators on arrays (jevalkit.labels builds on them), against
ppi-python and the published formulas."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from scipy import stats

from jevalkit.errors import StatsError
from jevalkit.stats import ppi_interval, rogan_gladen_interval


def data(seed=0, n=60, big_n=600):
    rng = np.random.default_rng(seed)
    truth = rng.random(n + big_n) < 0.5
    judged = np.where(truth, rng.random(truth.size) > 0.05, rng.random(truth.size) < 0.2)
    return truth[:n].astype(float), judged[:n].astype(float), judged[n:].astype(float)


def test_the_point_is_ppi_pythons_and_lambda_its_closed_form():
    y, yhat, yhat_u = data()
    tuned = ppi_interval(y, yhat, yhat_u, None)  # PPI++: lambda tuned, reported
    lam = tuned.lam
    fixed = ppi_interval(y, yhat, yhat_u, lam)  # read by field name
    est, low, high = fixed.estimate, fixed.ci_low, fixed.ci_high
    judged_var, rect_var = fixed.judged_variance, fixed.rectifier_variance
    assert tuple(tuned) == (est, low, high, judged_var, rect_var)  # it still unpacks
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
    assert est == pytest.approx(float(np.squeeze(point)), abs=1e-12)
    n, big_n = y.size, yhat_u.size
    cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    var = np.var(np.concatenate([yhat, yhat_u]), ddof=1)
    assert lam == pytest.approx(np.clip(cov / ((1 + n / big_n) * var), 0, 1), abs=1e-12)
    half = stats.t.ppf(0.975, n - 1) * math.sqrt(judged_var + rect_var)
    assert (low, high) == pytest.approx((est - half, est + half), abs=1e-12)


def test_with_many_labels_the_interval_is_ppi_pythons():
    y, yhat, yhat_u = data(seed=4, n=5000, big_n=20000)
    ppi = ppi_interval(y, yhat, yhat_u, 1.0)
    low, high = ppi.ci_low, ppi.ci_high
    ref_low, ref_high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=1.0)
    assert (high - low) / 2 == pytest.approx((float(ref_high[0]) - float(ref_low[0])) / 2, rel=0.01)


def test_rogan_gladen_is_the_published_estimator_and_refuses_a_useless_classifier():
    y, yhat, yhat_u = data(seed=5)
    rg = rogan_gladen_interval(y, yhat, yhat_u, np.ones(y.size))
    se, sp = np.mean(yhat[y == 1] == 1), np.mean(yhat[y == 0] == 0)
    p = np.mean(yhat_u)
    assert (rg.sensitivity, rg.specificity) == pytest.approx((se, sp))
    assert rg.estimate == pytest.approx((p + sp - 1) / (se + sp - 1), abs=1e-12)
    assert rg.ci_low < rg.estimate < rg.ci_high
    with pytest.raises(StatsError, match="no better than chance"):
        rogan_gladen_interval(y, 1 - y, yhat_u, np.ones(y.size))
    with pytest.raises(StatsError, match="labelled passes and labelled failures"):
        rogan_gladen_interval(np.ones(4), np.ones(4), yhat_u, np.ones(4))
