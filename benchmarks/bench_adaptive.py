"""Adaptive repeats: is the interval honest when the run decides when to stop, and how many
requests does it save?

Replays 2,000 adaptive runs of the design itself (``AdaptiveRepeats`` through
``jevalkit.results.replay``, the runner's protocol answered from a table): 20 cases whose pass probabilities differ (most near 0 or 1,
some in between, as real probe sets are), target half-width 0.05, at most 200 repeats.

Printed:
- coverage of the true mean pass probability by the interval the run stops with, and by every
  interval it computed along the way (target: at least 0.95);
- the same for the naive rule (stop once a fixed-sample Wald interval is narrow enough,
  peeking after every round), to show why an anytime-valid interval is needed;
- requests: adaptive runs against fixed k, (a) the fixed k with the same anytime-valid interval
  that reaches the target in 95% of runs, (b) the fixed k a fixed-sample Wald interval needs
  with the true probabilities known in advance (the most optimistic fixed design).

Run: ``.venv/bin/python benchmarks/bench_adaptive.py [--smoke]``
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pandas as pd
from sizes import size

from jevalkit.results import replay
from jevalkit.stats import AdaptiveRepeats, SweepSequence

RUNS, CASES, TARGET, MAX_REPEATS = size(2000, 20), 20, 0.05, 200
FIXED_RUNS = size(100, 10)  # runs per fixed k


def true_probabilities() -> np.ndarray:
    rng = np.random.default_rng(42)
    return rng.choice(
        [0.02, 0.05, 0.95, 0.98, 0.5, 0.7, 0.85], CASES, p=[0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.1]
    )


class Watched(AdaptiveRepeats):
    """The design as the runner runs it, noting after every round whether the interval held
    the truth (the anytime-valid claim is about every round at once)."""

    theta: float = 0.0
    always: bool = True

    def next(self, rows):
        step = super().next(rows)
        seq = self._state["seq"]
        if seq.n_sweeps:
            low, high = seq.interval()
            self.always &= bool(low <= self.theta <= high)
        return step


def adaptive_run(
    p: np.ndarray, rng: np.random.Generator, plan: AdaptiveRepeats
) -> tuple[bool, bool, int]:
    """One adaptive run, replayed (:func:`jevalkit.results.replay`: the runner's protocol with
    a table of answers for an endpoint): every case's answers to all MAX_REPEATS repeats are
    drawn up front, and the design asks for the ones it sends."""
    passed = rng.random((CASES, plan.max_repeats)) < p[:, None]
    table = pd.DataFrame(
        {
            "source": "m",
            "probe": "p",
            "version": 1,
            "case_id": np.repeat(np.arange(CASES), plan.max_repeats).astype(str),
            "repeat": np.tile(np.arange(plan.max_repeats), CASES),
            "passed": passed.ravel(),
            "error": None,
        }
    )
    design = Watched(**{f.name: getattr(plan, f.name) for f in dataclasses.fields(plan) if f.init})
    design.theta = float(p.mean())
    done = replay(design, table)
    row = done.outcome.table().iloc[0]
    covered = bool(row["ci_low"] <= design.theta <= row["ci_high"])
    return covered, design.always, len(done.rows)


def naive_run(p: np.ndarray, rng: np.random.Generator) -> tuple[bool, int]:
    """Peek after every sweep with a fixed-sample Wald interval; stop when it is narrow."""
    x = np.zeros((0, CASES))
    for k in range(1, MAX_REPEATS + 1):
        x = np.vstack([x, (rng.random(CASES) < p).astype(float)])
        if k < 2:
            continue
        means = x.mean(axis=0)
        se = math.sqrt(np.sum(means * (1 - means) / k)) / CASES
        if 1.96 * se <= TARGET:
            break
    half = 1.96 * se
    return bool(abs(x.mean() - p.mean()) <= half), x.size


def fixed_k_same_interval(p: np.ndarray, rng: np.random.Generator, plan: AdaptiveRepeats) -> int:
    """The smallest fixed k whose anytime-valid interval reaches the target in 95% of runs."""
    for k in range(5, MAX_REPEATS + 1, 5):
        hits = 0
        for _ in range(FIXED_RUNS):
            seq = SweepSequence(CASES, confidence=plan.confidence, horizon=k)
            for _ in range(k):
                seq.add_sweep((rng.random(CASES) < p).astype(float))
            low, high = seq.interval()
            hits += (high - low) / 2 <= TARGET
        if hits >= 0.95 * FIXED_RUNS:
            return k
    return MAX_REPEATS


def main() -> None:
    p = true_probabilities()
    plan = AdaptiveRepeats(target_half_width=TARGET, max_repeats=MAX_REPEATS)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    results = [adaptive_run(p, rng, plan) for _ in range(RUNS)]
    took = time.perf_counter() - start
    final = np.mean([r[0] for r in results])
    always = np.mean([r[1] for r in results])
    requests = np.array([r[2] for r in results])
    naive = [naive_run(p, rng) for _ in range(RUNS)]
    naive_cover = np.mean([n[0] for n in naive])
    k_same = fixed_k_same_interval(p, rng, plan)
    k_wald = math.ceil(1.96**2 * np.sum(p * (1 - p)) / (CASES * TARGET) ** 2)
    print(
        f"adaptive repeats: {RUNS} simulated runs, {CASES} cases (true mean {p.mean():.3f}), "
        f"target +/-{TARGET}, max {MAX_REPEATS} repeats ({took:.1f} s)"
    )
    print(
        f"  coverage at the stop:              {final:.4f}  (target >= 0.95: {'met' if final >= 0.95 else 'MISSED'})"
    )
    print(f"  coverage at every round at once:   {always:.4f}")
    print(
        f"  naive peeking with a Wald interval: {naive_cover:.4f}  (why an anytime-valid interval)"
    )
    print(
        f"  requests per run: adaptive mean {requests.mean():.0f} (median {np.median(requests):.0f}, "
        f"95th percentile {np.percentile(requests, 95):.0f})"
    )
    same = CASES * k_same
    print(
        f"  fixed k with the same interval, reaching the target in 95% of runs: k={k_same}, "
        f"{same} requests -> adaptive uses {requests.mean() / same:.2f}x"
    )
    wald = CASES * k_wald
    print(
        f"  fixed k for a fixed-sample Wald interval with the true p known: k={k_wald}, {wald} "
        f"requests -> adaptive uses {requests.mean() / wald:.2f}x (the price of being able to stop "
        "at any time)"
    )


if __name__ == "__main__":
    main()
