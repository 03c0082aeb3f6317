"""One input step, one home per rule (issue 50 item 3): the system x item matrix reads its rows
through ``prepare``; a system's two probe versions or generation settings are kept apart or
refused by every statistic unless ``pool=True``; nothing guesses a column from its presence; raw
grades need ``scale=`` in the G-study and the planner too; the labels statistics name their
columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jevalkit import items, labels, metrics, stats
from jevalkit.contract import prepare, score_matrix
from jevalkit.errors import StatsError
from jevalkit.results import KEY_COLUMNS


def frame(n_cases: int = 6, systems=("a", "b"), repeats: int = 2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        {
            "system": s,
            "probe": "p",
            "version": 1,
            "case_id": f"c{c}",
            "repeat": r,
            "score": float(rng.integers(0, 5) / 4),
        }
        for s in systems
        for c in range(n_cases)
        for r in range(repeats)
    ]
    out = pd.DataFrame(rows)
    return out.assign(passed=out["score"] >= 0.5)


# ---- the matrix reads its rows through prepare ----------------------------------------------


def message(call) -> str:
    with pytest.raises(StatsError) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize(
    "broken",
    [
        lambda f: f.assign(score=f["score"] * 10),  # the scale rule
        lambda f: pd.concat([f, f.iloc[:2]], ignore_index=True),  # the duplicate rule
        lambda f: f.assign(score=np.where(f.index == 0, np.inf, f["score"])),  # the number rule
        lambda f: f.assign(case_id=[1 if s == "a" else str(i) for i, s in enumerate(f["system"])]),
    ],
    ids=["scale", "duplicates", "numbers", "keys"],
)
def test_the_matrix_refuses_what_the_input_step_refuses_in_its_words(broken):
    bad = broken(frame())
    said = message(
        lambda: prepare(
            bad,
            "score",
            by="system",
            case="case_id",
            system="system",
            kind="score",
            repeat="repeat",
            need_repeat=True,
            complete_keys=True,
            apart=False,
        )
    )
    assert message(lambda: score_matrix(bad, case="case_id")) == said


def test_the_matrix_counts_unscored_rows_per_system_as_the_input_step_does():
    f = frame().astype({"score": object})
    f.loc[0, "score"] = None
    f.loc[3, "error"] = "timeout"
    m = score_matrix(f, case="case_id")
    p = prepare(f, "score", by="system", case="case_id", system="system", kind="score")
    assert m.n_missing.tolist() == p.n_missing.tolist() == [2, 0]
    assert m.weight.sum() == p.values.size == len(f) - 2


def test_rows_of_one_cell_no_column_tells_apart_are_refused_but_variants_are_repeats():
    f = frame(repeats=1).drop(columns="repeat")
    twice = pd.concat([f, f], ignore_index=True)
    assert "no repeat column" in message(lambda: score_matrix(twice, case="case_id"))
    # the results key tells two wordings of a case apart: repeats of its cell, averaged
    worded = pd.concat([f.assign(variant="v1"), f.assign(variant="v2")], ignore_index=True)
    assert score_matrix(worded, case="case_id").weight.max() == 2


def test_the_identity_of_a_row_is_the_results_key():
    # every key column besides the case and the repeat tells two rows of a case apart
    f = frame(repeats=1)
    for column in [c for c in KEY_COLUMNS if c not in ("probe", "version", "case_id", "repeat")]:
        two = pd.concat([f.assign(**{column: "x"}), f.assign(**{column: "y"})], ignore_index=True)
        prepare(two, "score", case="case_id", system="system", repeat="repeat", pool=True)
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        prepare(pd.concat([f, f]), "score", case="case_id", system="system", repeat="repeat")


# ---- settings: kept apart or refused, never pooled --------------------------------------------


def two_versions(f: pd.DataFrame) -> pd.DataFrame:
    return f.assign(version=f["repeat"] + 1)


def test_a_statistic_with_groups_keeps_two_versions_apart_and_pool_pools_them():
    f = two_versions(frame())
    apart = metrics.mean_score(f, by="system", case="case_id", bimodality=False)
    assert apart[["system", "probe", "version"]].values.tolist() == [
        ["a", "p", 1],
        ["a", "p", 2],
        ["b", "p", 1],
        ["b", "p", 2],
    ]
    one = metrics.mean_score(f[f["version"] == 2], by="system", case="case_id", bimodality=False)
    assert apart[apart["version"] == 2]["value"].tolist() == one["value"].tolist()
    pooled = metrics.mean_score(f, by="system", case="case_id", bimodality=False, pool=True)
    assert len(pooled) == 2 and pooled["n_samples"].tolist() == [12, 12]


@pytest.mark.parametrize(
    "statistic",
    [
        lambda f: metrics.win_rate(f, baseline="a", case="case_id"),
        lambda f: metrics.case_changes(f, "a", "b", case="case_id"),
        lambda f: stats.variance_components(f, facets=["case", "system"], case="case_id"),
        lambda f: score_matrix(f, case="case_id"),
        lambda f: labels.judged_items(f),
        lambda f: stats.paired_difference(f, systems=("a", "b"), case="case_id"),
    ],
    ids=["win_rate", "case_changes", "g_study", "matrix", "judged_items", "paired_difference"],
)
def test_a_statistic_without_groups_refuses_two_settings_in_one_line_and_pools_on_purpose(
    statistic,
):
    f = frame().assign(params_hash=lambda d: np.where(d["repeat"] == 0, "t0", "t1"))
    said = message(lambda: statistic(f))
    assert "params_hash" in said and "pool=True" in said and "\n" not in said


def test_compare_and_consistency_keep_two_versions_apart():
    f = two_versions(frame(repeats=4)).assign(version=lambda d: d["repeat"] // 2 + 1)
    table = metrics.compare(f, "a", case="case_id", n_resamples=200)
    assert set(table["version"]) == {1, 2} and len(table) == 4
    agree = metrics.consistency(f, by="system", case="case_id", level=None, n_resamples=200)
    assert agree[["system", "version"]].values.tolist() == [["a", 1], ["a", 2], ["b", 1], ["b", 2]]


def test_a_setting_named_as_a_facet_is_modelled_not_refused():
    f = frame(repeats=4).assign(version=lambda d: d["repeat"] % 2 + 1)
    study = stats.variance_components(f, facets=["case", "version"], case="case_id")
    assert "version" in study.levels and study.levels["version"] == 2


def test_two_systems_on_different_versions_are_not_two_settings_of_one():
    f = frame()
    f = f.assign(version=np.where(f["system"] == "a", 1, 2))
    assert len(metrics.win_rate(f, baseline="a", case="case_id")) == 1


# ---- nothing guessed from a column's presence ------------------------------------------------


@pytest.mark.parametrize("statistic", [metrics.mean_score, metrics.pass_rate])
def test_the_system_column_is_named_not_guessed(statistic):
    f = frame(systems=("a",)).drop(columns="system")
    said = message(lambda: statistic(f, case="case_id"))
    assert "no 'system' column" in said and "system=None" in said
    assert len(statistic(f, case="case_id", system=None)) == 1


def test_rows_of_two_systems_declared_one_are_refused_as_copies():
    f = frame()
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        metrics.pass_rate(f.drop(columns="system"), case="case_id", system=None)
    # two systems' rows are two runs: kept apart (pool=True pools them on purpose)
    assert metrics.pass_rate(f, case="case_id")["n"].tolist() == [len(f) // 2] * 2
    assert metrics.pass_rate(f, case="case_id", pool=True)["n"].tolist() == [len(f)]


# ---- raw grades need scale= in the G-study and the planner -----------------------------------


def grades(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    f = frame(n_cases=30, systems=("a", "b", "c"), repeats=2, seed=seed)
    return f.assign(score=rng.integers(1, 11, len(f)).astype(float))


def test_the_g_study_refuses_raw_grades_and_reads_them_on_a_scale():
    g = grades()
    said = message(lambda: stats.variance_components(g, facets=["case"], case="case_id"))
    assert "outside [0, 1]" in said and "scale=" in said
    raw = stats.variance_components(g, facets=["case"], case="case_id", scale=(1, 10))
    unit = stats.variance_components(
        g.assign(score=(g["score"] - 1) / 9), facets=["case"], case="case_id"
    )
    pd.testing.assert_frame_equal(raw.table(), unit.table())
    # the planner plans on that scale: a half-width of 0.05 is five points of a 0-1 score
    plan = metrics.choose_design(raw, target_half_width=0.05, generalize=["case"])
    assert plan.chosen["half_width"] <= 0.05


def test_the_design_command_refuses_raw_grades_without_scale(capsys):
    from jevalkit.cli import main
    from jevalkit.reports import example_path

    grades = str(example_path("grades.jsonl"))  # expected_level: 1-10 grades
    plan = ["design", grades, "--score", "expected_level", "--facets", "case"]
    assert main([*plan, "--target-half-width", "0.05"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "outside [0, 1]" in err[0] and "scale" in err[0]
    assert main([*plan, "--target-half-width", "0.05", "--scale", "1,10"]) == 0
    assert "Designs, best first" in capsys.readouterr().out


# ---- the labels statistics name their columns ------------------------------------------------


def test_judged_rows_are_read_by_their_named_columns():
    f = frame(repeats=1)
    theirs = f.rename(columns={"system": "model", "case_id": "question", "score": "grade"})
    named = labels.judged_items(theirs, system="model", case_id="question", score="grade")
    pd.testing.assert_frame_equal(named, labels.judged_items(f))
    assert "pass score='<column>'" in message(lambda: labels.judged_items(theirs))
    assert "pass system='<column>'" in message(lambda: labels.judged_items(theirs, score="grade"))
    said = message(lambda: labels.judged_items(theirs, score="grade", system="model"))
    assert "pass case_id='<column>'" in said
    with pytest.raises(StatsError, match="unknown keyword"):
        labels.judged_items(f, case="case_id")


def test_the_corrected_mean_reads_judged_rows_by_their_named_columns():
    rng = np.random.default_rng(3)
    truth = rng.random(200) < 0.6
    judged = pd.DataFrame(
        {"model": "m", "question": [f"q{i}" for i in range(200)], "grade": truth * 9.0 + 1}
    )
    labelled = pd.DataFrame(
        {"system": "m", "case_id": [f"q{i}" for i in range(40)], "level": truth[:40].astype(int)}
    ).astype({"level": str})
    table = labels.corrected_mean(
        judged,
        labelled,
        levels=["0", "1"],
        system="model",
        case_id="question",
        score="grade",
        scale=(1, 10),
    ).set_index("estimator")
    assert table.loc["judge only", "value"] == pytest.approx(truth.mean())


# ---- answers that were dicts and tuples are results objects ----------------------------------


def test_the_d_study_answers_and_rank_sets_are_results_objects_read_by_name():
    study = stats.GStudy.of(
        pd.DataFrame(
            {"component": ["case", "residual"], "facets": [("case",), ()], "variance": [0.04, 0.2]}
        ),
        levels={"case": 100},
    )
    floor = metrics.run_noise_floor(study)
    assert isinstance(floor, metrics.NoiseFloor)
    assert floor.table()["noise_floor"].iloc[0] == floor.noise_floor > 0
    with pytest.raises(TypeError, match=r"the field \.noise_floor"):
        floor["noise_floor"]
    error = metrics.mean_error(study, generalize=["case"])
    assert isinstance(error, metrics.MeanError) and error.half_width > error.se > 0
    assert "random: case" in error.method
    value = np.array([0.9, 0.5, 0.49])
    draws = value + np.random.default_rng(0).normal(0, 0.02, (300, 3))
    sets = metrics.rank_sets(value, draws, np.full((3, 3), 100))
    assert isinstance(sets, metrics.RankSets)
    assert sets.table()["rank_low"].tolist() == sets.rank_low.tolist() == [1, 2, 2]
    with pytest.raises(TypeError, match="rows are"):
        len(sets)


def test_an_item_fit_saved_with_the_matrix_columns_reads_new_results_the_same_way(tmp_path):
    fit = items.fit_irt(items.simulate_2pl(n_systems=30, n_items=10, seed=0), case="case_id")
    assert fit.matrix.columns == {
        "system": "system",
        "case": "case_id",
        "score": "score",
        "repeat": "repeat",
        "scale": None,
        "pool": False,
    }
    again = items.load_fit(fit.save(tmp_path / "fit.json"))
    assert again.matrix.columns == fit.matrix.columns
