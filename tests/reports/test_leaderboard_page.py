"""The leaderboard page escapes system names (model output and imported names are untrusted) and
draws one score interval and one rank interval per system."""

from __future__ import annotations

import pandas as pd
import pytest

from jevalkit.errors import ReportError
from jevalkit.metrics import leaderboard
from jevalkit.reports import leaderboard_page, write_leaderboard_page

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
