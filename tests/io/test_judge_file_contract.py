"""Issue 23 for importers: a missing grade is a missing value, an importer never invents a
position, and a copied record is not another game."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jevalkit import io
from jevalkit.errors import ImportFormatError, StatsError
from jevalkit.metrics import baseline_win_rates, mean_score, position_bias


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_null_grade_is_a_missing_value_not_a_refused_file(tmp_path):
    records = [
        {"question_id": i, "model": "m", "score": s} for i, s in enumerate([7, None, 9, -1, 8])
    ]
    df = io.read(write(tmp_path / "grades.jsonl", records), format="grades")
    row = mean_score(df, by="system", case="case_id").iloc[0]
    assert (row["n"], row["n_missing"]) == (3, 2)
    assert row["value"] == pytest.approx(np.mean([6 / 9, 8 / 9, 7 / 9]))


def preferences(n_games=60, copies=0):
    rng = np.random.default_rng(0)
    records = [
        {
            "instruction": f"task {i}",
            "generator_1": "base",
            "generator_2": "model",
            "preference": float(rng.choice([1.0, 2.0], p=[0.2, 0.8])),
        }
        for i in range(n_games)
    ]
    return records + records[:copies]


def test_a_preference_file_has_no_position_and_position_bias_refuses(tmp_path):
    df = io.read(write(tmp_path / "prefs.jsonl", preferences()), format="preferences")
    assert df["position"].isna().all()
    with pytest.raises(StatsError, match="no game records which answer was shown first"):
        position_bias(df)
    table = baseline_win_rates(df, "base")  # the games still count for win rates
    assert table["n_games"].tolist() == [60]


def test_games_shown_in_one_order_do_not_give_a_position_effect(tmp_path):
    df = io.read(write(tmp_path / "prefs.jsonl", preferences()), format="preferences")
    with pytest.raises(StatsError, match="shown in one order only"):
        position_bias(df.assign(position="a_first"))


def test_copied_records_are_refused_not_counted_as_games(tmp_path):
    path = write(tmp_path / "prefs.jsonl", preferences(60, copies=20))
    with pytest.raises(ImportFormatError, match=r"record 61 repeats an earlier record .*20 such"):
        io.read(path, format="preferences")
