"""Metric speed on a leaderboard-sized frame: 46,690 grades (58 systems x 805 questions),
against a plain pandas + scipy computation of the same numbers in the same run.

- ``mean_score(by="system")``: n, mean, t interval over cases (repeats averaged first). Baseline:
  ``groupby`` means and ``scipy.stats.t.interval``. Printed by default (the bimodality check on:
  a sequential bootstrap per system, vectorised across systems, an extra the baseline lacks) and
  with it off (the same numbers as the baseline).
- ``pass_rate(by="system")``: Wilson interval (one row per case, so no clustering). Baseline:
  ``groupby`` sums and ``statsmodels`` ``proportion_confint`` per system.
- ``win_rate(baseline=...)``: every system against one baseline in one call, percentile
  bootstrap over cases. Baseline: a pandas merge and ``scipy.stats.bootstrap`` per system.

Targets (issues 11, 23): mean_score by default (bimodality on) and pass_rate within 5x, win_rate
within 5x.
Run: ``.venv/bin/python benchmarks/bench_metrics.py`` (``--smoke``: 8 systems x 60 questions).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import stats
from sizes import size
from statsmodels.stats.proportion import proportion_confint

from jevalkit.metrics import mean_score, pass_rate, win_rate

SYSTEMS, QUESTIONS, RESAMPLES = size((58, 805, 2000), (8, 60, 2000))


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    strength = rng.normal(0, 0.6, SYSTEMS)
    difficulty = rng.normal(0, 0.8, QUESTIONS)
    latent = strength[:, None] - difficulty[None, :] + rng.logistic(0, 0.6, (SYSTEMS, QUESTIONS))
    grades = np.searchsorted([-3.2, -2.7, -2.3, -1.9, -1.5, -1.0, -0.4, 0.3, 1.2], latent) + 1
    return pd.DataFrame(
        {
            "system": np.repeat([f"model-{i:02d}" for i in range(SYSTEMS)], QUESTIONS),
            "question_id": np.tile(np.arange(QUESTIONS), SYSTEMS),
            "score": ((grades - 1) / 9).ravel(),
            "passed": (grades >= 8).ravel(),
        }
    )


def timed(fn, repeat: int = 3) -> tuple[object, float]:
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def pandas_mean(df: pd.DataFrame) -> pd.DataFrame:
    cases = df.groupby(["system", "question_id"])["score"].mean()
    g = cases.groupby(level=0)
    out = g.agg(["count", "mean", "sem"])
    low, high = stats.t.interval(0.95, out["count"] - 1, loc=out["mean"], scale=out["sem"])
    return out.assign(ci_low=low, ci_high=high)


def pandas_pass(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby("system")["passed"].agg(["sum", "count"])
    rows = [
        proportion_confint(k, n, method="wilson") for k, n in zip(g["sum"], g["count"], strict=True)
    ]
    return g.assign(ci_low=[r[0] for r in rows], ci_high=[r[1] for r in rows])


def pandas_win(df: pd.DataFrame, base: str) -> pd.DataFrame:
    wide = df.pivot_table(index="question_id", columns="system", values="score", aggfunc="mean")
    out = []
    for other in wide.columns:
        if other == base:
            continue
        pair = wide[[other, base]].dropna()
        outcome = (np.sign(pair[other] - pair[base]) * 0.5 + 0.5).to_numpy()
        ci = stats.bootstrap(
            (outcome,), np.mean, method="percentile", n_resamples=RESAMPLES, random_state=0
        ).confidence_interval
        out.append((other, outcome.mean(), ci.low, ci.high))
    return pd.DataFrame(out, columns=["a", "value", "ci_low", "ci_high"])


def main() -> None:
    df = frame()
    print(f"{len(df):,} rows, {SYSTEMS} systems, {QUESTIONS} questions")
    ref, t_ref = timed(lambda: pandas_mean(df))
    ours, t_ours = timed(lambda: mean_score(df, by="system", case="question_id", bimodality=False))
    assert np.allclose(ours["ci_low"], ref["ci_low"].to_numpy()) and np.allclose(
        ours["value"], ref["mean"]
    )
    _, t_full = timed(lambda: mean_score(df, by="system", case="question_id"))
    print(
        f"mean_score  pandas+scipy {t_ref:.3f} s (baseline); jevalkit by default (bimodality "
        f"check on) {t_full:.3f} s = {t_full / t_ref:.1f}x (target 5x, issue 23); with "
        f"bimodality=False {t_ours:.3f} s = {t_ours / t_ref:.1f}x"
    )
    ref, t_ref = timed(lambda: pandas_pass(df))
    ours, t_ours = timed(lambda: pass_rate(df, by="system", case="question_id"))
    assert np.allclose(ours["ci_low"], ref["ci_low"].to_numpy())
    print(
        f"pass_rate   pandas+statsmodels {t_ref:.3f} s (baseline); jevalkit {t_ours:.3f} s = "
        f"{t_ours / t_ref:.1f}x (target 5x)"
    )
    base = "model-00"
    ref, t_ref = timed(lambda: pandas_win(df, base), repeat=1)
    ours, t_ours = timed(
        lambda: win_rate(df, baseline=base, case="question_id", n_resamples=RESAMPLES), repeat=1
    )
    assert np.allclose(ours["value"], ref["value"]) and np.allclose(
        ours["ci_low"], ref["ci_low"], atol=0.02
    )
    print(
        f"win_rate    pandas+scipy loop {t_ref:.2f} s (baseline); jevalkit, one call for "
        f"{SYSTEMS - 1} systems {t_ours:.2f} s = {t_ours / t_ref:.1f}x (target 5x)"
    )


if __name__ == "__main__":
    main()
