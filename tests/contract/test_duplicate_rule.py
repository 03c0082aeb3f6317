"""The duplicate rule reaches the headline statistics: a copied row (same case, system and
repeat) is refused by pass_rate and mean_score, not counted as a repeat; rows of two systems
are never copies of each other, with or without by=."""

from __future__ import annotations

import pandas as pd
import pytest

from jevalkit import metrics
from jevalkit.errors import StatsError

BASE = pd.DataFrame(
    {
        "system": "a",
        "probe": "p",
        "version": 1,
        "case_id": ["c1", "c2", "c3"],
        "repeat": 0,
        "passed": [True, False, True],
        "score": [1.0, 0.0, 1.0],
    }
)


@pytest.mark.parametrize("statistic", [metrics.pass_rate, metrics.mean_score, metrics.summarize])
def test_a_copied_row_is_not_a_repeat(statistic):
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        statistic(pd.concat([BASE, BASE.iloc[:1]], ignore_index=True), by="system")


def test_two_systems_rows_of_one_case_are_not_copies():
    both = pd.concat([BASE, BASE.assign(system="b")], ignore_index=True)
    pooled = metrics.pass_rate(both, pool=True)  # all rows together: six rows over three cases
    assert pooled["n"].tolist() == [6] and pooled["value"].tolist() == [pytest.approx(2 / 3)]
    apart = metrics.pass_rate(both)  # by default two systems are two estimates (issue 54.2)
    assert apart["system"].tolist() == ["a", "b"] and apart["n"].tolist() == [3, 3]
