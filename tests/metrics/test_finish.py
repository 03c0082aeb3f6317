"""The one finishing step (jevalkit.contract.finish) on the metrics' tables: the group or case
keys first, then the documented columns in their documented order."""

from __future__ import annotations

import pandas as pd
import pytest

from jevalkit import metrics


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    rows = [
        {"probe": p, "version": 1, "case_id": f"c{c}", "system": s, "repeat": r,
         "passed": (c + r + (s == "B")) % 3 > 0, "score": ((c + r) % 4) / 3}
        for p in ("p", "q") for s in ("A", "B") for c in range(6) for r in range(2)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_group_keys_come_first(results):
    by = ["probe", "system"]
    assert list(metrics.pass_rate(results, by=by).columns[:3]) == [*by, "n"]
    assert list(metrics.mean_score(results, by=by).columns[:3]) == [*by, "n"]
    assert list(metrics.consistency(results, by=by, level=None).columns[:3]) == [*by, "n_cases"]
    # the two systems are kept apart, after the by columns
    assert list(metrics.summarize(results, by="probe").columns[:3]) == ["probe", "system", "metric"]
    assert list(metrics.compare(results, "A", by="probe").columns[:3]) == [
        "probe",
        "system",
        "baseline",
    ]
    assert list(metrics.gate(results, minimum=0.2, by="probe").columns[:3]) == [
        "system",
        "probe",
        "metric",
    ]
    assert list(metrics.per_case(results, by="system").columns[:5]) == [
        "system", "probe", "version", "case_id", "n",
    ]  # fmt: skip


def test_case_changes_lists_the_case_columns_then_its_documented_columns(results):
    changes = metrics.case_changes(results, "A", "B", include_unchanged=True)
    assert list(changes.columns[:5]) == ["probe", "version", "case_id", "status", "verdict_a"]
    assert list(changes.columns)[-2:] == ["input", "target"]
