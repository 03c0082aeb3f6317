"""Calibration of the bimodality test on graded data, against the dip test in the same run.

For each level count (3, 5, 7, 10), unimodal shape (symmetric, skewed, piled on the top level,
plus a flat one) and n (30, 200, 2,000), 2,000 samples are drawn and tested at alpha = 0.05 with
jevalkit's discrete test (parametric bootstrap, 199 resamples here; 2,000 by default) and with
Hartigan's dip test, the baseline that treats the grades as continuous. Power is measured on
two-peaked samples (40% on the bottom level, 40% on the top).

Targets (issue 11): false-positive rate at most 0.06 on every unimodal configuration; power at
least 0.8 on the two-peaked ones with n >= 60. Run: ``.venv/bin/python benchmarks/bench_bimodality.py``
(about 10 minutes on 2 cores; ``--quick`` for 300 samples per configuration, ``--smoke`` for 10).
"""

from __future__ import annotations

import time

import diptest
import numpy as np
from scipy import stats as sps
from sizes import parser

from jevalkit.stats import bimodality_groups

ALPHA = 0.05


def shapes(k: int) -> dict[str, np.ndarray]:
    x = np.arange(k)
    out = {
        "symmetric": sps.binom.pmf(x, k - 1, 0.5),
        "skewed": sps.binom.pmf(x, k - 1, 0.8),
        "piled-top": np.r_[np.full(k - 1, 0.3 / (k - 1)), 0.7],
        "flat": np.full(k, 1.0 / k),
    }
    return {name: p / p.sum() for name, p in out.items()}


def discrete_pvalues(counts: np.ndarray, rng: np.random.Generator, b: int) -> np.ndarray:
    """The library's test (:func:`jevalkit.stats.bimodality_groups`, whose discrete tests of
    samples with the same levels share vectorised bootstrap rounds) on each sample of level
    counts, every level of the scale given."""
    levels = np.arange(counts.shape[1])
    samples = [np.repeat(levels, c) for c in counts]
    table = bimodality_groups(
        samples, levels=[levels] * len(samples), n_resamples=b, seed=int(rng.integers(1 << 30))
    )
    return table["p_value"].to_numpy(float)


def dip_pvalues(counts: np.ndarray) -> np.ndarray:
    levels = np.arange(counts.shape[1])
    return np.array([diptest.diptest(np.repeat(levels, c))[1] for c in counts])


# samples per configuration, bootstrap resamples: the smallest p-value a test can give is
# 1 / (b + 1), so b must let it fall below ALPHA (at b = 19 the smoke size's power read 0.000)
SIZES = {"smoke": (10, 39), "quick": (300, 199), "full": (2000, 199)}


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--quick", action="store_true")
    args = options.parse_args()
    reps, b = SIZES["smoke" if args.smoke else "quick" if args.quick else "full"]
    rng = np.random.default_rng(2026)
    started = time.perf_counter()
    worst, weakest = 0.0, 1.0
    print(f"{reps} samples per configuration, alpha = {ALPHA}; rate of 'bimodal' verdicts")
    print(f"{'levels':>6} {'shape':<12} {'n':>5} {'jevalkit':>9} {'dip test':>9}")
    for k in (3, 5, 7, 10):
        for name, p in shapes(k).items():
            for n in (30, 200, 2000):
                counts = rng.multinomial(n, p, size=reps)
                ours = float(np.mean(discrete_pvalues(counts, rng, b) < ALPHA))
                dip = float(np.mean(dip_pvalues(counts) < ALPHA))
                worst = max(worst, ours)
                print(f"{k:>6} {name:<12} {n:>5} {ours:>9.3f} {dip:>9.3f}")
        two = np.r_[0.4, np.full(k - 2, 0.2 / (k - 2)), 0.4]
        for n in (60, 200):
            counts = rng.multinomial(n, two, size=reps)
            power = float(np.mean(discrete_pvalues(counts, rng, b) < ALPHA))
            weakest = min(weakest, power) if k > 3 else weakest
            print(f"{k:>6} {'two-peaked':<12} {n:>5} {power:>9.3f}   (power)")
    print(
        f"worst false-positive rate {worst:.3f} (target <= 0.06); weakest power with 5+ "
        f"levels {weakest:.3f} (target >= 0.8); {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
