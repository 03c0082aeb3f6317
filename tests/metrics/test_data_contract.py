"""No silent wrong answers (issue 11): each defect found on real data, reproduced, and the class
made impossible with property tests."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from jevalkit.errors import ResultsError, StatsError
from jevalkit.metrics import consistency, mean_score, pass_rate, summarize, win_rate
from jevalkit.results import ResultRow, latest_rows, read_results
from jevalkit.stats import bimodality, krippendorff_alpha, ordinal_spacing, paired_difference

REAL_COUNTS = [3, 9, 3, 3, 2, 7, 17, 21, 68, 164]  # grades 1..10 of one model on a leaderboard


def sample(counts, levels):
    return np.repeat(np.asarray(levels), counts)


# 1. graded data is not bimodal just because it is tied


def test_a_one_peaked_grade_sample_is_not_flagged():
    grades = sample(REAL_COUNTS, range(1, 11))
    row = bimodality(grades, levels=range(1, 11)).iloc[0]
    assert not row["bimodal"] and row["p_value"] > 0.05
    assert row["method"].startswith("discrete")
    table = mean_score(pd.DataFrame({"q": range(grades.size), "g": grades}), score="g", case="q",
                       system=None, scale=(1, 10))  # fmt: skip
    assert not table.loc[0, "bimodal"]


@pytest.mark.parametrize("levels", [3, 5, 10])
def test_false_positives_on_unimodal_graded_samples_stay_near_alpha(levels):
    rng = np.random.default_rng(levels)
    shapes = [
        sps.binom.pmf(np.arange(levels), levels - 1, 0.5),
        sps.binom.pmf(np.arange(levels), levels - 1, 0.8),
        np.r_[np.full(levels - 1, 0.3 / (levels - 1)), 0.7],  # piled on the top level
    ]
    flagged, trials = 0, 0
    for p in shapes:
        for n in (30, 300):
            for _ in range(40):
                counts = rng.multinomial(n, p / p.sum())
                x = sample(counts, range(levels))
                flagged += bool(bimodality(x, levels=range(levels), n_resamples=199)["bimodal"][0])
                trials += 1
    assert flagged / trials <= 0.1  # 0.05 nominal; 240 trials, so some slack (the bench runs 2,000)


def test_a_two_peaked_sample_is_found():
    rng = np.random.default_rng(1)
    p = np.r_[0.4, np.full(3, 0.2 / 3), 0.4]
    hits = [
        bool(bimodality(sample(rng.multinomial(60, p), range(5)), levels=range(5))["bimodal"][0])
        for _ in range(30)
    ]
    assert np.mean(hits) >= 0.8


def test_continuous_scores_still_get_the_dip_test():
    x = np.random.default_rng(0).normal(size=300)
    assert bimodality(x).loc[0, "method"] == "Hartigan's dip test (continuous)"


# 2. a file jevalkit did not write is refused, and duplicate keys are counted


def test_a_foreign_jsonl_is_refused_not_read_as_one_row(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps({"question_id": i, "model": "m", "score": 7}) + "\n"
                            for i in range(300)))  # fmt: skip
    with pytest.raises(
        ResultsError, match=r"missing column\(s\) kind, probe, version, repeat; convert it first"
    ):
        read_results(path)


def test_rows_sharing_a_key_are_counted_not_silently_dropped(tmp_path):
    path = tmp_path / "r.jsonl"
    old = ResultRow(run_id="a", kind="probe", probe="p", version=1, model="m", repeat=0, score=0.0)
    new = ResultRow(run_id="b", kind="probe", probe="p", version=1, model="m", repeat=0, score=1.0)
    path.write_text(old.to_json() + "\n" + new.to_json() + "\n")
    with pytest.warns(UserWarning, match="1 row\\(s\\) were replaced by later rows"):
        df = read_results(path)
    assert len(df) == 1 and df.loc[0, "score"] == 1.0
    assert latest_rows(path).replaced == 1


# 3. the unit of analysis is named, never guessed


def leaderboard():
    rng = np.random.default_rng(3)
    rows = []
    for q in range(40):
        for model, shift in (("a", 0.3), ("b", 0.0)):
            for turn in (1, 2):
                rows.append({"question_id": q, "system": model, "turn": turn,
                             "score": float(np.clip(0.5 + shift + rng.normal(0, 0.2), 0, 1))})  # fmt: skip
    return pd.DataFrame(rows)


def test_a_missing_case_column_raises_naming_the_keyword():
    df = leaderboard()
    for call in (lambda: mean_score(df), lambda: win_rate(df, "a", "b"), lambda: pass_rate(df)):
        with pytest.raises(StatsError, match=r"the columns are .*question_id"):
            call()
    row = mean_score(df, case="question_id", by="system").iloc[0]
    assert row["n"] == 40 and row["n_samples"] == 80  # two turns averaged within a question
    assert row["method"] == "t interval over cases (question_id)"
    rows = mean_score(df, case=None, by="system").iloc[0]
    assert rows["n"] == 80 and rows["method"].startswith("t interval over rows (case=None)")
    w = win_rate(df, "a", "b", case="question_id").iloc[0]
    assert w["n"] == 40


# 4. paired differences pair by index


def test_paired_difference_aligns_series_on_their_index():
    rng = np.random.default_rng(4)
    a = pd.Series(rng.normal(0.6, 0.1, 30), index=[f"q{i}" for i in range(30)])
    b = pd.Series(a.to_numpy() - 0.03 + rng.normal(0, 0.05, 30), index=a.index)
    straight = paired_difference(a, b).iloc[0]
    shuffled = paired_difference(a, b.sample(frac=1, random_state=1)).iloc[0]
    assert shuffled["p_value"] == pytest.approx(straight["p_value"])
    assert straight["p_value"] == pytest.approx(sps.norm.sf(abs(straight["z"])) * 2)
    with pytest.raises(StatsError, match="index different cases"):
        paired_difference(a, b.iloc[1:])
    with pytest.raises(StatsError, match="duplicated index"):
        paired_difference(a, pd.concat([b.iloc[:29], b.iloc[:1]]))
    long = pd.DataFrame({"case": list(a.index) * 2, "sys": ["x"] * 30 + ["y"] * 30,
                         "score": [*a, *b]})  # fmt: skip
    by_frame = paired_difference(long, systems=("x", "y"), case="case", system="sys").iloc[0]
    assert by_frame["value"] == pytest.approx(straight["value"])


# 5. agreement needs its layout stated


def test_krippendorff_alpha_refuses_an_unstated_layout_and_reads_long_data():
    ratings = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2], [1, 2, 3, 3, 2, 2, 4, 1, 2],
                        [2, 3, 3, 3, 2, 3, 4, 2, 2]], dtype=float)  # fmt: skip
    with pytest.raises(StatsError, match="say which axis is which"):
        krippendorff_alpha(ratings)
    right = krippendorff_alpha(ratings, "ordinal", layout="raters x units")
    long = pd.DataFrame([(u, r, v) for r, row in enumerate(ratings) for u, v in enumerate(row)],
                        columns=["unit", "rater", "value"])  # fmt: skip
    assert krippendorff_alpha(
        long, "ordinal", unit="unit", rater="rater", value="value"
    ) == pytest.approx(right)
    assert krippendorff_alpha(ratings.T, "ordinal", layout="units x raters") == pytest.approx(right)


# 6. consistency needs to know which run is which


def test_consistency_without_a_repeat_column_raises_or_says_what_it_did():
    df = pd.DataFrame(
        {"case_id": list("aabbcc"), "passed": [True, False, True, True, False, False]}
    )
    with pytest.raises(StatsError, match="no 'repeat' column"):
        consistency(df, case="case_id", system=None, level=None)
    row = consistency(df, case="case_id", system=None, level=None, repeat=None).iloc[0]
    assert (
        row["method"].endswith("matches runs by order within a case")
        and row["alpha"] == row["alpha"]
    )


# 7. ordinal spacing takes the level set


def test_ordinal_spacing_on_one_to_ten_with_an_unused_level():
    rng = np.random.default_rng(7)
    latent = rng.logistic(size=4000)
    grades = np.digitize(latent, [-2.1, -1.5, -0.9, -0.3, 0.3, 0.9, 1.5, 2.1]) + 1  # 1..9
    result = ordinal_spacing(grades, categories=range(1, 11))
    assert result.merged == (10,) and result.categories == tuple(range(1, 11))
    assert result.equal_spacing_plausible and "never occur" in result.verdict
    shifted = ordinal_spacing(grades - 5)  # any integer labels
    assert shifted.lr_stat == pytest.approx(result.lr_stat, rel=1e-6)


# 8. raw grades are normalised only when told how


def test_mean_score_needs_the_scale_of_raw_grades():
    df = pd.DataFrame({"q": range(6), "grade": [1, 10, 7, 8, 9, 9]})
    with pytest.raises(StatsError, match="range from 1 to 10, outside \\[0, 1\\]: pass scale="):
        mean_score(df, score="grade", case="q", system=None)
    row = mean_score(df, score="grade", case="q", system=None, scale=(1, 10)).iloc[0]
    assert row["value"] == pytest.approx(((np.array([1, 10, 7, 8, 9, 9]) - 1) / 9).mean())


# 9. an interval never collapses silently on a small sample


def test_five_passes_of_five_get_a_wilson_interval():
    from statsmodels.stats.proportion import proportion_confint

    row = mean_score([1.0] * 5).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        proportion_confint(5, 5, method="wilson")
    )
    assert row["ci_low"] < 1 and "0/1 scores" in row["method"]


# 10. missing values are skipped and counted


def test_summarize_without_passed_and_arrays_with_nan():
    df = pd.DataFrame({"case_id": list("abc"), "score": [0.2, None, 0.8]})
    table = summarize(df, case="case_id", system=None)
    assert table["metric"].tolist() == ["mean_score"] and table.loc[0, "n"] == 2
    assert pass_rate([True, None, False]).loc[0, "n_missing"] == 1


# Make the class impossible: properties that hold for every metric


frames = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.sampled_from(["x", "y"]), st.floats(0, 1)),
    min_size=6,
    max_size=40,
)


def as_frame(rows):
    df = pd.DataFrame(rows, columns=["case_id", "system", "score"])
    df["passed"] = df["score"] >= 0.5
    df["repeat"] = df.groupby(["case_id", "system"]).cumcount()
    return df


def all_metrics(df, **names):
    case, system, score = (
        names.get("case", "case_id"),
        names.get("system", "system"),
        names.get("score", "score"),
    )
    passed = names.get("passed", "passed")
    out = [
        mean_score(df, by=system, case=case, system=system, score=score, bimodality=False),
        pass_rate(df, by=system, case=case, system=system, passed=passed),
    ]
    if df[system].nunique() == 2:
        out.append(win_rate(df, "x", "y", case=case, system=system, score=score,
                            repeat=names.get("repeat", "repeat"), n_resamples=200))  # fmt: skip
    return [
        t.drop(columns=[c for c in t.columns if c in (system,)]).reset_index(drop=True) for t in out
    ]


def same(left, right, *, text=True):
    for a, b in zip(left, right, strict=True):
        if not text:  # the unit and method strings name the columns used: only numbers compared
            a, b = (t.drop(columns=["unit", "method"], errors="ignore") for t in (a, b))
        pd.testing.assert_frame_equal(a, b, check_dtype=False)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames, st.randoms())
def test_permuting_rows_never_changes_a_number(rows, rnd):
    df = as_frame(rows)
    shuffled = df.sample(frac=1, random_state=rnd.randint(0, 10**6)).reset_index(drop=True)
    same(all_metrics(df), all_metrics(shuffled))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames)
def test_renaming_columns_and_passing_the_mapping_gives_the_same_numbers(rows):
    df = as_frame(rows)
    renamed = df.rename(columns={"case_id": "question", "system": "model_name", "score": "s",
                                 "passed": "ok", "repeat": "epoch"})  # fmt: skip
    names = dict(case="question", system="model_name", score="s", passed="ok", repeat="epoch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(all_metrics(df), all_metrics(renamed, **names), text=False)


@settings(max_examples=20, deadline=None)
@given(frames)
def test_an_unrelated_column_changes_nothing_and_a_missing_unit_always_raises(rows):
    df = as_frame(rows)
    same(all_metrics(df), all_metrics(df.assign(notes="irrelevant", question_id=99)))
    for metric in (mean_score, pass_rate):
        with pytest.raises(StatsError, match=r"no 'probe' column .*pass case="):
            metric(df)  # the default unit is the results' case identity: refused, never rows
        with pytest.raises(StatsError, match="no 'case_id' column"):
            metric(df.drop(columns=["case_id"]), case="case_id")
