"""Total evaluation error: do the variance components come back, does the facet-aware interval
cover where the case-only one does not, and does the planner predict the half-width it promises?

1. Recovery and coverage: DATASETS simulated crossed case x variant x repeat designs (30 cases,
   3 prompt variants, 2 repeats; known components: case 0.01, variant 0.0036, case x variant
   0.0025, residual 0.01). Mean estimate of each component against the truth (with its Monte
   Carlo standard error); coverage of the true mean by ``mean_score``'s case-only 95% interval
   and by its ``generalize=["case", "variant"]`` interval (target 93-97%).
2. Design: ``choose_design`` on the true components for a target half-width; the design it
   picks, simulated PLAN_DRAWS times: the mean half-width obtained against the prediction
   (target: within 10%).
3. Speed: one ANOVA G-study against one statsmodels MixedLM REML fit of the same data (the
   baseline), as a ratio.

Run: ``.venv/bin/python benchmarks/bench_total_error.py [--small]`` (``--smoke``: 5 data sets, 5 draws, a
G-study of 120 rows).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd
from sizes import size

from jevalkit import metrics
from jevalkit.stats import GStudy, variance_components

SMALL = "--small" in sys.argv
DATASETS = size(200 if SMALL else 2000, 5)
PLAN_DRAWS = size(100 if SMALL else 1000, 5)
SD = {"case": 0.1, "variant": 0.06, "case x variant": 0.05, "residual": 0.1}
TRUE_MEAN = 0.5
SCALE = (-1.0, 2.0)  # scores are normal draws; the rescale keeps them inside the scale


def simulate(rng, n_cases=30, n_variants=3, repeats=2) -> pd.DataFrame:
    d = pd.DataFrame(
        [(c, v, r) for c in range(n_cases) for v in range(n_variants) for r in range(repeats)],
        columns=["case_id", "variant", "repeat"],
    )
    d["score"] = (
        TRUE_MEAN
        + rng.normal(0, SD["case"], n_cases)[d["case_id"]]
        + rng.normal(0, SD["variant"], n_variants)[d["variant"]]
        + rng.normal(0, SD["case x variant"], (n_cases, n_variants))[d["case_id"], d["variant"]]
        + rng.normal(0, SD["residual"], len(d))
    )
    d["probe"], d["version"] = "p", 1
    return d


def interval(d: pd.DataFrame) -> pd.Series:
    return metrics.mean_score(
        d, generalize=["case", "variant"], scale=SCALE, system=None, bimodality=False
    ).iloc[0]


def recovery_and_coverage(rng) -> None:
    truth = (TRUE_MEAN - SCALE[0]) / (SCALE[1] - SCALE[0])
    estimates, facet, case_only = [], 0, 0
    for _ in range(DATASETS):
        d = simulate(rng)
        # the components on [0, 1] (the scale normalised), back in the scores' own units
        vc = variance_components(d, facets=["case", "variant"], system=None, scale=SCALE).table()
        estimates.append(vc.set_index("component")["estimate"] * (SCALE[1] - SCALE[0]) ** 2)
        row = interval(d)
        facet += row["ci_low_facets"] <= truth <= row["ci_high_facets"]
        case_only += row["ci_low"] <= truth <= row["ci_high"]
    table = pd.DataFrame(estimates)
    print(f"1. {DATASETS} data sets, 30 cases x 3 variants x 2 repeats")
    for name, sd in SD.items():
        mean, mcse = table[name].mean(), table[name].std() / np.sqrt(len(table))
        print(f"   {name:<15} true {sd**2:.5f}  estimated {mean:.5f} +- {1.96 * mcse:.5f}")
    se = np.sqrt(0.95 * 0.05 / DATASETS)
    print(
        f"   coverage of the 95% interval: case-only {case_only / DATASETS:.3f}, "
        f"generalising over case + variant {facet / DATASETS:.3f} (MC SE {se:.3f})"
    )


def planner(rng) -> None:
    truth = pd.DataFrame(
        {
            "component": list(SD),
            "facets": [("case",), ("variant",), ("case", "variant"), ()],
            "variance": [v**2 for v in SD.values()],
        }
    )
    pilot = GStudy.of(truth, levels={"case": 30, "variant": 3}, repeats=2)
    target = 0.06
    best = metrics.choose_design(pilot, target_half_width=target, limits={"variant": 8}).chosen
    design = (int(best["case"]), int(best["variant"]), int(best["repeats"]))
    halves = []
    for _ in range(PLAN_DRAWS):
        row = interval(simulate(rng, *design))
        halves.append((row["ci_high_facets"] - row["ci_low_facets"]) / 2 * (SCALE[1] - SCALE[0]))
    got = float(np.mean(halves))
    print(
        f"2. cheapest design, target half-width {target}: cases={design[0]}, variants={design[1]}, "
        f"repeats={design[2]} ({int(best['requests'])} requests); predicted "
        f"{best['half_width']:.4f}, simulated mean {got:.4f} over {PLAN_DRAWS} draws "
        f"(ratio {got / best['half_width']:.3f}; target within 10%)"
    )


def speed(rng) -> None:
    import statsmodels.api as sm

    d = simulate(rng, n_cases=size(100, 20))
    d["cv"] = d["case_id"].astype(str) + "-" + d["variant"].astype(str)
    start = time.perf_counter()
    for _ in range(5):
        variance_components(d, facets=["case", "variant"], system=None, scale=SCALE)
    ours = (time.perf_counter() - start) / 5
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm.MixedLM.from_formula(
            "score ~ 1",
            groups=np.ones(len(d)),
            re_formula="0",
            vc_formula={"c": "0 + C(case_id)", "v": "0 + C(variant)", "cv": "0 + C(cv)"},
            data=d,
        ).fit(reml=True)
    reml = time.perf_counter() - start
    print(
        f"3. G-study of {len(d)} rows: ANOVA {ours * 1000:.1f} ms, statsmodels REML {reml * 1000:.1f} "
        f"ms (baseline): ratio {reml / ours:.1f}x"
    )


def main() -> None:
    rng = np.random.default_rng(0)
    recovery_and_coverage(rng)
    planner(rng)
    speed(rng)


if __name__ == "__main__":
    main()
