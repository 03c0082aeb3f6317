"""Is a score distribution split in two? Hartigan's dip test, with Sarle's coefficient beside it."""

from __future__ import annotations

import diptest
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps

from ._validate import as_clean_array


def bimodality(scores: ArrayLike, *, alpha: float = 0.05) -> pd.DataFrame:
    """Test ``scores`` for more than one mode.

    Hartigan's dip test (``diptest`` package) is the decision: ``bimodal`` when its p-value is
    below ``alpha``. Sarle's bimodality coefficient b = (g^2 + 1) / (k + 3 (n-1)^2 / ((n-2)(n-3)))
    (g skewness, k excess kurtosis, both bias-corrected) is reported beside it; b > 5/9 suggests
    bimodality. With fewer than 4 scores neither is computed and ``bimodal`` is False.

    Returns:
        One row: ``n``, ``dip``, ``p_value``, ``sarle_b``, ``bimodal``, ``method``.

    Example:
        >>> split = [0.0] * 50 + [1.0] * 50
        >>> bool(bimodality(split)["bimodal"][0])
        True
        >>> import numpy as np
        >>> bool(bimodality(np.random.default_rng(0).normal(size=200))["bimodal"][0])
        False
    """
    x = as_clean_array(scores, "scores", min_n=1)
    n = x.size
    row = {"n": n, "dip": np.nan, "p_value": np.nan, "sarle_b": np.nan, "bimodal": False,
           "method": "Hartigan's dip test"}  # fmt: skip
    if n >= 4 and np.ptp(x) > 0:
        dip, p = diptest.diptest(x)
        g = sps.skew(x, bias=False)
        k = sps.kurtosis(x, bias=False)
        b = (g**2 + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
        row.update(dip=float(dip), p_value=float(p), sarle_b=float(b), bimodal=bool(p < alpha))
    return pd.DataFrame([row])
