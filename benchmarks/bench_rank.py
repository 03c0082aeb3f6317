"""rank() speed: 30 systems, 50,000 pairwise games on 2,000 cases, 1,000 bootstrap resamples of
cases, against a plain loop of statsmodels fits in the same run.

The baseline is what a researcher would write: for each resample, draw cases with replacement,
take their games (repeated cases repeated), and fit ``statsmodels.GLM(Binomial)`` on the game
rows (one +1/-1 design row per game, anchor column dropped; ties as y = 0.5). A thousand such fits
take minutes, so the loop is timed on its first ``BASELINE_RESAMPLES`` resamples and its
per-resample cost is multiplied up; the ratio compares per-resample costs. The first baseline fit
is also checked against jevalkit's point estimates (to 1e-6), so both compute the same thing.

Target (issue 14): at least 10x faster. Run: ``.venv/bin/python benchmarks/bench_rank.py``
(``--smoke``: 6 systems, 2,000 games, 50 resamples).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import statsmodels.api as sm
from sizes import size

from jevalkit.metrics import rank

SYSTEMS, GAMES, CASES, RESAMPLES, BASELINE_RESAMPLES = size(
    (30, 50_000, 2_000, 1_000, 20), (6, 2_000, 100, 50, 3)
)


def games() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    skill = rng.normal(0, 0.6, SYSTEMS)
    a = rng.integers(0, SYSTEMS, GAMES)
    b = (a + rng.integers(1, SYSTEMS, GAMES)) % SYSTEMS
    p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
    u = rng.random(GAMES)
    verdict = np.where(u < p - 0.05, "a>b", np.where(u < p + 0.05, "a=b", "b>a"))
    names = np.array([f"s{i:02d}" for i in range(SYSTEMS)])
    return pd.DataFrame(
        {
            "case_id": rng.integers(0, CASES, GAMES).astype(str),
            "system_a": names[a],
            "system_b": names[b],
            "position": np.where(rng.random(GAMES) < 0.5, "a_first", "b_first"),
            "verdict": verdict,
            "score": pd.Series(verdict).map({"a>b": 1.0, "a=b": 0.5, "b>a": 0.0}).to_numpy(),
        }
    )


def design(df: pd.DataFrame, anchor: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    systems = sorted(set(df["system_a"]) | set(df["system_b"]))
    others = [s for s in systems if s != anchor]
    col = {s: i for i, s in enumerate(others)}
    x = np.zeros((len(df), len(others)))
    rows = np.arange(len(df))
    ia = df["system_a"].map(col)
    ib = df["system_b"].map(col)
    x[rows[ia.notna()], ia.dropna().astype(int)] = 1.0
    x[rows[ib.notna()], ib.dropna().astype(int)] = -1.0
    return x, df["score"].to_numpy(float), others


def baseline(df: pd.DataFrame, anchor: str, n: int) -> tuple[float, np.ndarray]:
    x, y, _ = design(df, anchor)
    by_case = df.groupby("case_id").indices
    cases = list(by_case)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for _ in range(n):
        drawn = rng.integers(0, len(cases), len(cases))
        rows = np.concatenate([by_case[cases[i]] for i in drawn])
        sm.GLM(y[rows], x[rows], family=sm.families.Binomial()).fit()
    per = (time.perf_counter() - start) / n
    full = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-12)
    return per, np.asarray(full.params)


def main() -> None:
    df = games()
    anchor = "s00"
    start = time.perf_counter()
    table = rank(df, anchor=anchor, n_resamples=RESAMPLES, seed=0, case="case_id")
    ours = time.perf_counter() - start
    per_base, params = baseline(df, anchor, BASELINE_RESAMPLES)
    _, _, others = design(df, anchor)
    mine = table.table().set_index("system").loc[others, "strength"].to_numpy()
    agree = float(np.max(np.abs(mine - params)))
    base_total = per_base * RESAMPLES
    print(
        f"rank: {SYSTEMS} systems, {GAMES:,} games, {CASES:,} cases, {RESAMPLES:,} case resamples"
    )
    print(
        f"  jevalkit.metrics.rank           {ours:8.2f} s  ({ours / RESAMPLES * 1e3:.2f} ms per resample)"
    )
    print(
        f"  statsmodels GLM loop (baseline) {base_total:8.2f} s  ({per_base * 1e3:.1f} ms per "
        f"resample, timed on {BASELINE_RESAMPLES})"
    )
    ratio = base_total / ours
    print(f"  speed-up {ratio:.1f}x (target >= 10x: {'met' if ratio >= 10 else 'MISSED'})")
    print(f"  max |strength difference| from statsmodels on the full data: {agree:.2e}")
    print(f"  separability {table.separability:.3f}")


if __name__ == "__main__":
    main()
