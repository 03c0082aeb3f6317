"""Simultaneous rank intervals (issue 36 item 6): coverage on designs they are easily wrong on.

Each design draws a leaderboard many times and counts the boards on which no pair of systems
was separated the wrong way (a tied pair told apart, or an order reversed): the familywise
event the rank intervals promise at 95%. Printed: nominal vs observed with a Wilson Monte
Carlo interval, and the mean rank-interval length.

Designs: small tied boards (10 systems, 30 or 50 cases; continuous scores sharing a case effect
with correlation 0.9, or independent), few systems and cases, 0/1 verdicts, extreme scores near
1, one system far from the rest, and a spread board of 300 cases (where 97-100% is expected);
and boards judged by 2 or 4 judges who each favour some systems (a fresh system x judge effect
per board), ranked with ``generalize=["case", "judge"]`` or over cases only.

Run: ``PYTHONPATH=. python benchmarks/bench_rank_sets.py [--sims 200]`` (``--smoke``: 2 boards of each
design, 100 resamples).

Measured on the busy machine (200 boards each, 500 resamples unless said; the max-t over
plug-in SEs before issue 36 -> the bootstrap-t after):

    10 tied, 30 cases, correlated 0.9     95.5% -> 98.5% (96.2% [94.1, 97.6] of 500 boards)
    10 tied, 30 cases, independent        93.0% -> 97.0%
    10 tied, 50 cases, correlated 0.9     91.0% -> 91.5% (93.8% [91.3, 95.6] of 500 boards;
                                                          94.5% [91.8, 96.3] of 400 at 2000)
    3 tied, 10 cases, correlated 0.5      92.0% -> 94.0%
    10 tied, 30 cases, 0/1 verdicts       95.5% -> 97.0%
    10 tied near 1, 30 cases, 0/1         100% -> 100%
    9 tied + 1 far ahead, 30 cases        94.5% -> 97.5%
    10 spread, 300 cases, 0/1             100% -> 100% (mean length 8.2 of 10 both)
    6 tied x 4 judges, generalize case+judge      98.5%  (cases only: 0.5%)
    6 tied x 2 judges, generalize case+judge      100%
    6 tied x 4 judges, no judge effect, case+judge 100%
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import stats as sps
from sizes import parser, size
from statsmodels.stats.proportion import proportion_confint

from jevalkit.metrics import leaderboard

DESIGNS = {
    # name: (means on the probit scale, cases, case-effect correlation, 0/1 verdicts)
    "10 tied, 30 cases, correlated 0.9": (np.zeros(10), 30, 0.9, False),
    "10 tied, 30 cases, independent": (np.zeros(10), 30, 0.0, False),
    "10 tied, 50 cases, correlated 0.9": (np.zeros(10), 50, 0.9, False),
    "3 tied, 10 cases, correlated 0.5": (np.zeros(3), 10, 0.5, False),
    "10 tied, 30 cases, 0/1 verdicts": (np.zeros(10), 30, 0.5, True),
    "10 tied near 1 (0.97), 30 cases, 0/1": (np.full(10, 1.9), 30, 0.3, True),
    "9 tied + 1 far ahead, 30 cases": (np.r_[np.zeros(9), 1.5], 30, 0.5, False),
    "10 spread, 300 cases, 0/1": (np.linspace(-0.25, 0.25, 10), 300, 0.5, True),
}


def board_frame(mu: np.ndarray, n_cases: int, rho: float, binary: bool, rng) -> pd.DataFrame:
    case = rng.normal(0, np.sqrt(rho), n_cases)
    latent = mu[:, None] + case[None, :] + rng.normal(0, np.sqrt(1 - rho), (mu.size, n_cases))
    score = sps.norm.cdf(latent)
    if binary:
        score = (rng.random(score.shape) < sps.norm.cdf(mu[:, None] + case[None, :])).astype(float)
    s, c = np.indices(score.shape).reshape(2, -1)
    return pd.DataFrame({"system": [f"s{i:02d}" for i in s], "case_id": c, "score": score.ravel()})


def true_means(mu: np.ndarray, rho: float, binary: bool) -> np.ndarray:
    # E[Phi(mu + c + e)] = Phi(mu / sqrt(2)) for c + e ~ N(0, 1): the same map for both kinds
    return sps.norm.cdf(mu / np.sqrt(2))


def summary(name: str, hits: list[bool], lengths: list[float]) -> dict:
    """Observed coverage with its Wilson Monte Carlo interval, and the mean interval length."""
    k, n_sims = int(np.sum(hits)), len(hits)
    low, high = proportion_confint(k, n_sims, method="wilson")
    return {
        "design": name,
        "nominal": 0.95,
        "observed": k / n_sims,
        "mc_low": low,
        "mc_high": high,
        "mean_length": float(np.mean(lengths)),
        "boards": n_sims,
    }


def coverage(name: str, n_sims: int, n_resamples: int) -> dict:
    mu, n_cases, rho, binary = DESIGNS[name]
    truth = dict(
        zip([f"s{i:02d}" for i in range(mu.size)], true_means(mu, rho, binary), strict=True)
    )
    hits, lengths = [], []
    for seed in range(n_sims):
        rng = np.random.default_rng(seed)
        df = board_frame(mu, n_cases, rho, binary, rng)
        board = leaderboard(df, case="case_id", n_resamples=n_resamples, seed=seed).table()
        # a wrong separation: a system placed surely below one that is not truly better
        ok = True
        for r in board.itertuples():
            better_than_r = sum(truth[o] > truth[r.system] for o in truth)
            not_worse = sum(truth[o] >= truth[r.system] for o in truth)
            ok &= r.rank_low <= better_than_r + 1 and r.rank_high >= not_worse
        hits.append(ok)
        lengths.append((board["rank_high"] - board["rank_low"] + 1).mean())
    return summary(name, hits, lengths)


FACET_DESIGNS = {
    # name: (systems, cases, judges, SD of the system x judge effect, generalize)
    "6 tied, 40 cases x 4 judges, generalize case+judge": (6, 40, 4, 0.3, ["case", "judge"]),
    "6 tied, 40 cases x 2 judges, generalize case+judge": (6, 40, 2, 0.3, ["case", "judge"]),
    "6 tied, 40 cases x 4 judges, cases only": (6, 40, 4, 0.3, None),
    "6 tied, 40 cases x 4 judges, no judge effect, case+judge": (6, 40, 4, 0.0, ["case", "judge"]),
}


def judged_frame(n_systems, n_cases, n_judges, sd, rng) -> pd.DataFrame:
    favour = rng.normal(0, sd, (n_systems, n_judges))  # a fresh draw of judges each board
    case = rng.normal(0, 0.5, n_cases)
    latent = (
        case[None, :, None]
        + favour[:, None, :]
        + rng.normal(0, 0.3, (n_systems, n_cases, n_judges))
    )
    s, c, j = np.indices(latent.shape).reshape(3, -1)
    return pd.DataFrame(
        {
            "system": [f"s{i:02d}" for i in s],
            "case_id": c,
            "judge": [f"j{i}" for i in j],
            "repeat": j,
            "score": sps.norm.cdf(latent).ravel(),
        }
    )


def facet_coverage(name: str, n_sims: int, n_resamples: int) -> dict:
    n_systems, n_cases, n_judges, sd, generalize = FACET_DESIGNS[name]
    hits, lengths = [], []
    for seed in range(n_sims):
        df = judged_frame(n_systems, n_cases, n_judges, sd, np.random.default_rng(seed))
        board = leaderboard(
            df, case="case_id", n_resamples=n_resamples, seed=seed, generalize=generalize
        ).table()
        hits.append(
            bool((board["rank_low"] == 1).all() and (board["rank_high"] == n_systems).all())
        )
        lengths.append((board["rank_high"] - board["rank_low"] + 1).mean())
    return summary(name, hits, lengths)


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--sims", type=int, default=size(200, 2))
    options.add_argument("--resamples", type=int, default=size(500, 100))
    options.add_argument("--only", nargs="*", default=None)
    args = options.parse_args()
    rows = []
    designs = [(n, coverage) for n in DESIGNS] + [(n, facet_coverage) for n in FACET_DESIGNS]
    for name, simulate in designs:
        if args.only and not any(o in name for o in args.only):
            continue
        started = time.perf_counter()
        rows.append(simulate(name, args.sims, args.resamples))
        r = rows[-1]
        print(
            f"{r['design']:<40} nominal {r['nominal']:.0%}  observed {r['observed']:.1%} "
            f"[{r['mc_low']:.1%}, {r['mc_high']:.1%}]  mean length {r['mean_length']:.1f}  "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
