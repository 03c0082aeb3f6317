"""Calibration of every interval method (issue 23): simulated coverage next to the nominal level.

Each simulation draws data from a model whose true value is known, runs the public function,
and counts how often its 95% interval holds the truth (or, for tests, how often a null effect is
flagged at alpha = 0.05). The registry (``jevalkit.metrics.CONTRACT``) names which simulation
calibrates each estimator; ``tests/metrics/test_calibration.py`` runs a small seeded version of
each with loose bounds.

Target: coverage 0.93-0.97 at 95%; false-positive rates near 0.05. Where a method falls outside,
its docstring says so. Run: ``.venv/bin/python benchmarks/calibration.py [--reps N]`` (default
400 draws per row; a few minutes on 2 cores; ``--smoke``: 3).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.special import expit
from sizes import parser, size

from jevalkit.errors import StatsError
from jevalkit.labels import calibrate_cascade, corrected_mean, label_sample
from jevalkit.metrics import (
    baseline_win_rates,
    compare,
    consistency,
    mean_absolute_error,
    mean_score,
    pass_at_k,
    pass_hat_k,
    pass_rate,
    position_bias,
    rank,
    win_rate,
)
from jevalkit.stats import (
    bimodality,
    level_sets,
    risk_controlled_threshold,
    selective_threshold,
    wilson_ci,
)


def covered(low: float, high: float, truth: float) -> bool:
    return bool(low <= truth <= high)


def row(method: str, hits: list[bool], kind: str = "coverage", nominal: float = 0.95) -> dict:
    return {
        "method": method,
        "kind": kind,
        "nominal": nominal,
        "observed": float(np.mean(hits)),
        "reps": len(hits),
    }


def sim_mean_score(reps: int, seed: int) -> list[dict]:
    """Scores k/4 with k ~ Binomial(4, p_case), p_case ~ Beta; 3 repeats per case."""
    rng = np.random.default_rng(seed)
    out = []
    for a, b, n in ((3, 2, 30), (18, 2, 10)):
        truth, hits = a / (a + b), []
        for _ in range(reps):
            p = rng.beta(a, b, n)
            k = rng.binomial(4, p[:, None], (n, 3)) / 4
            frame = pd.DataFrame({"case_id": np.repeat(np.arange(n), 3), "score": k.ravel()})
            r = mean_score(frame, case="case_id", system=None, bimodality=False).iloc[0]
            hits.append(covered(r["ci_low"], r["ci_high"], truth))
        out.append(row(f"mean_score: t over cases (Wilson floor), n={n}, mean {truth:.2f}", hits))
    return out


def sim_verdicts(reps: int, seed: int) -> list[dict]:
    """0/1 verdicts with 1-8 repeats per case (issue 36 item 2): mean_score (the mean of case
    means) and pass_rate (the share of rows) share the case-clustered Wilson interval."""
    rng = np.random.default_rng(seed)
    out = []
    for n, a, b in ((30, 2, 2), (10, 9, 1), (40, 1, 4)):
        truth, hits = a / (a + b), {"mean_score": [], "pass_rate": []}
        for _ in range(reps):
            sizes = rng.integers(1, 9, n)
            case = np.repeat(np.arange(n), sizes)
            x = rng.random(case.size) < rng.beta(a, b, n)[case]
            repeat = np.concatenate([np.arange(k) for k in sizes])
            frame = pd.DataFrame({"case_id": case, "repeat": repeat, "passed": x, "score": x * 1.0})
            m = mean_score(frame, case="case_id", system=None, bimodality=False).iloc[0]
            r = pass_rate(frame, case="case_id", system=None).iloc[0]
            hits["mean_score"].append(covered(m["ci_low"], m["ci_high"], truth))
            hits["pass_rate"].append(covered(r["ci_low"], r["ci_high"], truth))
        for name, h in hits.items():
            out.append(row(f"{name} on 0/1 verdicts, {n} cases x 1-8 repeats, mean {truth}", h))
    return out


def sim_no_spread_ci(reps: int, seed: int) -> list[dict]:
    """Five pass/fail cases with a true pass rate near 1: samples without spread are common."""
    rng = np.random.default_rng(seed)
    out = []
    for p in (0.9, 0.97):
        hits = []
        for _ in range(reps):
            scores = (rng.random(5) < p).astype(float)
            r = mean_score(scores, bimodality=False).iloc[0]
            hits.append(covered(r["ci_low"], r["ci_high"], p))
        out.append(row(f"mean_score on 5 values, true mean {p} (no-spread Wilson floor)", hits))
    return out


def sim_pass_rate(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    hits, hits_iid = [], []
    for _ in range(reps):
        p = rng.beta(3, 2, 30)
        passed = rng.random((30, 3)) < p[:, None]
        frame = pd.DataFrame({"case_id": np.repeat(np.arange(30), 3), "passed": passed.ravel()})
        r = pass_rate(frame, case="case_id", system=None).iloc[0]
        hits.append(covered(r["ci_low"], r["ci_high"], 0.6))
        one = pass_rate(passed[:, 0]).iloc[0]
        hits_iid.append(covered(one["ci_low"], one["ci_high"], 0.6))
    return [
        row("pass_rate: Wilson, case-clustered (30 cases x 3)", hits),
        row("pass_rate: Wilson, one run per case (30)", hits_iid),
    ]


def sim_mean_absolute_error(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    truth, hits = 0.3 * math.sqrt(2 / math.pi), []
    for _ in range(reps):
        gold = rng.integers(1, 6, 40).astype(float)
        r = mean_absolute_error(gold + rng.normal(0, 0.3, 40), gold).iloc[0]
        hits.append(covered(r["ci_low"], r["ci_high"], truth))
    return [row("mean_absolute_error: BCa bootstrap over 40 cases", hits)]


def sim_win_rate(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    truth, hits = sps.norm.cdf(0.3 / math.sqrt(2)), []
    for _ in range(reps):
        c = rng.normal(0, 1, 40)
        frame = pd.DataFrame(
            {
                "case_id": np.tile(np.arange(40), 2),
                "system": np.repeat(["x", "y"], 40),
                # on [0, 1] through the normal CDF: monotone, so every win is as it was
                "score": sps.norm.cdf(
                    np.r_[c + 0.3 + rng.normal(0, 1, 40), c + rng.normal(0, 1, 40)]
                ),
            }
        )
        r = win_rate(frame, "x", "y", case="case_id", n_resamples=999).iloc[0]
        hits.append(covered(r["ci_low"], r["ci_high"], truth))
    return [row("win_rate: percentile bootstrap over 40 cases", hits)]


def sim_consistency(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    big = rng.beta(4, 1, 400_000)
    runs = rng.random((400_000, 3)) < big[:, None]
    truth = float(np.mean(np.maximum(runs.sum(1), 3 - runs.sum(1)) / 3))
    hits = []
    for _ in range(reps):
        p = rng.beta(4, 1, 40)
        passed = rng.random((40, 3)) < p[:, None]
        frame = pd.DataFrame(
            {
                "case_id": np.repeat(np.arange(40), 3),
                "repeat": np.tile(np.arange(3), 40),
                "passed": passed.ravel(),
            }
        )
        r = consistency(frame, case="case_id", system=None, level=None).iloc[0]
        hits.append(covered(r["ci_low"], r["ci_high"], truth))
    return [row("consistency: percentile bootstrap over 40 cases", hits)]


def sim_compare(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    newcombe, bca = [], []
    for _ in range(reps):
        p = rng.uniform(0.2, 0.7, 50)
        u = rng.random(50)
        a, b = u < p, u < p + 0.1  # correlated verdicts: b passes where a does, and 10% more
        b = np.where(rng.random(50) < 0.3, rng.random(50) < p + 0.1, b)
        frame = pd.DataFrame(
            {
                "case_id": np.tile(np.arange(50), 2),
                "system": np.repeat(["a", "b"], 50),
                "passed": np.r_[a, b],
            }
        )
        r = compare(frame, "a", by=None, case="case_id", metrics=["pass_rate"]).iloc[0]
        newcombe.append(covered(r["ci_low"], r["ci_high"], 0.1))
        c = rng.beta(2, 2, 50)
        x = np.clip(c + 0.05 + rng.normal(0, 0.1, 50), 0, 1)
        y = np.clip(c + rng.normal(0, 0.1, 50), 0, 1)
        truth = float(
            np.mean(np.clip(c[:, None] + 0.05 + rng.normal(0, 0.1, (50, 400)), 0, 1))
            - np.mean(np.clip(c[:, None] + rng.normal(0, 0.1, (50, 400)), 0, 1))
        )
        frame = pd.DataFrame(
            {
                "case_id": np.tile(np.arange(50), 2),
                "system": np.repeat(["a", "b"], 50),
                "score": np.r_[y, x],
            }
        )
        r = compare(
            frame, "a", by=None, case="case_id", metrics=["mean_score"], n_resamples=999
        ).iloc[0]
        bca.append(covered(r["ci_low"], r["ci_high"], truth))
    return [
        row("compare pass_rate: Newcombe paired, 50 cases, delta 0.1", newcombe),
        row("compare mean_score: BCa over 50 paired cases (truth per draw's cases)", bca),
    ]


def games(
    rng, strength: dict[str, float], n_cases: int, orders=("a_first", "b_first"), first_bonus=0.0
):
    names, rows = list(strength), []
    for c in range(n_cases):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                for position in orders:
                    shift = first_bonus if position == "a_first" else -first_bonus
                    p = 1 / (1 + math.exp(-(strength[a] - strength[b] + shift)))
                    win = rng.random() < p
                    rows.append(
                        {
                            "probe": "pw",
                            "version": 1,
                            "case_id": f"c{c}",
                            "system_a": a,
                            "system_b": b,
                            "position": position,
                            "repeat": 0,
                            "verdict": "a>b" if win else "b>a",
                            "score": float(win),
                        }
                    )
    return pd.DataFrame(rows)


def sim_rank(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    strength = {"A": 0.0, "B": 0.5, "C": -0.3, "D": 0.9}
    hits = []
    for _ in range(reps):
        ranking = rank(games(rng, strength, 25), anchor="A", n_resamples=200)
        table = ranking.table().set_index("system")
        for s in ("B", "C", "D"):
            hits.append(
                covered(
                    table.loc[s, "win_prob_ci_low"],
                    table.loc[s, "win_prob_ci_high"],
                    1 / (1 + math.exp(-strength[s])),
                )
            )
    return [row("rank: Bradley-Terry, percentile bootstrap over 25 cases (per system)", hits)]


def sim_baseline_win_rates(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    hits = []
    for _ in range(reps):
        table = baseline_win_rates(games(rng, {"A": 0.0, "B": 0.6}, 30), "A").iloc[0]
        hits.append(covered(table["ci_low"], table["ci_high"], 1 / (1 + math.exp(-0.6))))
    return [row("baseline_win_rates: t, standard error clustered by case (30 cases)", hits)]


def sim_position_bias(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    flagged, share, refused, unbalanced = [], [], [], []
    for _ in range(reps):
        both = games(rng, {"A": 0.0, "B": 0.4, "C": -0.4}, 20)
        r = position_bias(both).iloc[0]
        flagged.append(r["p_value"] < 0.05)
        share.append(covered(r["ci_low"], r["ci_high"], 0.5))
        # four in five games show the first-named (stronger) system first: the orders weighted
        strong = {"A": 1.0, "B": 0.0}
        mostly = games(rng, strong, 40, orders=("a_first",)).assign(
            case_id=lambda f: "u" + f.case_id
        )
        r = position_bias(pd.concat([games(rng, strong, 10), mostly])).iloc[0]
        unbalanced.append(r["p_value"] < 0.05)
        one = games(rng, {"A": 0.0, "B": 1.5}, 20, orders=("a_first",))
        try:
            position_bias(one)
            refused.append(False)
        except Exception:
            refused.append(True)
    return [
        row(
            "position_bias: binomial test, no position effect (false positives)",
            flagged,
            "false positives",
            0.05,
        ),
        row("position_bias: Wilson interval of the first-shown share", share),
        row(
            "position_bias: orders unbalanced 4:1 within a pair, no position effect",
            unbalanced,
            "false positives",
            0.05,
        ),
        row("position_bias on one-order games: refused", refused, "refusals", 1.0),
    ]


def population(rng, n_items=1000, rate=0.6):
    truth = rng.random(n_items) < rate
    call = np.where(truth, rng.random(n_items) > 0.05, rng.random(n_items) < 0.45)
    frame = pd.DataFrame(
        {"system": "m", "case_id": [f"c{i}" for i in range(n_items)], "score": call * 1.0}
    )
    return frame, truth


def sim_corrected_mean(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = {}
    for strategy in ("random", "stratified", "uncertain"):
        for _ in range(reps):
            df, truth = population(rng)
            plan = label_sample(df, 100, strategy=strategy, seed=int(rng.integers(1 << 30)))
            index = plan["case_id"].str[1:].astype(int).to_numpy()
            labels = plan.assign(level=np.where(truth[index], "pass", "fail"))
            table = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator")
            for estimator in ("PPI", "PPI++"):
                r = table.loc[estimator]
                out.setdefault(
                    f"corrected_mean {estimator}, {strategy} plan (100 of 1,000)", []
                ).append(covered(r["ci_low"], r["ci_high"], 0.6))
    tiny = (
        "corrected_mean PPI, stratified plan, a tiny stratum (16 of 300 labelled, 5% judged pass)"
    )
    for _ in range(reps):
        judge = rng.random(300) < 0.05  # true pass 70% where judged pass, else 30%
        truth = np.where(judge, rng.random(300) < 0.7, rng.random(300) < 0.3)
        df = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(300)]})
        df["score"] = judge * 1.0
        plan = label_sample(df, 16, strategy="stratified", seed=int(rng.integers(1 << 30)))
        index = plan["case_id"].str[1:].astype(int).to_numpy()
        labels = plan.assign(level=np.where(truth[index], "pass", "fail"))
        r = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator").loc["PPI"]
        out.setdefault(tiny, []).append(covered(r["ci_low"], r["ci_high"], 0.05 * 0.7 + 0.95 * 0.3))
    return [row(name, hits) for name, hits in out.items()]


def judge_with_probabilities(rng, n_items: int, truth_kind: str):
    """A judge that says how sure it is (probs over fail/pass, many near-certain), and the
    human labels: calibrated to its probabilities, overconfident, or inverted (wrong where it
    is surest: the label plan's "wrong item model")."""
    p = rng.beta(0.3, 0.3, n_items)
    rate = {"calibrated": p, "overconfident": 0.15 + 0.7 * p, "inverted": 1 - p}[truth_kind]
    truth = rng.random(n_items) < rate
    frame = pd.DataFrame(
        {
            "system": "m",
            "case_id": [f"c{i}" for i in range(n_items)],
            "score": p,
            "probs": [[1 - v, v] for v in p],
        }
    )
    return frame, truth


def sim_active_labels(reps: int, seed: int) -> list[dict]:
    """corrected_mean's coverage (and mean half-width) under random, uncertain and active label
    plans (100 of 1,000 items), for a judge whose probabilities are right, overconfident, or
    inverted. The truth is the documented estimand, the mean human score of the population the
    items are drawn from (0.5 for all three judges); the coverage of the 1,000 drawn items' own
    mean (a finite population, for which the interval is conservative: it keeps the judged
    items' sampling term) is printed beside it."""
    rng = np.random.default_rng(seed)
    out, width, finite = {}, {}, {}
    for kind in ("calibrated", "overconfident", "inverted"):
        for strategy in ("random", "uncertain", "active"):
            for _ in range(reps):
                df, truth = judge_with_probabilities(rng, 1000, kind)
                plan = label_sample(df, 100, strategy=strategy, seed=int(rng.integers(1 << 30)))
                index = plan["case_id"].str[1:].astype(int).to_numpy()
                labels = plan.assign(level=np.where(truth[index], "pass", "fail"))
                table = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator")
                for estimator in ("PPI", "PPI++"):
                    r = table.loc[estimator]
                    name = (
                        f"corrected_mean {estimator}, {strategy} plan, {kind} judge (100 of 1,000)"
                    )
                    out.setdefault(name, []).append(covered(r["ci_low"], r["ci_high"], 0.5))
                    finite.setdefault(name, []).append(
                        covered(r["ci_low"], r["ci_high"], float(truth.mean()))
                    )
                    width.setdefault(name, []).append(r["half_width"])
    return [
        {
            **row(name, hits),
            "mean_half_width": float(np.mean(width[name])),
            "finite_coverage": float(np.mean(finite[name])),
        }
        for name, hits in out.items()
    ]


def sim_rogan_gladen(reps: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    hits = []
    for _ in range(reps):
        df, truth = population(rng)
        labels = pd.DataFrame(
            {
                "system": "m",
                "case_id": df["case_id"][:150],
                "level": np.where(truth[:150], "pass", "fail"),
            }
        )
        r = (
            corrected_mean(df, labels, levels=["fail", "pass"])
            .set_index("estimator")
            .loc["Rogan-Gladen"]
        )
        hits.append(covered(r["ci_low"], r["ci_high"], 0.6))
    return [row("corrected_mean Rogan-Gladen: delta method (150 labels)", hits)]


def sim_bimodality(reps: int, seed: int) -> list[dict]:
    """Unimodal 1-10 grades, two per case, averaged (the audit's 82-100% false positives)."""
    rng = np.random.default_rng(seed)
    averaged, single = [], []
    for _ in range(reps):
        quality = rng.normal(0, 1, 150)
        grades = np.clip(
            np.round(6.5 + 1.3 * (quality[:, None] + rng.normal(0, 0.7, (150, 2)))), 1, 10
        )
        frame = pd.DataFrame({"q": np.repeat(np.arange(150), 2), "g": grades.ravel()})
        averaged.append(
            bool(mean_score(frame, score="g", case="q", system=None, scale=(1, 10))["bimodal"][0])
        )
        single.append(bool(bimodality(grades[:, 0], levels=range(1, 11))["bimodal"][0]))
    return [
        row(
            "bimodality of case means of 2 grades (lattice of 19 values)",
            averaged,
            "false positives",
            0.05,
        ),
        row("bimodality of single 1-10 grades", single, "false positives", 0.05),
    ]


def _judge_confidence(rng, n: int, kind: str) -> tuple[np.ndarray, np.ndarray, callable]:
    """A judge's confidence in its verdict and whether a person agreed: ``kind`` says how the
    confidence relates to the true agreement probability q(c)."""
    q = {
        # claims c, is right 0.4 + 1.2 (c - 0.5): overconfident below 1, 90% reachable from
        # t = 0.83 (a third of the items)
        "overconfident": lambda c: 0.4 + 1.2 * (c - 0.5),
        # claims up to 1, is right at most 95%: 90% needs the top ~15% (hard to certify)
        "overconfident, capped at 95%": lambda c: 0.55 + 0.4 * ((c - 0.5) / 0.5) ** 2,
        "calibrated": lambda c: c,
        "uninformative": lambda c: np.full_like(c, 0.85),
    }[kind]
    c = rng.uniform(0.5, 1.0, n)
    return c, rng.random(n) < q(c), q


def sim_selective_threshold(reps: int, seed: int) -> list[dict]:
    """Judges whose confidence is informative but miscalibrated (or uninformative): over
    calibrations of 200 and 500 labelled items, is the agreement on fresh items at or above the
    certified threshold at least the target (90%)? Refusals count as kept guarantees (nothing
    was certified); the nominal is the confidence level, 90%."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.5, 1.0, 20001)
    out = []
    for kind in ("overconfident", "overconfident, capped at 95%", "calibrated", "uninformative"):
        for n in (200, 500):
            hits, certified, coverage = [], 0, []
            for _ in range(reps):
                c, agree, q = _judge_confidence(rng, n, kind)
                try:
                    t = selective_threshold(c, agree, target_agreement=0.9, confidence_level=0.9)
                except StatsError:
                    hits.append(True)
                    coverage.append(0.0)
                    continue
                certified += 1
                hits.append(float(q(grid[grid >= t.threshold]).mean()) >= 0.9)
                coverage.append(float((grid >= t.threshold).mean()))  # of fresh items, c ~ U
            out.append(
                row(
                    f"selective_threshold: {kind} judge, {n} labels (certified in "
                    f"{certified}/{reps}; mean coverage {np.mean(coverage):.0%} of fresh items)",
                    hits,
                    nominal=0.9,
                )
            )
    return out


def sim_level_sets(reps: int, seed: int) -> list[dict]:
    """A 5-level judge whose probabilities are too sharp (logits x 2 around a noisy guess):
    do 90% conformal level sets hold the person's level on 90% of fresh items?"""
    rng = np.random.default_rng(seed)
    levels = np.arange(5)

    def judge(n: int) -> tuple[np.ndarray, np.ndarray]:
        truth = rng.integers(0, 5, n)
        guess = truth + rng.normal(0, 0.9, n)
        logits = -2.0 * (levels[None, :] - guess[:, None]) ** 2
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        return probs / probs.sum(axis=1, keepdims=True), truth

    out = []
    for n in (50, 300):
        hits = []
        for _ in range(reps):
            cal, cal_levels = judge(n)
            fresh, truth = judge(200)
            sets = level_sets(fresh, cal, cal_levels, coverage=0.9).sets
            hits.append(float(np.mean([t in s for t, s in zip(truth, sets, strict=True)])))
        out.append(
            {
                "method": f"level_sets: 90% ordinal conformal sets, {n} calibration items "
                "(mean coverage over fresh items)",
                "kind": "coverage",
                "nominal": 0.9,
                "observed": float(np.mean(hits)),
                "reps": len(hits),
            }
        )
    return out


def _two_judges(rng, n: int, informative: bool = True) -> tuple[pd.DataFrame, np.ndarray]:
    """Judge rows of a cheap, overconfident judge and a stronger one over n items, and the
    person's level of each item (pass/fail)."""
    truth = rng.random(n) < 0.5
    rows = []
    for judge, floor in (("cheap", 0.3), ("strong", 0.7)):
        sure = rng.uniform(0.5, 1.0, n)
        # informative: right more often when surer, not always as often as it claims
        p_right = floor + (0.99 - floor) * (sure - 0.5) / 0.5 if informative else np.full(n, 0.8)
        right = rng.random(n) < p_right
        called = np.where(right, truth, ~truth)
        p_pass = np.where(called, sure, 1 - sure)
        rows.append(
            pd.DataFrame(
                {
                    "model": judge,
                    "system": "m",
                    "case_id": [f"c{i}" for i in range(n)],
                    "probs": list(np.c_[1 - p_pass, p_pass]),
                }
            )
        )
    return pd.concat(rows, ignore_index=True), truth


def sim_calibrate_cascade(reps: int, seed: int) -> list[dict]:
    """Two judges (cheap and overconfident, then stronger) and people: calibrated on 200 or 500
    labelled items, do the verdicts not sent to people agree with people at least 90% of the
    time on 4,000 fresh items (nominal: the confidence level, 90%)? An uninformative judge
    pair must escalate (nearly) everything rather than certify."""
    rng = np.random.default_rng(seed)
    out = []
    for informative in (True, False):
        for n in (200, 500):
            hits, coverage = [], []
            for _ in range(reps):
                judged, truth = _two_judges(rng, n, informative)
                labels = pd.DataFrame(
                    {
                        "system": "m",
                        "case_id": [f"c{i}" for i in range(n)],
                        "level": np.where(truth, "pass", "fail"),
                    }
                )
                cascade = calibrate_cascade(
                    judged, labels, judges=["cheap", "strong"], levels=["fail", "pass"]
                )
                fresh, fresh_truth = _two_judges(rng, 4000, informative)
                applied = cascade.apply(fresh)
                decided = applied[applied["decided_by"] != "person"]
                coverage.append(len(decided) / 4000)
                if decided.empty:
                    hits.append(True)
                    continue
                person = np.where(fresh_truth, "pass", "fail")
                index = decided["case_id"].str[1:].astype(int).to_numpy()
                hits.append(float(np.mean(decided["verdict"].to_numpy() == person[index])) >= 0.9)
            kind = "informative" if informative else "uninformative"
            out.append(
                row(
                    f"calibrate_cascade: {kind} judges, {n} labels (mean coverage "
                    f"{np.mean(coverage):.0%} of items decided by a judge)",
                    hits,
                    nominal=0.9,
                )
            )
    return out


def toe_judge(rng, n: int, calls: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Issue 51's simulated judge of the "Trust or Escalate" kind: an item of ease
    z ~ N(shift, 1); a person agrees with the judge's verdict with probability
    expit(2 + 1.5 z); the judge's confidence per call is 0.5 + 0.5 expit(2 (z + e)),
    e ~ N(0, 0.6) afresh for each call, and its confidence in the item the mean over its calls.
    Returns the confidences and whether the person agreed."""
    z = rng.normal(shift, 1.0, n)
    agree = rng.random(n) < expit(2 + 1.5 * z)
    per_call = 0.5 + 0.5 * expit(2 * (z[:, None] + rng.normal(0, 0.6, (n, calls))))
    return per_call.mean(axis=1), agree


def toe_population(calls: int, n: int = 400_000) -> tuple[np.ndarray, np.ndarray]:
    """The population a threshold is judged on: confidences, most confident first, and the
    exact agreement P(agree | z) averaged over the items at or above each."""
    rng = np.random.default_rng(12_345 + calls)
    z = rng.normal(size=n)
    conf = (0.5 + 0.5 * expit(2 * (z[:, None] + rng.normal(0, 0.6, (n, calls))))).mean(axis=1)
    order = np.argsort(-conf)
    return conf[order], np.cumsum(expit(2 + 1.5 * z[order])) / np.arange(1, n + 1)


def _decided(population: tuple[np.ndarray, np.ndarray], threshold: float, target: float):
    """The share of the population at or above a threshold, and whether its agreement is at
    least the target (a refusal, inf, decides nothing and keeps it)."""
    conf, agreement = population
    m = int(np.searchsorted(-conf, -threshold, side="right")) if math.isfinite(threshold) else 0
    return m / conf.size, bool(m == 0 or agreement[m - 1] >= target)


def _start_at_30(conf: np.ndarray, agree: np.ndarray, target: float, level: float) -> float:
    """The rule before issue 51 (and the anchor's code): the first test on the 30 most
    confident items, then every item down; the last threshold certified (inf: none)."""
    order = np.argsort(-conf)
    c, k = conf[order], np.cumsum(agree[order])
    n = np.arange(1, c.size + 1)
    p = sps.binom.cdf(n - k, n, 1 - target)
    failed = np.flatnonzero(p[29:] > 1 - level)
    last = (failed[0] + 29 if failed.size else c.size) - 1
    return float(c[last]) if last >= 29 else math.inf


def _cascade_rows(conf_calls: np.ndarray, agree: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge rows (one per call) and labels for calibrate_cascade from simulated calls."""
    n, calls = conf_calls.shape
    ids = np.array([f"c{i}" for i in range(n)])
    yes = conf_calls.ravel()
    judged = pd.DataFrame(
        {
            "model": "judge",
            "system": "m",
            "case_id": np.repeat(ids, calls),
            "repeat": np.tile(np.arange(calls), n),
            "probs": list(np.c_[1 - yes, yes]),
        }
    )
    labels = pd.DataFrame({"system": "m", "case_id": ids, "level": np.where(agree, "yes", "no")})
    return judged, labels


def sim_cascade_coverage(reps: int, seed: int) -> list[dict]:
    """Issue 51's table: the share of items a one-judge cascade decides at 90% confidence, on
    the simulated "Trust or Escalate" judge, with its confidence from 1 or 2 calls: mean and
    median share of fresh items decided, against the rule before (the first test on 30 items,
    then every item) and the oracle (the largest share whose agreement is the target); the
    observed value is the share of calibrations that kept the guarantee (refusals keep it).
    The threshold is selective_threshold's on the mean of the calls; the first 3 calibrations
    of each cell also go through calibrate_cascade on judge rows (one per call), which must
    give the same threshold."""
    out = []
    for calls in (1, 2):
        population = toe_population(calls)
        for target, n in ((0.85, 500), (0.9, 200), (0.9, 500)):
            rng = np.random.default_rng([seed, calls, n, int(target * 100)])
            shares, kept, before = [], [], []
            for rep in range(reps):
                z = rng.normal(size=n)
                agree = rng.random(n) < expit(2 + 1.5 * z)
                per_call = 0.5 + 0.5 * expit(2 * (z[:, None] + rng.normal(0, 0.6, (n, calls))))
                conf = per_call.mean(axis=1)
                try:
                    threshold = selective_threshold(
                        conf, agree, target_agreement=target, confidence_level=0.9
                    ).threshold
                except StatsError:
                    threshold = math.inf
                if rep < 3:
                    judged, labels = _cascade_rows(per_call, agree)
                    cascade = calibrate_cascade(
                        judged, labels, judges=["judge"], levels=["no", "yes"],
                        target_agreement=target, confidence_level=0.9,
                    )  # fmt: skip
                    assert cascade.thresholds[0] == threshold and cascade.calls == (calls,)
                share, ok = _decided(population, threshold, target)
                shares.append(share)
                kept.append(ok)
                before.append(
                    _decided(population, _start_at_30(conf, agree, target, 0.9), target)[0]
                )
            oracle = _decided(
                population, population[0][np.flatnonzero(population[1] >= target).max()], target
            )[0]
            low, high = wilson_ci(int(np.sum(kept)), len(kept))
            out.append(
                {
                    **row(
                        f"cascade, simulated Trust-or-Escalate judge, {calls} call(s), target "
                        f"{target}, {n} labels: decided mean {np.mean(shares):.1%}, median "
                        f"{np.median(shares):.1%} (first test on 30: mean {np.mean(before):.1%}, "
                        f"median {np.median(before):.1%}; oracle {oracle:.1%}); kept",
                        kept,
                        "kept",
                        0.9,
                    ),
                    "mc_interval": (low, high),
                    "decided_mean": float(np.mean(shares)),
                    "decided_median": float(np.median(shares)),
                }
            )
    return out


def _decided_wrong(population: tuple[np.ndarray, np.ndarray], threshold: float):
    """The share of the population at or above a threshold, the share of all items decided
    against the person there (the expected loss of a fresh item given the threshold), and the
    agreement among the decided items (NaN: none decided)."""
    conf, agreement = population
    m = int(np.searchsorted(-conf, -threshold, side="right")) if math.isfinite(threshold) else 0
    if m == 0:
        return 0.0, 0.0, math.nan
    return m / conf.size, m / conf.size * (1 - agreement[m - 1]), float(agreement[m - 1])


def sim_cascade_crc(reps: int, seed: int) -> list[dict]:
    """The second kind of guarantee (issue 51, item 4): conformal risk control of the
    decided-and-wrong rate on the simulated "Trust or Escalate" judge (1 call), 3 x reps
    calibrations a cell (1,200 at the default). Each calibration's threshold is
    risk_controlled_threshold's; a fresh item's expected loss given it is computed on the
    population of 400,000 items (the share decided times the disagreement among them, from the
    exact P(agree | z)); the observed value is the mean over calibrations, E[L], which must be
    at most the risk asked within Monte Carlo error. Printed beside it: the share decided,
    the agreement among the decided items (which this kind does not promise), and the default
    guarantee's share decided and decided-and-wrong rate on the same labels at target 0.9 and
    90% confidence. The first 3 calibrations also go through calibrate_cascade
    (guarantee="expected"), which must give the same threshold."""
    out = []
    population = toe_population(1)
    for risk, n in ((0.05, 200), (0.05, 500), (0.03, 500)):
        rng = np.random.default_rng([seed, n, int(risk * 1000)])
        losses, shares, agreements, default_shares, default_losses = [], [], [], [], []
        for rep in range(3 * reps):
            conf, agree = toe_judge(rng, n, 1)
            try:
                threshold = risk_controlled_threshold(conf, agree, risk=risk).threshold
            except StatsError:
                threshold = math.inf
            if rep < 3:
                judged, labels = _cascade_rows(conf[:, None], agree)
                cascade = calibrate_cascade(
                    judged, labels, judges=["judge"], levels=["no", "yes"],
                    guarantee="expected", risk=risk,
                )  # fmt: skip
                assert cascade.thresholds[0] == threshold, (cascade.thresholds, threshold)
            share, loss, agreement = _decided_wrong(population, threshold)
            losses.append(loss)
            shares.append(share)
            agreements.append(agreement)
            try:
                fixed = selective_threshold(
                    conf, agree, target_agreement=0.9, confidence_level=0.9
                ).threshold
            except StatsError:
                fixed = math.inf
            fixed_share, fixed_loss, _ = _decided_wrong(population, fixed)
            default_shares.append(fixed_share)
            default_losses.append(fixed_loss)
        mean = float(np.mean(losses))
        half = 1.96 * float(np.std(losses, ddof=1)) / math.sqrt(len(losses))
        above = float(np.mean(np.asarray(losses) > risk))
        out.append(
            {
                "method": (
                    f"cascade, expected guarantee (conformal risk control) at risk {risk}, "
                    f"{n} labels, simulated Trust-or-Escalate judge: decided mean "
                    f"{np.mean(shares):.1%}, median {np.median(shares):.1%}, agreement among "
                    f"decided {np.nanmean(agreements):.1%} (not promised), calibrations above "
                    f"the risk {above:.0%} (not promised); the default guarantee (target 0.9, "
                    f"90%) on the same labels: decided mean {np.mean(default_shares):.1%}, "
                    f"median {np.median(default_shares):.1%}, decided-and-wrong rate "
                    f"{np.mean(default_losses):.4f}; mean decided-and-wrong rate"
                ),
                "kind": "expected risk",
                "nominal": risk,
                "observed": mean,
                "reps": len(losses),
                "mc_interval": (mean - half, mean + half),
                "decided_mean": float(np.mean(shares)),
                "default_decided_mean": float(np.mean(default_shares)),
            }
        )
    return out


def _two_toe_judges(rng, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Two judges of the issue's kind on the same items (ease z ~ N(0, 1)): the first as
    toe_judge, the second stronger (a person agrees with probability expit(3 + 1.5 z), its
    confidence 0.5 + 0.5 expit(2 (z + 0.5 + e))). Returns each judge's confidence and the
    probability a person agrees with it, per item."""
    z = rng.normal(size=n)
    conf1 = 0.5 + 0.5 * expit(2 * (z + rng.normal(0, 0.6, n)))
    conf2 = 0.5 + 0.5 * expit(2 * (z + 0.5 + rng.normal(0, 0.6, n)))
    return conf1, expit(2 + 1.5 * z), conf2, expit(3 + 1.5 * z)


def sim_cascade_crc_two_judges(reps: int, seed: int) -> list[dict]:
    """The expected guarantee over a cascade of two judges (:func:`_two_toe_judges`), 3 x reps
    calibrations: the first judge's threshold by conformal risk control at risk / 2 over all
    items, the second's on the items it leaves at risk / 2 over all items (as
    calibrate_cascade does; the earlier threshold taken as given, which the simulation checks);
    a fresh item's expected loss given the thresholds on 200,000 items. The observed value is
    the mean decided-and-wrong rate over calibrations, to be at most the risk."""
    risk, n = 0.05, 500
    c1, p1, c2, p2 = _two_toe_judges(np.random.default_rng(54_321), 200_000)
    rng = np.random.default_rng([seed, 2, n])
    losses, shares = [], []
    for _ in range(3 * reps):
        k1, a1, k2, a2 = _two_toe_judges(rng, n)
        agree1, agree2 = rng.random(n) < a1, rng.random(n) < a2
        thresholds = []
        left = np.ones(n, dtype=bool)
        for conf, agree in ((k1, agree1), (k2, agree2)):
            try:
                t = risk_controlled_threshold(
                    conf[left], agree[left], risk=risk / 2, n_calibration=n
                ).threshold
            except StatsError:
                t = math.inf
            thresholds.append(t)
            left &= conf < t
        first = c1 >= thresholds[0]
        second = ~first & (c2 >= thresholds[1])
        losses.append(float(np.mean(first * (1 - p1) + second * (1 - p2))))
        shares.append(float(np.mean(first | second)))
    mean = float(np.mean(losses))
    half = 1.96 * float(np.std(losses, ddof=1)) / math.sqrt(len(losses))
    return [
        {
            "method": (
                f"cascade of two judges, expected guarantee at risk {risk}, {n} labels: decided "
                f"mean {np.mean(shares):.1%}, median {np.median(shares):.1%}; mean "
                "decided-and-wrong rate"
            ),
            "kind": "expected risk",
            "nominal": risk,
            "observed": mean,
            "reps": len(losses),
            "mc_interval": (mean - half, mean + half),
        }
    ]


def sim_cascade_shift(reps: int, seed: int) -> list[dict]:
    """The shift check (issue 51). (a) False refusals: the cascade's test (scipy's two-sample
    Kolmogorov-Smirnov test at 0.001, as Cascade.shift runs it) on 500 calibration
    confidences against 20,000 new items drawn like them, 100 x reps times. (b) The issue's
    shifted scenario through Cascade.apply: calibrated on 500 labels at target 0.8, applied to
    20,000 items of harder systems (ease z ~ N(-1, 1): the same judge and P(agree | z), lower
    confidence), min(reps, 10) calibrations: refused without accept_shift, and what the
    cascade would have decided with it (the agreement falls below the target); the same with
    items like the labelled ones (not refused)."""
    rng = np.random.default_rng(seed)
    false = []
    for _ in range(100 * reps):
        ref, _ = toe_judge(rng, 500, 1)
        new, _ = toe_judge(rng, 20_000, 1)
        false.append(sps.ks_2samp(ref, new).pvalue < 0.001)
    low, high = wilson_ci(int(np.sum(false)), len(false))
    out = [
        {
            **row(
                "shift check: items like the labelled ones refused (KS at 0.001, 500 vs 20,000): "
                f"{int(np.sum(false))} of {len(false)}",
                false,
                "false refusals",
                0.001,
            ),
            "mc_interval": (low, high),
        }
    ]
    refused, accepted = {0.0: [], -1.0: []}, {0.0: [], -1.0: []}
    for _ in range(min(reps, 10)):
        z = rng.normal(size=500)
        agree = rng.random(500) < expit(2 + 1.5 * z)
        per_call = 0.5 + 0.5 * expit(2 * (z[:, None] + rng.normal(0, 0.6, (500, 1))))
        judged, labels = _cascade_rows(per_call, agree)
        cascade = calibrate_cascade(
            judged, labels, judges=["judge"], levels=["no", "yes"], target_agreement=0.8
        )
        for shift in refused:
            zn = rng.normal(shift, 1.0, 20_000)
            new_agree = rng.random(zn.size) < expit(2 + 1.5 * zn)
            new_conf = 0.5 + 0.5 * expit(2 * (zn[:, None] + rng.normal(0, 0.6, (zn.size, 1))))
            new, _ = _cascade_rows(new_conf, new_agree)
            plain = cascade.apply(new)
            refused[shift].append(
                bool((plain["decided_by"] == "person").all() and plain["shift"].notna().all())
            )
            anyway = cascade.apply(new, accept_shift=True)
            decided = (anyway["decided_by"] == "judge").to_numpy()
            index = anyway["case_id"].str[1:].astype(int).to_numpy()
            accepted[shift].append((decided.mean(), new_agree[index][decided].mean()))
    for shift, name in (
        (-1.0, "harder systems (ease -1 SD)"),
        (0.0, "items like the labelled ones"),
    ):
        share, agreement = np.mean(accepted[shift], axis=0)
        out.append(
            row(
                f"shift check, Cascade.apply, {name}: refused (target 0.8; with accept_shift it "
                f"would decide {share:.0%} at agreement {agreement:.1%})",
                refused[shift],
                "refusals",
                1.0 if shift else 0.001,
            )
        )
    return out


def sim_pass_at_k(reps: int, seed: int) -> list[dict]:
    """Cases whose pass probability p ~ Beta(2, 2) (and Beta(4, 1): most cases usually pass),
    n = 10 repeats each: do the intervals of pass@k and pass^k hold E[1 - (1 - p)^k] and E[p^k]
    over the case population? (With Beta(8, 1) and 20 cases, pass@3 near 0.994 covered 73%: a
    rare hard case pulls the truth below what 20 cases show; ``method`` warns of few cases near
    a bound.)"""
    rng = np.random.default_rng(seed)
    out = []
    for a, b, n_cases in ((2, 2, 40), (4, 1, 20)):
        for k in (1, 3):
            grid = rng.beta(a, b, 400_000)
            truths = {"pass@k": np.mean(1 - (1 - grid) ** k), "pass^k": np.mean(grid**k)}
            hits: dict[str, list[bool]] = {"pass@k": [], "pass^k": []}
            for _ in range(reps):
                p = rng.beta(a, b, n_cases)
                passed = rng.random((n_cases, 10)) < p[:, None]
                frame = pd.DataFrame(
                    {
                        "case_id": np.repeat(np.arange(n_cases), 10),
                        "repeat": np.tile(np.arange(10), n_cases),
                        "passed": passed.ravel(),
                    }
                )
                for kind, fn in (("pass@k", pass_at_k), ("pass^k", pass_hat_k)):
                    r = fn(frame, k, case="case_id", system=None).iloc[0]
                    hits[kind].append(covered(r["ci_low"], r["ci_high"], truths[kind]))
            for kind, h in hits.items():
                out.append(row(f"{kind}: k={k}, {n_cases} cases x 10 repeats, Beta({a}, {b})", h))
    return out


SIMULATIONS = {
    "mean_score": sim_mean_score,
    "no_spread_ci": sim_no_spread_ci,
    "verdicts": sim_verdicts,
    "pass_rate": sim_pass_rate,
    "mean_absolute_error": sim_mean_absolute_error,
    "win_rate": sim_win_rate,
    "consistency": sim_consistency,
    "compare": sim_compare,
    "rank": sim_rank,
    "baseline_win_rates": sim_baseline_win_rates,
    "position_bias": sim_position_bias,
    "corrected_mean": sim_corrected_mean,
    "active_labels": sim_active_labels,
    "rogan_gladen": sim_rogan_gladen,
    "bimodality": sim_bimodality,
    "selective_threshold": sim_selective_threshold,
    "level_sets": sim_level_sets,
    "calibrate_cascade": sim_calibrate_cascade,
    "cascade_coverage": sim_cascade_coverage,
    "cascade_shift": sim_cascade_shift,
    "cascade_crc": sim_cascade_crc,
    "cascade_crc_two_judges": sim_cascade_crc_two_judges,
    "pass_at_k": sim_pass_at_k,
}


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--reps", type=int, default=size(400, 3))
    options.add_argument("--only", nargs="*", default=None)
    args = options.parse_args()
    print(f"{args.reps} draws per row; nominal 95% intervals, tests at alpha = 0.05")
    print(f"{'observed':>9} {'nominal':>8}  {'kind':<16} method")
    for name, simulate in SIMULATIONS.items():
        if args.only and name not in args.only:
            continue
        started = time.perf_counter()
        for r in simulate(args.reps, 2026):
            extra = (
                f" (mean half-width {r['mean_half_width']:.4f})" if "mean_half_width" in r else ""
            )
            if "mc_interval" in r:
                extra += f" (95% Monte Carlo interval {r['mc_interval'][0]:.4f}-{r['mc_interval'][1]:.4f})"
            if "finite_coverage" in r:
                extra += f" (coverage of the drawn items' mean {r['finite_coverage']:.3f})"
            print(
                f"{r['observed']:>9.3f} {r['nominal']:>8.3g}  {r['kind']:<16} {r['method']}{extra}"
            )
        print(f"{'':>9} {'':>8}  ({name}: {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
