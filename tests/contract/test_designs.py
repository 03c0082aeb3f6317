"""Every design's outcome is a contract result (issue 50): each design the statistics packages
export, replayed on a table of known answers (no request sent), answers with a results object
whose table keeps the finishing step's promises (an interval contains its estimate and has a
width, ``method`` names what was done); its rows record the design; it is deterministic."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest

from jevalkit.contract import Result, interval_pairs
from jevalkit.items import ActiveCases, fit_irt, simulate_2pl
from jevalkit.judges import JudgeConfig
from jevalkit.labels import CascadeDesign, CascadeStage
from jevalkit.metrics import Race
from jevalkit.results import Design, replay
from jevalkit.stats import AdaptiveRepeats

PACKAGES = ("jevalkit.stats", "jevalkit.items", "jevalkit.labels", "jevalkit.metrics")


def exported_designs() -> set[type]:
    found = set()
    for name in PACKAGES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.isclass(obj) and issubclass(obj, Design):
                found.add(obj)
    return found


def repeats_table() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    p = rng.uniform(0.1, 0.9, 8)
    rows = [
        {"source": "m", "probe": "p", "version": 1, "case_id": f"c{c}", "repeat": r,
         "passed": bool(rng.random() < p[c]), "score": None}
        for c in range(8)
        for r in range(30)
    ]  # fmt: skip
    return pd.DataFrame(rows).assign(score=lambda t: t["passed"].astype(float))


def active_table():
    df = simulate_2pl(n_systems=31, n_items=60, seed=0).rows
    fit = fit_irt(df[df.system != "sys30"], case="case_id")
    new = df[df.system == "sys30"].assign(source="sys30", probe="sim", version=1, repeat=0)
    return fit, new


def cascade_table() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for judge, sure in (("small", 0.7), ("big", 0.9)):
        for c in range(40):
            p = float(np.clip(rng.normal(sure, 0.15), 0.5, 0.999))
            rows.append(
                {"source": judge, "probe": "security", "version": 1, "case_id": f"c{c}",
                 "repeat": 0, "model": judge, "probs": [1 - p, p], "error": None}
            )  # fmt: skip
    return pd.DataFrame(rows)


def race_table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = [
        {"source": system, "probe": "p", "version": 1, "case_id": f"c{c}", "repeat": 0,
         "score": float(rng.random() < p)}
        for system, p in (("a", 0.9), ("b", 0.6), ("c", 0.55), ("d", 0.1))
        for c in range(200)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def cases():
    fit, new = active_table()
    config = JudgeConfig()
    stages = [
        CascadeStage(name="small", model="small", threshold=0.85, config=config),
        CascadeStage(name="big", model="big", threshold=0.8, config=config),
    ]
    return {
        AdaptiveRepeats: (
            lambda: AdaptiveRepeats(target_half_width=0.2, max_repeats=30),
            repeats_table(),
        ),
        ActiveCases: (lambda: ActiveCases(k=12, prior=fit, waves=3), new),
        CascadeDesign: (
            lambda: CascadeDesign(stages=stages, levels=("safe", "unsafe"), evaluator="security@1"),
            cascade_table(),
        ),
        Race: (lambda: Race(models=["a", "b", "c", "d"], target="top:2"), race_table()),
    }


def test_every_exported_design_is_exercised_here():
    assert exported_designs() == set(cases())


@pytest.mark.parametrize(
    "design", sorted(cases(), key=lambda c: c.__name__), ids=lambda c: c.__name__
)
def test_a_designs_outcome_is_a_contract_result(design):
    make, table = cases()[design]
    done = replay(make(), table)
    outcome = done.outcome
    assert isinstance(outcome, Result)
    shown = outcome.table()
    assert isinstance(shown, pd.DataFrame) and len(shown)
    for low, high in interval_pairs(shown):
        value = shown[low.replace("ci_low", "value")]
        ok = shown[low].notna()
        assert (shown.loc[ok, low] <= value[ok]).all() and (value[ok] <= shown.loc[ok, high]).all()
        assert (shown.loc[ok, high] > shown.loc[ok, low]).all()
    method = getattr(outcome, "method", None) or shown.get("method", pd.Series([""])).iloc[0]
    assert isinstance(method, str) and method
    # the rows record the design that drew them
    names = {d["name"] for d in done.rows["design"]}
    assert names == {make().name}
    # deterministic: the same table, the same waves and rows
    again = replay(make(), table)
    assert (
        again.waves == done.waves
        and again.rows["candidate"].tolist() == done.rows["candidate"].tolist()
    )
