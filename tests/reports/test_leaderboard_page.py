"""The leaderboard page escapes system names (model output and imported names are untrusted) and
draws one score interval and one rank interval per system."""

from __future__ import annotations

import pandas as pd
import pytest

from jevalkit.errors import ReportError
from jevalkit.metrics import Race, leaderboard
from jevalkit.reports import leaderboard_page, write_leaderboard_page
from jevalkit.results import replay

HOSTILE = "<img src=x onerror=alert(1)>"


def board():
    df = pd.DataFrame(
        {
            "system": [HOSTILE] * 6 + ["plain"] * 6,
            "case_id": list(range(6)) * 2,
            "score": [1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0.0],
        }
    )
    return leaderboard(df, case="case_id", n_resamples=200)


def test_hostile_system_names_are_escaped(tmp_path):
    page = write_leaderboard_page(board(), tmp_path / "b.html", title="<script>t</script>")
    text = page.read_text()
    assert HOSTILE not in text and "<script>t" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert text.count("<svg") == 4


def test_not_a_leaderboard_is_refused():
    with pytest.raises(
        ReportError, match=r"not a leaderboard: give jevalkit\.metrics\.leaderboard"
    ):
        leaderboard_page(pd.DataFrame({"system": ["a"]}))
    with pytest.raises(ReportError, match="not a DataFrame"):
        leaderboard_page(board().board)


def race_outcome(names=(HOSTILE, "plain", "weak")):
    """A race replayed on known answers: the first system best, the last worst."""
    rows = [
        {"source": name, "probe": "p", "version": 1, "case_id": c, "repeat": 0,
         "score": float((c * (j + 3)) % 7 < 6 - 2 * j)}
        for j, name in enumerate(names)
        for c in range(120)
    ]  # fmt: skip
    return replay(Race(models=list(names), target="best"), pd.DataFrame(rows)).outcome


def test_a_race_page_says_what_was_certified_and_when_each_system_was_settled(tmp_path):
    outcome = race_outcome()
    text = write_leaderboard_page(outcome, tmp_path / "r.html", title="Race").read_text()
    assert HOSTILE not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "Certified (95%, every statement together): <b>best = &lt;img" in text
    table = outcome.table()
    for row in table.itertuples():
        assert f"wave {row.settled_wave} ({row.settled_cases} cases)" in text
    assert text.count("<svg") == 2 * len(table)  # a rank interval and a race bar each
    assert f"It sent {outcome.n_requests} requests" in text
