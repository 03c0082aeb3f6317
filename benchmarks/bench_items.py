"""Items and leaderboards (issue 30): speed against named baselines, and the statistics checked
by simulation.

1. Speed, 60 systems x 1,000 binary items (simulated 2PL):
   - ``items.analysis`` against the pandas + pingouin + scipy a researcher would write (pivot,
     ``pingouin.cronbach_alpha``, and per item ``scipy.stats.pearsonr`` against the rest score and
     alpha of the reduced matrix by ``pingouin.cronbach_alpha``);
   - ``items.fit_irt(model="2pl")`` against ``girth.twopl_mml`` (the reference implementation) on
     the same matrix. Target: each within 10 s on this machine; the ratios are printed.
   Both baselines spend their time in a per-item loop (about 3 minutes each at full size), so
   they are timed on the first ``BASELINE_ITEMS`` items and their cost scaled up by the item
   count; jevalkit is timed on all of them.
2. Leave-systems-out on the same data: each system held out, the 2PL fitted on the other 59,
   k = 25, 50, 100 anchors drawn by each method, the held-out full score estimated with a 95%
   interval: mean absolute error and coverage (target 93-97%).
3. Simultaneous rank intervals: share of simulated leaderboards (10 systems, 300 cases) whose
   intervals hold every true rank at once (target >= 95%), with the mean interval length.
4. 2PL parameter recovery: RMSE of discriminations and difficulties against the truth.

Measured here (2 shared cores, 1 Dec 2026): item analysis 0.53 s (pandas + pingouin + scipy,
scaled: 1,681 s); 2PL fit 4.9 s under load, 1.5 s idle (girth, scaled: 259 s); recovery RMSE
0.078 (a) and 0.084 (b); rank intervals (step-down) covered 99.5% of 200 leaderboards, mean
length 8.2 of 10 ranks (adjacent gaps below one SE of a difference); leave-systems-out
MAE 0.065-0.077 at k = 25, 0.045-0.050 at 50, 0.027-0.034 at 100, coverage 93-100% (60 held
out). The model-assisted estimate is no better than the plain stratified mean on binary items:
with k items the error is bounded by what k Bernoulli outcomes say about a system.

5. Active evaluation (issue 40), ``--active [HELD REPS]``: leave-systems-out on two benchmarks of
   60 systems x 1,000 items, each held-out system scored at k = 25, 50, 100 by random cases
   (sample mean), stratified IRT anchors (model-assisted: the baseline), active plans of 1 and
   8 waves (model-assisted; HT; the 8-wave plan with select()'s defaults is the runner's path,
   select() called once per wave on the answers so far), an 8-wave plan with a 0.4 floor, and
   an 8-wave plan on a shuffled (wrong) item model: MAE with its Monte Carlo SE, its ratio to
   the stratified arm on the same held-out systems and draws (paired, delta-method SE),
   coverage with its Wilson interval, mean half-width and its ratio to the stratified arm, the
   requests saved for the same half-width (the base's half-width over k interpolated on
   log-log axes), and the allocation bound: the error ratio no inclusion probabilities can
   beat even with the true item parameters and abilities known (mean per-case SD over its
   root mean square).
   Measured (``--active 8 5``: 8 held out x 5 draws = 40 intervals a cell, about 8 and 11
   minutes on the 2 shared cores, 2 Dec 2026), 8-wave plan against stratified IRT anchors:
   - simulate_2pl (a ~ 1, b ~ N(0, 1)): allocation bound 0.978, so a 20% lower error is out of
     reach of any design; half-width ratio 0.96/0.96/0.99 at k = 25/50/100 (3-7% fewer
     requests for the same half-width); MAE ratio 1.01/1.43/1.17 (SE 0.21/0.24/0.21), the
     1-wave plan 0.87/0.99/0.88 (SE 0.17/0.17/0.12): within two Monte Carlo SEs of 1 (the
     bound allows a gain of 2% at most). Coverage 88-93% (8 waves), 95-100% (1 wave),
     stratified 93-98%.
   - sharp 2PL (a ~ 2, b ~ N(0, 2)): allocation bound 0.809; half-width ratio 0.79/0.90/0.89
     (15-31% fewer requests than stratified anchors, 65-67% fewer than random cases for the
     same half-width); MAE ratio 1.05/1.05/1.00 (SE 0.19/0.18/0.13), 1 wave 1.13/0.95/0.86.
     Coverage 90-93% (8 waves; Wilson intervals 77-97%), stratified 95-100%. An independent
     check (6 other held-out systems x 8 draws, k = 25 and 50) gave 95% and 93% (floor 0.2),
     93% and 95% (floor 0.4), stratified 88% and 98%.
   - the floor's mixing weight: 0.4 against 0.2 changed neither the half-width (within 4%) nor
     the coverage measurably; in a side run (6 held out x 4 draws) 0.05 widened the interval
     at k = 25 on the sharp benchmark (0.123 against 0.102) and 1 (uniform draws) lost the
     gain (0.133). The default stays 0.2.
   - the shuffled model kept coverage (90-98%), its intervals 1.1-2.2 times the stratified
     ones; the Horvitz-Thompson form (no predictions) is 1.05-2.35 times as wide.
   Tried and not kept (not more than about 1% narrower): power tuning (PPI++'s lambda fitted
   to the draws, or from the draws before each one), inverse-variance or equal weights over
   the draws, 16 waves. The issue's target (MAE 20% below stratified anchors at k = 50 and
   100) is not met: on simulate_2pl it is beyond the allocation bound, on the sharp benchmark
   at it, and 40 intervals a cell resolve an MAE ratio only to about +-0.15.

6. Anchor intervals (issue 36 item 4), ``--anchors [HELD DRAWS]``: leave-systems-out, each of
   the first HELD systems held out, the 2PL fitted on the rest, DRAWS anchor draws per k for
   ``sample`` on stratified and on random anchors and ``irt`` on irt anchors: coverage with its
   Wilson Monte Carlo interval, the share of zero-width intervals and of irt estimates outside
   [0, 1] (clipped, said in ``method``), on simulate_2pl (60 x 1,000), an AlpacaEval-like skewed
   2PL (60 x 800, most systems losing most items) and data/examples/benchmark.jsonl (24 x 80,
   k = 20, 40). Measured (16 held out x 10 draws = 160 intervals a cell, 2 Dec 2026; the
   Wilson interval at the Korn-Graubard effective n on pass/fail anchors):
   - sample: 94.4-97.5% on simulate_2pl, 93.8-98.8% on the skewed one (random anchors at k = 25
     98.8%), 95.0-99.4% on benchmark.jsonl (stratified at k = 20 of 80 items 99.4%); no zero-
     width interval. The t interval it replaced: 92-94% on the skewed one (10 x 10 draws), 78%
     on AlpacaEval in the issue.
   - irt (12 held out x 10 draws, after its interval took the same form): 95.0-97.5% on
     simulate_2pl, 94.2-98.3% on the skewed one, 95.8-97.5% on a benchmark of mean score 0.10
     (there the t interval on the residuals had covered 89.2-91.7%); clipped in 3.3% of draws at
     k = 25 on the skewed one, 0.8% on the mean-0.10 one; no zero-width interval.

7. Anytime-valid active intervals (issue 40 item 2), ``--anytime [HELD REPS]``: the runner's
   8-wave plan of k = 100, and of k = 12 (the README's example), per held-out system and
   draw, right and shuffled item models; the
   interval ``estimate(..., anytime=True)`` at every 10th draw and every wave's end (what a run
   stopped there reports): the share of plans it held the truth at every checked draw at once,
   at every wave's end, at k; for targets 0.15-0.06 the coverage at the stopping time "first
   wave's end at or below the target" and the draws it took; the baseline is the fixed t
   interval at k (coverage, half-width), in the same run. Measured (``--anytime 25 8``: 200
   plans a cell, 3 Dec 2026), with the small-sample guards (the variance at least the
   model's for the draws, the radius stretched by t over the normal quantile):
   - simulate_2pl, k = 100: every checked draw 98.0% [95.0, 99.2] / 98.5% (right / shuffled
     model), at k 99.0% / 100%; half-width at k 0.128 against the t interval's 0.082 (0.144 /
     0.093 shuffled); the t interval at k covered 93.0% / 98.0%. k = 12: every draw 100% /
     97.5% [94.3, 98.9], half-width at k 0.388 against 0.275.
   - sharp 2PL, k = 100: every checked draw 99.0% / 99.5%, at k 100%; half-width 0.081
     against 0.049; stops at 0.15 / 0.12 / 0.10 after 43 / 59 / 75 draws on average, covering
     100% at the stop. k = 12: every draw 99.5% / 95.5% [91.7, 97.6], half-width 0.286
     against 0.165.
   Without the guards (the same cells, before): k = 100 every checked draw 96.5-99.5%,
   half-width 0.125 / 0.075, stops after 38 / 51 / 65 draws; but k = 12 (180 plans a cell,
   another set of draws) every wave's end 90.6% / 82.8% on simulate_2pl and 93.3% / 88.3% on
   the sharp benchmark, and the runner's stop at a target of 0.2 covered 88.9% with the
   shuffled model on simulate_2pl: the variance estimated from a few draws is small exactly
   when no rare surprise has been drawn yet.

8. Active estimates that cover (issue 52), on real data and for a system the model has not
   seen. ``--alpaca [PATH] [HELD REPS]``: the audit's leave-systems-out on AlpacaEval 2.0 (the
   systems x instructions table bundled in data/examples/alpaca_eval_wins.csv.gz, columns
   system, case_id, preference, win = preference > 1.5 against gpt4_1106_preview, under its own
   licence CC BY-NC 4.0, see data/examples/README.md; or any such table by PATH), each of
   HELD systems spread over the win-rate range held out (the 2PL fitted on the others), REPS
   seeded draws per k and arm: the 8-wave plan (the runner's path), stratified anchors with
   ``sample``, irt anchors with ``irt``, uniform random cases; coverage with its Wilson Monte
   Carlo interval, mean half-width, MAE, bias, the share warned beyond the fitted systems'
   range, and the plan's predicted design effect beside the measured one. ``--far-outside
   [BENCHMARKS REPS]``: a new system of ability 3.5 on a sharp 200-item benchmark (60 past
   systems of ability N(0, 1)), the 8-wave plan (model-assisted and HT) and uniform random
   cases at k = 10, 25, 50, 100. ``--requests``: ``plan.requests()`` before a run, on each
   benchmark. Measured (5 Dec 2026; 2 shared cores):
   - AlpacaEval, ``--alpaca TABLE 58 3`` (52 held out x 3 = 156 intervals a cell, 15 min):
     the plan covered 98.7 / 96.8 / 98.1% at k = 25 / 50 / 100 (Monte Carlo 95.4-99.6,
     92.7-98.6, 94.5-99.3), half-widths 0.075 / 0.053 / 0.036, MAE 0.025 / 0.019 / 0.013,
     warned in 5-7% of plans (the reference system, NullModel, FuseChat-Gemma-2-9B and single
     plans of a few low systems); stratified anchors 98.7 / 95.5 / 96.2%, 0.114 / 0.066 /
     0.042; irt anchors 97.4 / 96.2 / 94.2%, 0.110 / 0.069 / 0.044; uniform random cases
     92.9 / 97.4 / 93.6%, 0.115 / 0.073 / 0.049. Predicted design effect 0.44 / 0.43 / 0.42,
     measured (squared half-width ratio against uniform random cases) 0.42 / 0.53 / 0.56. Before issue 52 (the audit, 12 held out x
     3): 83 / 86 / 85% at half-widths 0.075 / 0.051 / 0.032.
   - far outside, ``--far-outside 20 10`` (200 plans a cell, 14 min): the plan covered 99.5 /
     96.5 / 99.0 / 95.5% at k = 10 / 25 / 50 / 100, warned in 64 / 91 / 95.5 / 98.5%,
     half-widths 0.188 / 0.113 / 0.069 / 0.036 against uniform random cases' 0.196 / 0.101 /
     0.061 / 0.033 (94-96.5%); before: 83 / 82 / 77% at k = 10 / 25 / 50 (the audit).
   - ``--requests`` (k = 50, the model's predictions taken as exact): the plan needs 0.77 of
     uniform random cases' requests on simulate_2pl, 0.28 on the sharp benchmark, 0.50 on the
     AlpacaEval-like one, 0.67 on data/examples/benchmark.jsonl (0.43 on AlpacaEval).
   - ``--active-coverage 20 10`` after the change: simulate_2pl 97.0 / 94.5 / 93.5% (shuffled
     model 95.0 / 97.0 / 98.0%), half-widths 0.188 / 0.125 / 0.084; sharp 97.5 / 97.0 / 96.5%
     (shuffled 96.0 / 94.5 / 97.0%), 0.119 / 0.080 / 0.053.
   - ``--anchors 12 10`` after the change: irt 95.0-97.5% on simulate_2pl, 95.0-98.3% on the
     skewed one, 95.0-99.2% on data/examples/benchmark.jsonl.

Run: ``.venv/bin/python benchmarks/bench_items.py [--quick] [--active [HELD REPS]] [--anchors [HELD DRAWS]] [--anytime [HELD REPS]] [--alpaca [PATH] [HELD REPS]] [--far-outside [BENCHMARKS REPS]] [--requests]``
(``--smoke``: every part, the active-coverage and anytime ones too, once on 12 systems x 80
items, one held-out system and one draw, k = 10 and 20).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import girth
import numpy as np
import pandas as pd
import pingouin
from scipy import stats as sps
from scipy.special import expit
from sizes import SMOKE, size
from statsmodels.stats.proportion import proportion_confint

from jevalkit.items import (
    analysis,
    estimate,
    fit_irt,
    leave_systems_out,
    select,
    simulate_2pl,
)
from jevalkit.metrics import leaderboard

QUICK = "--quick" in sys.argv
SYSTEMS, ITEMS = size((20, 200) if QUICK else (60, 1000), (12, 80))
BASELINE_ITEMS = size(50 if QUICK else 100, 10)
# the benchmarks of the anchor and active parts, and the anchor counts they are drawn at
BIG, SKEWED = size((60, 1000), (12, 80)), size((60, 800), (12, 80))
KS = size((25, 50, 100), (10, 20))
RECOVERY_SYSTEMS = size(2000, 200)


def baseline_analysis(df: pd.DataFrame) -> None:
    wide = df.pivot_table(index="system", columns="case_id", values="score", aggfunc="mean")
    pingouin.cronbach_alpha(wide)
    x = wide.to_numpy()
    total = x.sum(axis=1)
    for j in range(BASELINE_ITEMS):
        if x[:, j].std() > 0:
            sps.pearsonr(x[:, j], total - x[:, j])
        pingouin.cronbach_alpha(wide.drop(columns=wide.columns[j]))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def speed(df: pd.DataFrame) -> None:
    ours = timed(lambda: analysis(df, case="case_id"))
    base = timed(lambda: baseline_analysis(df)) * ITEMS / BASELINE_ITEMS
    print(
        f"item analysis, {SYSTEMS} x {ITEMS}: {ours:.2f} s; pandas+pingouin+scipy {base:.2f} s (scaled from {BASELINE_ITEMS} items) "
        f"(ratio {base / ours:.1f}x faster){'' if ours < 10 else '  OVER the 10 s target'}"
    )
    matrix = df.pivot(index="case_id", columns="system", values="score").to_numpy().astype(int)
    ours = timed(lambda: fit_irt(df, case="case_id"))
    base = timed(lambda: girth.twopl_mml(matrix[:BASELINE_ITEMS])) * ITEMS / BASELINE_ITEMS
    print(
        f"2PL fit, {SYSTEMS} x {ITEMS}: {ours:.2f} s; girth.twopl_mml {base:.2f} s (scaled from {BASELINE_ITEMS} items) "
        f"(ratio {base / ours:.2f}x){'' if ours < 10 else '  OVER the 10 s target'}"
    )


def validation(df: pd.DataFrame) -> None:
    ks = size([25, 50] if QUICK else [25, 50, 100], [10, 20])
    start = time.perf_counter()
    table = leave_systems_out(df, ks, case="case_id", seed=0)
    print(
        f"leave-systems-out ({SYSTEMS} systems held out in turn, {time.perf_counter() - start:.0f} s):"
    )
    print(table.to_string(index=False, float_format="{:.3f}".format))


def rank_coverage(n_sims: int) -> None:
    hits, lengths = [], []
    for seed in range(n_sims):
        rng = np.random.default_rng(seed)
        mu = np.linspace(0.4, 0.6, 10)
        item = rng.normal(0, 1, 300)
        p = 1 / (1 + np.exp(-(np.log(mu / (1 - mu))[:, None] + item)))
        y = (rng.random(p.shape) < p).astype(float)
        s, j = np.indices(y.shape).reshape(2, -1)
        truth = p.mean(axis=1)
        ranks = {f"s{i}": int((truth > truth[i]).sum()) + 1 for i in range(10)}
        df = pd.DataFrame({"system": [f"s{v}" for v in s], "case_id": j, "score": y.ravel()})
        board = leaderboard(df, case="case_id", n_resamples=500, seed=seed).table()
        hits.append(all(r.rank_low <= ranks[r.system] <= r.rank_high for r in board.itertuples()))
        lengths.append((board["rank_high"] - board["rank_low"] + 1).mean())
    print(
        f"rank intervals: simultaneous coverage {np.mean(hits):.1%} over {n_sims} leaderboards "
        f"(nominal 95%), mean interval length {np.mean(lengths):.1f} of 10 ranks"
    )


def recovery() -> None:
    sim = simulate_2pl(n_systems=RECOVERY_SYSTEMS, n_items=30, seed=5)
    fit = fit_irt(sim, case="case_id")
    a, b = sim.items["discrimination"].to_numpy(), sim.items["difficulty"].to_numpy()
    print(
        f"2PL recovery, {RECOVERY_SYSTEMS:,} systems x 30 items: RMSE discrimination "
        f"{np.sqrt(np.mean((fit.items['discrimination'] - a) ** 2)):.3f}, difficulty "
        f"{np.sqrt(np.mean((fit.items['difficulty'] - b) ** 2)):.3f}"
    )


def drawn_2pl(
    n_systems, n_items, seed, *, ability=(0.0, 1.0), difficulty=(0.0, 2.0), slope=(0.7, 0.3)
):
    """Pass/fail results of a 2PL with abilities ~ N(*ability), difficulties ~ N(*difficulty),
    discriminations ~ lognormal(*slope)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(*ability, n_systems)
    b = rng.normal(*difficulty, n_items)
    a = rng.lognormal(*slope, n_items)
    y = rng.random((n_systems, n_items)) < expit(a * (theta[:, None] - b))
    s, j = np.indices(y.shape).reshape(2, -1)
    df = pd.DataFrame(
        {
            "system": [f"sys{v:02d}" for v in s],
            "case_id": [f"q{v:04d}" for v in j],
            "score": y.ravel().astype(float),
        }
    )
    df.attrs.update(ability=theta.tolist(), difficulty=b.tolist(), discrimination=a.tolist())
    return df


def allocation_bound(a, b, theta) -> float:
    """The most any choice of inclusion probabilities can gain over uniform (or difficulty-
    stratified) draws for a model-assisted estimate, with the model exactly right: the true
    item parameters and the system's true ability known. The residual y - p of a case has SD
    sd = sqrt(p (1 - p)); uniform draws give an SE proportional to sqrt(mean sd^2), the Neyman
    allocation (probability proportional to sd) one proportional to mean sd. Returns their
    ratio averaged over the systems: the error ratio no active plan can beat on this benchmark.
    ``a``, ``b``: the items' true discriminations and difficulties; ``theta``: the abilities.
    """
    a, b, theta = (np.asarray(x, dtype=float) for x in (a, b, theta))
    p = expit(a * (theta[:, None] - b))
    sd = np.sqrt(p * (1 - p))
    return float(np.mean(sd.mean(axis=1) / np.sqrt((sd**2).mean(axis=1))))


def sharp_2pl(n_systems: int, n_items: int, seed: int) -> pd.DataFrame:
    """A benchmark where active evaluation can pay: strongly discriminating items (a ~ 2) spread
    over a wide range of difficulties (b ~ N(0, 2)), so most cases are nearly certain for a
    given system and the uncertain ones are few."""
    return drawn_2pl(n_systems, n_items, seed)


def shuffled(fit):
    """The same fit with its item parameters shuffled across items: a wrong item model."""
    rng = np.random.default_rng(0)
    items = fit.items.copy()
    order = rng.permutation(len(items))
    for column in ("difficulty", "discrimination", "intercept", "mean_score", "status"):
        items[column] = items[column].to_numpy()[order]
    return dataclasses.replace(fit, items=items)


def complete_active(fit, k, new, **options):
    """An active plan run wave by wave, each wave seeing the answers to the earlier draws."""
    plan = select(fit, k, method="active", **options)
    while not plan.complete:
        answered = new[new["case_id"].isin(plan.cases)]
        plan = select(fit, k, method="active", new_results=answered, **options)
    return plan


def skewed_2pl(n_systems: int, n_items: int, seed: int) -> pd.DataFrame:
    """An AlpacaEval-like benchmark (pass/fail against a strong baseline): most systems lose
    most items (abilities ~ N(-1, 1), difficulties ~ N(0.3, 1.5), discriminations ~ lognormal(0.3,
    0.4)), so many strata of anchors show no spread and the irt estimate can leave [0, 1]."""
    return drawn_2pl(
        n_systems, n_items, seed, ability=(-1.0, 1.0), difficulty=(0.3, 1.5), slope=(0.3, 0.4)
    )


def benchmark_file() -> pd.DataFrame:
    """The bundled example benchmark (data/examples/benchmark.jsonl: 24 systems x 80 items x 2
    repeats, planted dead, mis-keyed and flaky items): each system's repeat 0 as its scores."""
    path = Path(__file__).resolve().parents[1] / "data" / "examples" / "benchmark.jsonl"
    df = pd.read_json(path, lines=True)
    df = df[(df["repeat"] == 0) & df["score"].notna()]
    return df.rename(columns={"model": "system"})[["system", "case_id", "score"]]


ANCHOR_ARMS = {
    "sample, stratified anchors": ("stratified", "sample"),
    "sample, random anchors": ("random", "sample"),
    "irt, irt anchors": ("irt", "irt"),
}


def anchor_coverage(df: pd.DataFrame, n_held: int, draws: int, ks) -> pd.DataFrame:
    """Leave-systems-out for issue 36 item 4: each of the first ``n_held`` systems held out,
    the 2PL fitted on the others, ``draws`` anchor draws per k and arm; the share of intervals
    holding the true full score, of zero-width intervals, and of estimates clipped into [0, 1]
    (the irt estimate's unclipped value outside it)."""
    df = df.copy()
    df.attrs = {}
    complete = df.groupby("system")["case_id"].nunique().eq(df["case_id"].nunique())
    names = sorted(complete[complete].index)[:n_held]
    rows = []
    for i, held in enumerate(names):
        new = df[df["system"] == held]
        truth = new["score"].mean()
        fit = fit_irt(df[df["system"] != held], case="case_id")
        for k in ks:
            for d in range(draws):
                for arm, (chosen, how) in ANCHOR_ARMS.items():
                    anchors = select(fit, k, method=chosen, seed=1000 * d + i)
                    e = estimate(fit, anchors, new, method=how).iloc[0]
                    rows.append(
                        {
                            "k": k,
                            "arm": arm,
                            "covered": e["ci_low"] <= truth <= e["ci_high"],
                            "zero_width": not e["ci_high"] > e["ci_low"],
                            # the irt estimate left [0, 1]: the stratified mean instead
                            "out_of_range": "left [0, 1]" in e["method"],
                            "error": abs(e["value"] - truth),
                            "half_width": (e["ci_high"] - e["ci_low"]) / 2,
                        }
                    )
    out = []
    for (k, arm), g in pd.DataFrame(rows).groupby(["k", "arm"], sort=False):
        low, high = proportion_confint(int(g["covered"].sum()), len(g), method="wilson")
        out.append(
            {
                "k": k,
                "arm": arm,
                "n": len(g),
                "nominal": 0.95,
                "coverage": g["covered"].mean(),
                "mc_low": low,
                "mc_high": high,
                "zero_width": g["zero_width"].mean(),
                "out_of_range": g["out_of_range"].mean(),
                "mae": g["error"].mean(),
                "half_width": g["half_width"].mean(),
            }
        )
    return pd.DataFrame(out)


def anchors(n_held: int, draws: int) -> None:
    for name, data, ks in (
        (
            f"simulate_2pl ({BIG[0]} systems x {BIG[1]:,} items)",
            simulate_2pl(n_systems=BIG[0], n_items=BIG[1], seed=0).rows,
            KS,
        ),
        (
            f"skewed 2PL, AlpacaEval-like ({SKEWED[0]} x {SKEWED[1]})",
            skewed_2pl(*SKEWED, seed=3),
            KS,
        ),
        ("data/examples/benchmark.jsonl (24 x 80)", benchmark_file(), size((20, 40), (20,))),
    ):
        start = time.perf_counter()
        table = anchor_coverage(data, n_held, draws, ks)
        print(
            f"anchor coverage, {name}: {n_held} held out x {draws} draws "
            f"({time.perf_counter() - start:.0f} s); Wilson Monte Carlo interval mc_low-mc_high"
        )
        print(table.to_string(index=False, float_format="{:.3f}".format))


ACTIVE_ARMS = {
    "random (sample mean)": None,
    "stratified irt (model-assisted)": None,
    "active, 1 wave": {"waves": 1},
    "active, 8 waves": {"waves": 8},  # the runner's path: its defaults, select() per wave
    "active, 8 waves, floor 0.4": {"waves": 8, "floor": 0.4},
    "active HT, 8 waves": {"waves": 8},
    "active, 8 waves, shuffled model": {"waves": 8},
}


def active_arms(df: pd.DataFrame, n_held: int, reps: int, ks, arms=ACTIVE_ARMS) -> pd.DataFrame:
    """Leave-systems-out for every arm of ``arms`` (default ACTIVE_ARMS): one row per held-out
    system x k x repeat of the design x arm, with the error, coverage and half-width."""
    names = sorted(df["system"].unique())
    rows = []
    for i, held in enumerate(names[:n_held]):
        new = df[df["system"] == held]
        fit = fit_irt(df[df["system"] != held], case="case_id")
        wrong = shuffled(fit)
        truth = new["score"].mean()
        for k in ks:
            for rep in range(reps):
                seed = 1000 * rep + i
                for arm, options in arms.items():
                    if arm.startswith("random"):
                        plan, how, on = select(fit, k, method="random", seed=seed), "sample", fit
                    elif arm.startswith("stratified"):
                        plan, how, on = select(fit, k, method="irt", seed=seed), "irt", fit
                    else:
                        on = wrong if "shuffled" in arm else fit
                        plan = complete_active(on, k, new, seed=seed, **options)
                        how = "ht" if " HT" in arm else "active"
                    e = estimate(on, plan, new, method=how).iloc[0]
                    rows.append(
                        {
                            "arm": arm,
                            "k": k,
                            "draw": (i, rep),
                            "error": abs(e["value"] - truth),
                            "covered": e["ci_low"] <= truth <= e["ci_high"],
                            "half_width": (e["ci_high"] - e["ci_low"]) / 2,
                            "design_effect": getattr(plan, "design_effect", np.nan),
                        }
                    )
    return pd.DataFrame(rows)


BASE_ARM = "stratified irt (model-assisted)"


def summarise_arms(rows: pd.DataFrame) -> pd.DataFrame:
    """Per k and arm: MAE with its Monte Carlo SE, the MAE's ratio to the stratified
    model-assisted arm on the same held-out systems and draws (paired; its delta-method SE),
    coverage with its Wilson interval, mean half-width and its ratio to the stratified arm."""
    out = []
    base = rows[rows["arm"] == BASE_ARM].set_index(["k", "draw"])
    for (k, arm), g in rows.groupby(["k", "arm"], sort=False):
        n = len(g)
        low, high = proportion_confint(int(g["covered"].sum()), n, method="wilson")
        paired = base.loc[[(k, d) for d in g["draw"]]]
        ratio = g["error"].mean() / paired["error"].mean()
        diff = g["error"].to_numpy() - ratio * paired["error"].to_numpy()
        out.append(
            {
                "k": k,
                "arm": arm,
                "n": n,
                "mae": g["error"].mean(),
                "mae_se": g["error"].std() / np.sqrt(n),
                "mae_ratio": ratio,
                "ratio_se": diff.std(ddof=1) / np.sqrt(n) / paired["error"].mean(),
                "coverage": g["covered"].mean(),
                "cov_low": low,
                "cov_high": high,
                "half_width": g["half_width"].mean(),
                "hw_ratio": g["half_width"].mean() / paired["half_width"].mean(),
            }
        )
    return pd.DataFrame(out)


def requests_saved(table: pd.DataFrame, arm: str, base: str) -> pd.DataFrame:
    """For each k of ``arm``, the k ``base`` needs for the same mean half-width (the base's
    half-widths over k interpolated on log-log axes), and the share of requests saved."""
    b = table[table["arm"] == base].sort_values("k")
    slope, intercept = np.polyfit(np.log(b["k"]), np.log(b["half_width"]), 1)
    out = []
    for r in table[table["arm"] == arm].sort_values("k").itertuples():
        k_base = float(np.exp((np.log(r.half_width) - intercept) / slope))
        out.append({"k": r.k, "base_k_same_half_width": k_base, "saved": 1 - r.k / k_base})
    return pd.DataFrame(out)


def active(n_held: int, reps: int) -> None:
    ks = list(KS)
    sim, sharp = simulate_2pl(n_systems=BIG[0], n_items=BIG[1], seed=0), sharp_2pl(*BIG, seed=1)
    for name, data, truth in (
        (
            f"simulated 2PL (simulate_2pl, {BIG[0]} systems x {BIG[1]:,} items)",
            sim.rows,
            (sim.items["discrimination"], sim.items["difficulty"], sim.systems["ability"]),
        ),
        (
            f"sharp 2PL (a ~ 2, b ~ N(0, 2), {BIG[0]} x {BIG[1]:,})",
            sharp,
            [sharp.attrs[k] for k in ("discrimination", "difficulty", "ability")],
        ),
    ):
        start = time.perf_counter()
        rows = active_arms(data, n_held, reps, ks)
        table = summarise_arms(rows)
        deff = rows.groupby("k")["design_effect"].mean()
        print(
            f"active evaluation, {name}: {n_held} systems held out x {reps} draws "
            f"({time.perf_counter() - start:.0f} s); predicted design effect of a one-wave plan "
            + ", ".join(f"{v:.2f} at k={k}" for k, v in deff.items())
            + f"; the best error ratio any inclusion probabilities allow (true parameters and "
            f"abilities known): {allocation_bound(*truth):.3f}"
        )
        print(table.to_string(index=False, float_format="{:.3f}".format))
        for arm in ("active, 1 wave", "active, 8 waves"):
            for base in ("stratified irt (model-assisted)", "random (sample mean)"):
                saved = requests_saved(table, arm, base)
                print(
                    f"  {arm} vs {base}: same half-width as the base at k = "
                    + ", ".join(
                        f"{r.base_k_same_half_width:.0f} for {r.k} ({r.saved:+.0%} requests saved)"
                        for r in saved.itertuples()
                    )
                )


SEQUENTIAL_ARMS = {
    a: ACTIVE_ARMS[a] for a in ("active, 8 waves", "active, 8 waves, shuffled model")
}
POISSON_ARMS = {"active, 8 Poisson waves": {"waves": 8, "design": "poisson"}}


def active_coverage(n_held: int, reps: int, arms=SEQUENTIAL_ARMS) -> None:
    """The runner's sequential path alone (8 waves, right and shuffled item models; or the
    Poisson design with ``--poisson``), enough intervals per cell to tell its coverage from
    95% to within about +-2%."""
    for name, data in (
        ("simulated 2PL", simulate_2pl(n_systems=BIG[0], n_items=BIG[1], seed=0).rows),
        ("sharp 2PL", sharp_2pl(*BIG, seed=1)),
    ):
        start = time.perf_counter()
        rows = active_arms(data, n_held, reps, list(KS), arms)
        out = []
        for (k, arm), g in rows.groupby(["k", "arm"], sort=False):
            low, high = proportion_confint(int(g["covered"].sum()), len(g), method="wilson")
            out.append(
                {
                    "k": k,
                    "arm": arm,
                    "n": len(g),
                    "coverage": g["covered"].mean(),
                    "mc_low": low,
                    "mc_high": high,
                    "half_width": g["half_width"].mean(),
                }
            )
        print(
            f"sequential active coverage, {name}: {n_held} held out x {reps} draws "
            f"({time.perf_counter() - start:.0f} s); nominal 0.95, Wilson Monte Carlo interval"
        )
        print(pd.DataFrame(out).to_string(index=False, float_format="{:.3f}".format))


ANYTIME_TARGETS = (0.15, 0.12, 0.10, 0.08, 0.06)
ANYTIME_KS = size((100, 12), (20, 12))


def anytime_rows(df: pd.DataFrame, n_held: int, reps: int, k: int = 100) -> pd.DataFrame:
    """The runner's 8-wave plan of k draws per held-out system and draw, right and shuffled item
    models; at every 10th draw and every wave's end, the anytime-valid interval
    (``estimate(..., anytime=True)`` on the plan's first t draws, what a run stopped there
    has), and the fixed t interval at k: one row per plan and checked prefix."""
    names = sorted(df["system"].unique())
    rows = []
    for i, held in enumerate(names[:n_held]):
        new = df[df["system"] == held]
        fit = fit_irt(df[df["system"] != held], case="case_id")
        truth = new["score"].mean()
        for arm, on in (("right model", fit), ("shuffled model", shuffled(fit))):
            for rep in range(reps):
                plan = complete_active(on, k, new, seed=1000 * rep + i, waves=8)
                drawn = new[new["case_id"].isin(plan.cases)]
                ends = set(np.cumsum(plan.waves["n_drawn"]).tolist())
                fixed = estimate(on, plan, drawn).iloc[0]
                for t in sorted(ends | set(range(10, k + 1, 10))):
                    part = dataclasses.replace(plan, draws=plan.draws.iloc[:t])
                    e = estimate(on, part, drawn, anytime=True).iloc[0]
                    rows.append(
                        {
                            "arm": arm,
                            "plan": (i, rep),
                            "t": t,
                            "wave_end": t in ends,
                            "covered": e["ci_low"] <= truth <= e["ci_high"],
                            "half_width": (e["ci_high"] - e["ci_low"]) / 2,
                            "fixed_covered": fixed["ci_low"] <= truth <= fixed["ci_high"],
                            "fixed_half_width": (fixed["ci_high"] - fixed["ci_low"]) / 2,
                        }
                    )
    return pd.DataFrame(rows)


def summarise_anytime(rows: pd.DataFrame, k: int = 100) -> pd.DataFrame:
    """Per arm: the share of plans whose interval held the truth at every checked draw (every
    10th and every wave's end) and at every wave's end (the runner looks only there), coverage
    at k, and for each target half-width H the coverage at the stopping time "the first wave's
    end with a half-width at most H, else k" and the draws it took; beside them the fixed t
    interval at k (coverage, half-width) as the baseline."""

    def wilson(hits) -> str:
        low, high = proportion_confint(int(np.sum(hits)), len(hits), method="wilson")
        return f"{np.mean(hits):.3f} [{low:.3f}, {high:.3f}]"

    out = []
    for arm, g in rows.groupby("arm", sort=False):
        plans = g.groupby("plan")
        at_k = g[g["t"] == k]
        row = {
            "arm": arm,
            "plans": plans.ngroups,
            "every_checked_draw": wilson(plans["covered"].all().to_numpy()),
            "every_wave_end": wilson(g[g["wave_end"]].groupby("plan")["covered"].all().to_numpy()),
            "at_k": wilson(at_k["covered"].to_numpy()),
            "half_width_at_k": at_k["half_width"].mean(),
            "fixed_t_at_k": wilson(at_k["fixed_covered"].to_numpy()),
            "fixed_half_width_at_k": at_k["fixed_half_width"].mean(),
        }
        for h in ANYTIME_TARGETS:
            stops = []
            for _, p in g[g["wave_end"]].sort_values("t").groupby("plan"):
                hit = p[p["half_width"] <= h]
                stops.append(hit.iloc[0] if len(hit) else p.iloc[-1])
            stops = pd.DataFrame(stops)
            row[f"stop at {h:g}: coverage"] = wilson(stops["covered"].to_numpy())
            row[f"stop at {h:g}: mean draws"] = stops["t"].mean()
        out.append(row)
    return pd.DataFrame(out)


def anytime(n_held: int, reps: int, ks=ANYTIME_KS) -> None:
    """Anytime-valid intervals of active plans (issue 40 item 2), on both benchmarks, at
    k = 100 and at a small k (12, the README's example, where the small-sample guards bind)."""
    for name, data in (
        ("simulated 2PL", simulate_2pl(n_systems=BIG[0], n_items=BIG[1], seed=0).rows),
        ("sharp 2PL", sharp_2pl(*BIG, seed=1)),
    ):
        for k in ks:
            start = time.perf_counter()
            table = summarise_anytime(anytime_rows(data, n_held, reps, k), k)
            print(
                f"anytime-valid active intervals, {name}: {n_held} held out x {reps} draws, "
                f"k = {k} in {min(k, 8)} waves ({time.perf_counter() - start:.0f} s); nominal "
                "0.95 at every draw at once, Wilson Monte Carlo intervals; baseline: the fixed "
                "t interval at k"
            )
            print(table.T.to_string(header=False, float_format="{:.3f}".format))


ALPACA_TABLE = Path(__file__).resolve().parents[1] / "data" / "examples" / "alpaca_eval_wins.csv.gz"


def alpaca_table(path: Path) -> pd.DataFrame:
    """The AlpacaEval 2.0 systems x instructions table (``system``, ``case_id``,
    ``preference``, ``win``: per-instruction preferences of the weighted GPT-4 Turbo annotator
    from tatsu-lab/alpaca_eval's results/<system>/weighted_alpaca_eval_gpt4_turbo/
    annotations.json): ``win`` as the score (preference > 1.5 against the reference,
    gpt4_1106_preview)."""
    if not path.exists():
        sys.exit(
            f"{path}: no AlpacaEval table there; pass --alpaca PATH to the systems x cases table "
            "(columns system, case_id, preference, win)"
        )
    df = pd.read_csv(path)
    missing = {"system", "case_id", "win"} - set(df.columns)
    if missing:
        sys.exit(f"{path}: lacks the column(s) {sorted(missing)} (system, case_id, win needed)")
    return df.rename(columns={"win": "score"})[["system", "case_id", "score"]]


def spread_systems(df: pd.DataFrame, n: int) -> list[str]:
    """``n`` systems scored on every case, evenly spaced in rank over their full scores (the
    lowest and the highest included)."""
    cases = df["case_id"].nunique()
    complete = df.groupby("system")["case_id"].nunique().eq(cases)
    ranked = df[df["system"].isin(complete[complete].index)].groupby("system")["score"].mean()
    ranked = ranked.sort_values(kind="stable")
    at = np.unique(np.round(np.linspace(0, len(ranked) - 1, min(n, len(ranked)))).astype(int))
    return list(ranked.index[at])


def _active_arm(fit, k, new, seed):
    return complete_active(fit, k, new, seed=seed, waves=8), "active"


LEAVE_OUT_ARMS = {  # arm: (fit, k, new results, seed) -> (anchors or plan, estimate's method)
    "active, 8 waves (the runner's path)": _active_arm,
    "stratified anchors, sample": lambda fit, k, new, seed: (
        select(fit, k, method="stratified", seed=seed),
        "sample",
    ),
    "irt anchors, irt": lambda fit, k, new, seed: (select(fit, k, method="irt", seed=seed), "irt"),
    "uniform random cases": lambda fit, k, new, seed: (
        select(fit, k, method="random", seed=seed),
        "sample",
    ),
}


def leave_out_rows(df, held, reps, ks, arms=LEAVE_OUT_ARMS) -> pd.DataFrame:
    """The audit's leave-systems-out: for each system of ``held`` the 2PL fitted on the others,
    ``reps`` seeded draws per k and arm, the held-out full score estimated: one row per
    interval (``arm``, ``k``, ``system``, ``truth``, ``value``, ``ci_low``, ``ci_high``,
    ``outside_range``, and the plan's ``design_effect``)."""
    rows = []
    for i, name in enumerate(held):
        new = df[df["system"] == name]
        truth = new["score"].mean()
        fit = fit_irt(df[df["system"] != name], case="case_id")
        for k in ks:
            for rep in range(reps):
                for arm, draw in arms.items():
                    design, how = draw(fit, k, new, 1000 * rep + i)
                    e = estimate(fit, design, new, method=how).iloc[0]
                    rows.append(
                        {
                            "arm": arm,
                            "k": k,
                            "system": name,
                            "truth": truth,
                            "value": e["value"],
                            "ci_low": e["ci_low"],
                            "ci_high": e["ci_high"],
                            "outside_range": bool(e["outside_range"]),
                            "design_effect": getattr(design, "design_effect", np.nan),
                        }
                    )
    return pd.DataFrame(rows)


def coverage_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per k and arm: intervals, coverage with its Wilson Monte Carlo interval, mean
    half-width, MAE, mean error (bias) and the share of estimates warned outside the fitted
    systems' range."""
    rows = rows.assign(
        covered=(rows["ci_low"] <= rows["truth"]) & (rows["truth"] <= rows["ci_high"]),
        error=rows["value"] - rows["truth"],
    )
    out = []
    for (k, arm), g in rows.groupby(["k", "arm"], sort=False):
        low, high = proportion_confint(int(g["covered"].sum()), len(g), method="wilson")
        out.append(
            {
                "k": k,
                "arm": arm,
                "n": len(g),
                "coverage": g["covered"].mean(),
                "mc_low": low,
                "mc_high": high,
                "half_width": ((g["ci_high"] - g["ci_low"]) / 2).mean(),
                "mae": g["error"].abs().mean(),
                "bias": g["error"].mean(),
                "warned": g["outside_range"].mean(),
            }
        )
    return pd.DataFrame(out)


def alpaca(path: Path, n_held: int, reps: int, ks=(25, 50, 100)) -> None:
    """The audit of issue 52 on the real AlpacaEval 2.0 table: leave-systems-out (the 2PL
    fitted on the other systems), ``n_held`` held-out systems spread over the win-rate range,
    ``reps`` seeded draws each; and the cases the audit listed (the reference system, a
    system losing all its drawn cases, 29 of 30 anchors solved)."""
    df = alpaca_table(path)
    held = spread_systems(df, n_held)
    start = time.perf_counter()
    rows = leave_out_rows(df, held, reps, ks)
    print(
        f"AlpacaEval 2.0 leave-systems-out ({df['system'].nunique()} systems x "
        f"{df['case_id'].nunique()} instructions, win = preference > 1.5): {len(held)} held out "
        f"x {reps} draws ({time.perf_counter() - start:.0f} s); nominal 0.95, Wilson Monte Carlo "
        "interval mc_low-mc_high"
    )
    print(coverage_table(rows).to_string(index=False, float_format="{:.3f}".format))
    active_rows = rows[rows["arm"].str.startswith("active")]
    print(
        "  warned outside the fitted systems' range: "
        + (
            ", ".join(sorted(set(active_rows.loc[active_rows["outside_range"], "system"])))
            or "none"
        )
    )
    predicted_and_measured(rows)


def predicted_and_measured(rows: pd.DataFrame) -> None:
    """The plan's predicted design effect against uniform random cases (``plan.design_effect``,
    before anything is run) beside the measured one: the squared ratio of the mean half-widths
    at the same k (the share of uniform random cases' requests the plan needed)."""
    hw = rows.assign(half_width=(rows["ci_high"] - rows["ci_low"]) / 2)
    hw = hw.groupby(["k", "arm"])["half_width"].mean().unstack()
    active_arm = next(a for a in hw.columns if a.startswith("active"))
    predicted = rows[rows["arm"] == active_arm].groupby("k")["design_effect"].mean()
    measured = (hw[active_arm] / hw["uniform random cases"]) ** 2
    print(
        "  requests for the same half-width against uniform random cases: predicted "
        "(plan.design_effect) / measured (squared half-width ratio): "
        + ", ".join(f"k={k} {predicted[k]:.2f} / {measured[k]:.2f}" for k in predicted.index)
    )


def far_outside_rows(n_bench: int, reps: int, ks=(10, 25, 50, 100), ability=3.5):
    """A new system far above the past ones (ability ``ability``) on a sharp 200-item benchmark
    (a ~ lognormal(0.7, 0.3), b ~ N(0, 2); 60 past systems of ability N(0, 1)): ``n_bench``
    benchmarks drawn, the new system's answers drawn on each, ``reps`` plans per k; the 8-wave
    plan (model-assisted and HT) and uniform random cases."""
    rows = []
    for b in range(n_bench):
        df = drawn_2pl(60, 200, seed=100 + b)
        a, d = np.asarray(df.attrs["discrimination"]), np.asarray(df.attrs["difficulty"])
        y = np.random.default_rng(b).random(200) < expit(a * (ability - d))
        new = pd.DataFrame({"system": "new", "case_id": sorted(df["case_id"].unique())})
        new["score"] = y.astype(float)
        fit = fit_irt(df, case="case_id")
        for k in ks:
            for rep in range(reps):
                plan = complete_active(fit, k, new, seed=1000 * rep + b, waves=min(8, k))
                for arm, design, how in (
                    ("active, 8 waves (the runner's path)", plan, "active"),
                    ("active HT, 8 waves", plan, "ht"),
                    ("uniform random cases", select(fit, k, method="random", seed=rep), "sample"),
                ):
                    e = estimate(fit, design, new, method=how).iloc[0]
                    rows.append(
                        {
                            "arm": arm,
                            "k": k,
                            "system": f"bench{b}",
                            "truth": y.mean(),
                            "value": e["value"],
                            "ci_low": e["ci_low"],
                            "ci_high": e["ci_high"],
                            "outside_range": bool(e["outside_range"]),
                            "design_effect": plan.design_effect,
                        }
                    )
    return pd.DataFrame(rows)


def far_outside(n_bench: int, reps: int) -> None:
    start = time.perf_counter()
    rows = far_outside_rows(n_bench, reps)
    print(
        f"far outside: a new system of ability 3.5 on a sharp 200-item benchmark (60 past "
        f"systems of ability N(0, 1)), {n_bench} benchmarks x {reps} plans "
        f"({time.perf_counter() - start:.0f} s); nominal 0.95, Wilson Monte Carlo interval; "
        "warned: the estimate says the system lies beyond the fitted systems' range"
    )
    print(coverage_table(rows).to_string(index=False, float_format="{:.3f}".format))


def requests_predicted(k: int = 50) -> None:
    """``plan.requests()`` before a run, on each benchmark: the requests the item model expects
    each design to need for the half-width the plan is expected to reach at k, and (where the
    truth is simulated) the allocation bound of the error."""
    cases = [
        ("simulate_2pl (60 x 1,000)", simulate_2pl(n_systems=60, n_items=1000, seed=0).rows),
        ("sharp 2PL (60 x 1,000)", sharp_2pl(60, 1000, seed=1)),
        ("skewed 2PL, AlpacaEval-like (60 x 800)", skewed_2pl(60, 800, seed=3)),
        ("data/examples/benchmark.jsonl (24 x 80)", benchmark_file()),
    ]
    if ALPACA_TABLE.exists():
        cases.append(("AlpacaEval 2.0 (58 x 805)", alpaca_table(ALPACA_TABLE)))
    for name, df in cases:
        plan = select(
            fit_irt(df, case="case_id"), min(k, df["case_id"].nunique() // 4), method="active"
        )
        bound = f"; allocation bound {allocation_bound(df):.3f}" if "ability" in df.attrs else ""
        print(f"plan.requests() before a run, {name}, k = {plan.k}{bound}:")
        print(plan.requests().to_string(index=False, float_format="{:.3f}".format))


if __name__ == "__main__":
    if "--alpaca" in sys.argv:  # --alpaca [PATH] [HELD REPS]: the issue 52 audit on real data
        rest = sys.argv[sys.argv.index("--alpaca") + 1 :]
        path = (
            Path(rest.pop(0))
            if rest and not rest[0].isdigit() and not rest[0].startswith("--")
            else ALPACA_TABLE
        )
        held, reps = (int(rest[0]), int(rest[1])) if len(rest) >= 2 else (12, 3)
        alpaca(path, 4 if QUICK else held, 1 if QUICK else reps)
        sys.exit(0)
    if "--far-outside" in sys.argv:  # --far-outside [BENCHMARKS REPS]
        rest = sys.argv[sys.argv.index("--far-outside") + 1 :]
        benches, reps = (int(rest[0]), int(rest[1])) if len(rest) >= 2 else (10, 10)
        far_outside(2 if QUICK else benches, 2 if QUICK else reps)
        sys.exit(0)
    if "--requests" in sys.argv:  # plan.requests() before a run, on every benchmark
        requests_predicted()
        sys.exit(0)
    if "--anytime" in sys.argv:  # --anytime [HELD REPS]
        rest = sys.argv[sys.argv.index("--anytime") + 1 :]
        held, reps = (int(rest[0]), int(rest[1])) if len(rest) >= 2 else (30, 10)
        anytime(4 if QUICK else held, 2 if QUICK else reps)
        sys.exit(0)
    if "--active-coverage" in sys.argv:  # --active-coverage [HELD REPS]
        rest = sys.argv[sys.argv.index("--active-coverage") + 1 :]
        held, reps = (int(rest[0]), int(rest[1])) if len(rest) >= 2 else (40, 10)
        arms = POISSON_ARMS if "--poisson" in sys.argv else SEQUENTIAL_ARMS
        active_coverage(4 if QUICK else held, 2 if QUICK else reps, arms)
        sys.exit(0)
    if "--anchors" in sys.argv:  # issue 36 item 4 alone: --anchors [HELD DRAWS]
        rest = sys.argv[sys.argv.index("--anchors") + 1 :]
        held, draws = (int(rest[0]), int(rest[1])) if len(rest) >= 2 else (20, 15)
        anchors(5 if QUICK else held, 3 if QUICK else draws)
        sys.exit(0)
    if "--active" in sys.argv:  # the active-evaluation part alone: --active [HELD REPS]
        rest = sys.argv[sys.argv.index("--active") + 1 :]
        held, reps = (int(rest[0]), int(rest[1])) if len(rest) >= 2 else (20, 3)
        active(6 if QUICK else held, 2 if QUICK else reps)
        sys.exit(0)
    data = simulate_2pl(n_systems=SYSTEMS, n_items=ITEMS, seed=0).rows
    speed(data)
    recovery()
    rank_coverage(size(40 if QUICK else 200, 2))
    validation(data)
    anchors(*size((5, 3) if QUICK else (20, 15), (1, 1)))
    active(*size((6, 2) if QUICK else (20, 3), (1, 1)))
    if SMOKE:  # the parts that run only when asked for, so that they too keep running
        active_coverage(1, 1)
        active_coverage(1, 1, POISSON_ARMS)
        anytime(1, 1)
