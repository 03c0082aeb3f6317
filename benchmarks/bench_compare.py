"""compare() speed: 20 systems x 2,000 cases x 5 repeats, every system against a baseline, on
pass rate and mean score, against a hand-written pandas + scipy loop computing the same numbers
in the same run (case means, paired t and Wilcoxon, BCa bootstrap over cases with
scipy.stats.bootstrap(paired=True), Holm and Benjamini-Hochberg with statsmodels).

It also checks the paired pass-rate interval's coverage by simulation (2,000 data sets of
30 cases with a true difference): the Newcombe interval jevalkit uses for one verdict per case,
against the percentile bootstrap of the differences; and with 5 cases, the paired t interval
compare() uses below 30 cases against the BCa bootstrap.

Target (issue 13): within 3x of the loop. Run: ``.venv/bin/python benchmarks/bench_compare.py
[--smoke]``
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import stats
from sizes import size
from statsmodels.stats.multitest import multipletests

from jevalkit.metrics import compare
from jevalkit.stats import bootstrap_ci, paired_proportion_ci

SYSTEMS, CASES, REPEATS, RESAMPLES = size((20, 2000, 5, 2000), (4, 60, 2, 200))
SIMS = size(2000, 50)  # simulated data sets per coverage


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    skill = rng.normal(0, 0.3, SYSTEMS)
    difficulty = rng.normal(0, 1, CASES)
    logit = (
        skill[:, None, None]
        - difficulty[None, :, None]
        + rng.normal(0, 0.5, (SYSTEMS, CASES, REPEATS))
    )
    p = 1 / (1 + np.exp(-logit))
    passed = rng.random(p.shape) < p
    return pd.DataFrame(
        {
            "system": np.repeat([f"s{i:02d}" for i in range(SYSTEMS)], CASES * REPEATS),
            "case_id": np.tile(np.repeat(np.arange(CASES), REPEATS), SYSTEMS),
            "repeat": np.tile(np.arange(REPEATS), SYSTEMS * CASES),
            "passed": passed.ravel(),
            "score": p.ravel(),
        }
    )


def loop(df: pd.DataFrame, base: str) -> pd.DataFrame:
    rows = []
    for metric, column in (("pass_rate", "passed"), ("mean_score", "score")):
        wide = df.groupby(["case_id", "system"])[column].mean().unstack()
        for other in wide.columns:
            if other == base:
                continue
            pair = wide[[other, base]].dropna()
            x, y = pair[other].to_numpy(), pair[base].to_numpy()
            ci = stats.bootstrap(
                (x, y),
                lambda a, b, axis: np.mean(a - b, axis=axis),
                paired=True,
                method="BCa",
                n_resamples=RESAMPLES,
                random_state=0,
            ).confidence_interval
            rows.append(
                {
                    "system": other,
                    "metric": metric,
                    "delta": (x - y).mean(),
                    "ci_low": ci.low,
                    "ci_high": ci.high,
                    "p_value": stats.ttest_rel(x, y).pvalue,
                    "p_wilcoxon": stats.wilcoxon(x, y).pvalue,
                }
            )
    out = pd.DataFrame(rows)
    out["p_holm"] = multipletests(out["p_value"], method="holm")[1]
    out["p_bh"] = multipletests(out["p_value"], method="fdr_bh")[1]
    return out


def coverage(sims: int = SIMS, n: int = 30) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    p_x, p_y, rho_share = 0.75, 0.6, 0.5
    truth = p_x - p_y
    hits_newcombe = hits_boot = 0
    for _ in range(sims):
        shared = rng.random(n) < rho_share
        u = rng.random(n)
        x = np.where(shared, u < p_x, rng.random(n) < p_x).astype(float)
        y = np.where(shared, u < p_y, rng.random(n) < p_y).astype(float)
        counts = [
            int(np.sum((x == 1) & (y == 1))),
            int(np.sum((x == 1) & (y == 0))),
            int(np.sum((x == 0) & (y == 1))),
            int(np.sum((x == 0) & (y == 0))),
        ]
        _, low, high = paired_proportion_ci(*counts)
        hits_newcombe += low <= truth <= high
        d = x - y
        if np.ptp(d) > 0:
            ci = bootstrap_ci(
                d, method="percentile", n_resamples=999, seed=int(rng.integers(1 << 30))
            )
            hits_boot += ci.low <= truth <= ci.high
    return hits_newcombe / sims, hits_boot / sims


def few_case_coverage(sims: int = SIMS, n: int = 5) -> tuple[float, float]:
    """Coverage of the interval compare() gives with few paired cases (the paired t interval)
    against the BCa bootstrap it replaced there, on normal case differences (SD 0.2 about the
    true 0.1) cut at two SDs on either side: symmetric, so their mean stays the truth, and the
    new system's scores, 0.5 plus a difference, stay on the [0, 1] scale (0.2 to 1.0), where
    compare() refuses anything else."""
    rng = np.random.default_rng(2)
    truth, sd = 0.1, 0.2
    hits_t = hits_bca = 0
    for _ in range(sims):
        diffs = stats.truncnorm.rvs(-2, 2, loc=truth, scale=sd, size=n, random_state=rng)
        df = pd.DataFrame(
            {
                "case_id": np.tile(np.arange(n), 2),
                "system": ["new"] * n + ["base"] * n,
                "score": np.concatenate([0.5 + diffs, np.full(n, 0.5)]),
            }
        )
        row = compare(df, "base", by=None, case="case_id", metrics=["mean_score"]).iloc[0]
        hits_t += row["ci_low"] <= truth <= row["ci_high"]
        ci = bootstrap_ci(diffs, n_resamples=999, seed=int(rng.integers(1 << 30)))
        hits_bca += ci.low <= truth <= ci.high
    return hits_t / sims, hits_bca / sims


def main() -> None:
    df = frame()
    base = "s00"
    print(
        f"{SYSTEMS} systems x {CASES:,} cases x {REPEATS} repeats = {len(df):,} rows; {RESAMPLES} resamples"
    )
    start = time.perf_counter()
    ref = loop(df, base)
    t_ref = time.perf_counter() - start
    start = time.perf_counter()
    ours = compare(df, base, by=None, case="case_id", n_resamples=RESAMPLES)
    t_ours = time.perf_counter() - start
    merged = ours.merge(ref, on=["system", "metric"], suffixes=("", "_ref"))
    for column in ("delta", "p_value", "p_wilcoxon", "p_holm", "p_bh"):
        assert np.allclose(merged[column], merged[f"{column}_ref"], rtol=1e-9, atol=1e-12), column
    width = np.abs(merged["ci_low"] - merged["ci_low_ref"]).max()
    print(
        f"pandas + scipy loop {t_ref:.1f} s (baseline); jevalkit.metrics.compare {t_ours:.1f} s = "
        f"{t_ours / t_ref:.2f}x (target 3x); tests identical, interval ends within {width:.4f}"
    )
    newcombe, boot = coverage()
    print(
        f"paired pass-rate interval coverage, 30 cases, {SIMS:,} data sets (nominal 0.95): Newcombe "
        f"{newcombe:.3f}, percentile bootstrap {boot:.3f}"
    )
    t_cover, bca_cover = few_case_coverage()
    print(
        f"paired score interval coverage, 5 cases, {SIMS:,} data sets (nominal 0.95): the paired t "
        f"interval compare() uses below 30 cases {t_cover:.3f}, BCa bootstrap {bca_cover:.3f}"
    )


if __name__ == "__main__":
    main()
