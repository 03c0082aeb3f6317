"""The benchmarks' smoke sizes can show what they measure (review-c): at 19 bootstrap resamples
the bimodality benchmark's smallest p-value was 1/20 = alpha, so its smoke run printed power
0.000 on two-peaked data and passed CI all the same."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from jevalkit.stats import bimodality_groups

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def test_every_bimodality_size_can_reject_and_does_on_two_peaks():
    bench = load("bench_bimodality")
    for name, (_, b) in bench.SIZES.items():
        assert 1 / (b + 1) < bench.ALPHA, name
    _, b = bench.SIZES["smoke"]
    levels = np.arange(7)
    two_peaks = np.repeat(levels, [24, 2, 2, 2, 2, 2, 24])  # 58 grades, piled at both ends
    table = bimodality_groups([two_peaks], levels=[levels], n_resamples=b, seed=1)
    assert table["p_value"].iloc[0] < bench.ALPHA
