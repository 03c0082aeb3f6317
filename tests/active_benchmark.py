"""A benchmark for active runs in tests: past systems' scores on unit-conversion@1's 40 cases
(a 2PL), the item model fitted on them and saved, and a loopback "new model" that answers each
case right with the 2PL probability at its ability (tests/runner/test_run_active.py and the
Dask test use it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

import jevalkit
from jevalkit.items import fit_irt

PROBE = "unit-conversion@1"


def active_benchmark(folder: Path):
    """``(fit, path of the saved fit, {user message: (case index, gold)}, (a, b))``."""
    probe = jevalkit.load_probe(PROBE)
    rng = np.random.default_rng(5)
    n = len(probe.cases)
    a, b = rng.lognormal(0.5, 0.3, n), rng.normal(0, 1.5, n)
    theta = rng.normal(size=40)
    y = rng.random((40, n)) < expit(a * (theta[:, None] - b))
    past = pd.DataFrame(
        [
            {
                "system": f"past{s}",
                "probe": probe.id,
                "version": probe.version,
                "case_id": case.id,
                "score": float(y[s, j]),
            }
            for s in range(40)
            for j, case in enumerate(probe.cases)
        ]
    )
    fit = fit_irt(past)
    path = fit.save(folder / "fit.json", scores=False)
    gold = {
        probe.request_input(case, None)["messages"][-1]["content"]: (j, case.fields["expected"])
        for j, case in enumerate(probe.cases)
    }
    return fit, path, gold, (a, b)


def answerer(gold, params, ability=0.7):
    """The new model: right on a case with the 2PL probability at ``ability`` (a fixed draw
    per case, so every request for a case gets the same answer)."""
    a, b = params

    def reply(body):
        j, answer = gold[body["messages"][-1]["content"]]
        u = int(hashlib.sha256(f"case{j}".encode()).hexdigest()[:8], 16) / 2**32
        return answer if u < expit(a[j] * (ability - b[j])) else "no idea"

    return reply
