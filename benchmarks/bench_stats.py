"""Bootstrap speed: a 95% percentile and BCa CI of the mean for n = 100,000 with 10,000
resamples, jevalkit.stats.bootstrap_ci against scipy.stats.bootstrap in the same run.

Target: the same endpoints within Monte Carlo error; percentile at most 0.6x and BCa at most
0.1x scipy's time. Run: ``.venv/bin/python benchmarks/bench_stats.py`` (``--smoke``: n = 2,000,
200 resamples).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats
from sizes import size

from jevalkit.stats import bootstrap_ci

N, RESAMPLES = size((100_000, 10_000), (2_000, 200))


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> None:
    x = np.random.default_rng(0).exponential(size=N)
    print(f"n = {N:,}, {RESAMPLES:,} resamples, 95% CI of the mean")
    for method, scipy_method in (("percentile", "percentile"), ("bca", "BCa")):
        ref, t_ref = timed(
            lambda m=scipy_method: (
                stats.bootstrap(
                    (x,), np.mean, method=m, n_resamples=RESAMPLES, random_state=1, batch=100
                ).confidence_interval
            )
        )
        ours, t_ours = timed(
            lambda m=method: bootstrap_ci(x, method=m, n_resamples=RESAMPLES, seed=1)
        )
        print(f"{method:10s} scipy   [{ref.low:.5f}, {ref.high:.5f}]  {t_ref:7.2f} s (baseline)")
        print(
            f"{method:10s} jevalkit[{ours.low:.5f}, {ours.high:.5f}]  {t_ours:7.2f} s  "
            f"ratio {t_ours / t_ref:.3f}x scipy"
        )


if __name__ == "__main__":
    main()
