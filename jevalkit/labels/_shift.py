"""Are the new items like the calibration items? A cascade's guarantee holds for items drawn like
its labelled ones, and the one thing seen of both is the confidence its judges give them. Each
stage keeps its calibration items' confidences (a reference sample); where the cascade is used,
the new items that reach the stage are compared with it by a two-sample Kolmogorov-Smirnov test
(``scipy.stats.ks_2samp``; with ties it is conservative).

The stages are tested together at ``alpha`` (0.001 by default), each at ``alpha`` over the
number of stages that decide anything (a union bound): new items drawn like the labelled ones
void a cascade in at most that share of uses (``benchmarks/calibration.py`` measures it). A test
that does not reject says nothing for certain: a shift the confidences do not show (the same
confidence, a different agreement with people) is not detected.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import ks_2samp

SHIFT_ALPHA = 0.001
REFERENCE_SIZE = 1000  # calibration confidences kept per stage: at most this many quantiles
SHIFT_COLUMNS = [
    "judge",
    "n_calibration",
    "n_new",
    "statistic",
    "location",
    "p_value",
    "level",
    "shifted",
    "median_calibration",
    "median_new",
    "above_calibration",
    "above_new",
    "message",
]


def reference_sample(confidence: np.ndarray) -> tuple[float, ...]:
    """The calibration confidences a cascade file keeps for a stage: sorted, 8 significant
    digits, and at most :data:`REFERENCE_SIZE` of them (evenly spaced order statistics of a
    larger sample, which the test then counts as that many: conservative, since quantiles vary
    less than a sample of their number).

    Example:
        >>> reference_sample(np.array([0.9, 0.612345678912, 0.7]))
        (0.61234568, 0.7, 0.9)
        >>> len(reference_sample(np.linspace(0, 1, 5000)))
        1000
    """
    values = np.sort(np.asarray(confidence, dtype=float))
    values = values[np.isfinite(values)]
    if values.size > REFERENCE_SIZE:
        at = np.round(np.linspace(0, values.size - 1, REFERENCE_SIZE)).astype(int)
        values = values[at]
    return tuple(float(f"{v:.8g}") for v in values)


def shift_check(
    judge: str, threshold: float, reference: np.ndarray, new: np.ndarray, level: float
) -> dict[str, Any]:
    """One stage's test: the new items' confidences against the reference sample, at ``level``.
    ``shifted`` only when both samples hold two or more items and p < ``level``; ``message``
    says how they differ.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> ref = rng.beta(5, 2, 300)
        >>> shift_check("j", 0.8, ref, rng.beta(5, 2, 2000), 0.001)["shifted"]
        False
        >>> out = shift_check("j", 0.8, ref, rng.beta(3, 2, 2000), 0.001)
        >>> out["shifted"], out["message"][:46]
        (True, "stage 'j': the new items' confidence is not li")
    """
    ref = np.asarray(reference, dtype=float)
    new = np.asarray(new, dtype=float)
    new = new[np.isfinite(new)]
    row: dict[str, Any] = {
        "judge": judge,
        "n_calibration": int(ref.size),
        "n_new": int(new.size),
        "statistic": np.nan,
        "location": np.nan,
        "p_value": np.nan,
        "level": float(level),
        "shifted": False,
        "median_calibration": float(np.median(ref)) if ref.size else np.nan,
        "median_new": float(np.median(new)) if new.size else np.nan,
        "above_calibration": float(np.mean(ref >= threshold)) if ref.size else np.nan,
        "above_new": float(np.mean(new >= threshold)) if new.size else np.nan,
        "message": None,
    }
    if ref.size < 2 or new.size < 2:
        row["message"] = (
            f"stage {judge!r}: not tested ({ref.size} calibration and {new.size} new "
            "confidences; the test needs two of each)"
        )
        return row
    test = ks_2samp(ref, new, alternative="two-sided", method="auto")
    p = float(test.pvalue)
    row.update(statistic=float(test.statistic), location=float(test.statistic_location), p_value=p)
    if p < level:
        row["shifted"] = True
        row["message"] = (
            f"stage {judge!r}: the new items' confidence is not like the calibration items' "
            f"(two-sample Kolmogorov-Smirnov D = {row['statistic']:.2f} at {row['location']:.4g}, "
            f"p = {p:.2g} < {level:.2g}): median {row['median_new']:.3f} against "
            f"{row['median_calibration']:.3f}, {row['above_new']:.0%} at or above its threshold "
            f"{threshold:.4g} against {row['above_calibration']:.0%}"
        )
    return row
