"""A fitted item model saved as a file and read back: the same numbers, the same anchors and
estimates; hostile files refused in one line."""

from __future__ import annotations

import json
import os
import re

import pandas as pd
import pytest

from jevalkit.errors import StatsError
from jevalkit.items import estimate, fit_irt, load_fit, select, simulate_2pl


@pytest.fixture(scope="module")
def benchmark():
    df = simulate_2pl(n_systems=31, n_items=60, seed=3).rows.assign(probe="p", version=1)
    df.loc[df["case_id"] == "q0005", "score"] = 1.0  # an item no model can calibrate
    return df[df["system"] != "sys30"], df[df["system"] == "sys30"]


@pytest.mark.parametrize("model", ["2pl", "1pl"])
@pytest.mark.parametrize("scores", [True, False])
def test_a_saved_fit_reads_back_with_the_same_numbers_anchors_and_estimates(
    benchmark, tmp_path, model, scores
):
    past, new = benchmark
    fit = fit_irt(past, model=model)
    again = load_fit(fit.save(tmp_path / "fit.json", scores=scores))
    pd.testing.assert_frame_equal(again.items, fit.items)
    pd.testing.assert_frame_equal(again.systems, fit.systems)
    assert again.scalars() == fit.scalars()
    assert again.matrix.columns == fit.matrix.columns
    assert again.matrix.item_ids() == fit.matrix.item_ids()
    assert "not estimable" in again.items.set_index("case_id").loc["q0005", "status"]
    if scores:
        pd.testing.assert_frame_equal(
            pd.DataFrame(again.matrix.scores), pd.DataFrame(fit.matrix.scores)
        )
        assert (again.matrix.weight == fit.matrix.weight).all()
    else:
        assert again.matrix.scores.shape == (0, 60) and "sys00" in again.systems["system"].values
    for method in ("irt", "stratified"):
        anchors = select(fit, 12, method=method, seed=4)
        pd.testing.assert_frame_equal(select(again, 12, method=method, seed=4), anchors)
        pd.testing.assert_frame_equal(estimate(again, anchors, new), estimate(fit, anchors, new))


def test_integer_case_ids_stay_integers(tmp_path):
    df = simulate_2pl(n_systems=12, n_items=20, seed=1).rows
    df["case_id"] = df["case_id"].str[1:].astype(int)
    fit = fit_irt(df, case="case_id")
    again = load_fit(fit.save(tmp_path / "fit.json"))
    assert again.matrix.item_ids() == list(range(20))


def test_hostile_files_are_refused_in_one_line(benchmark, tmp_path):
    past, _ = benchmark
    good = json.loads(fit_irt(past).save(tmp_path / "good.json").read_text())
    cases = {
        "missing.json": None,
        "empty.json": "",
        "text.json": "not json at all",
        "nan.json": '{"format": "jevalkit-irt-fit", "loglik": NaN}',
        "other.json": json.dumps({"format": "something-else"}),
        "list.json": "[1, 2]",
        "no-items.json": json.dumps({**good, "items": "none"}),
        "bad-model.json": json.dumps({**good, "model": "3pl"}),
        "short.json": json.dumps({**good, "n_calibrated": 3}),
        "broken-matrix.json": json.dumps({**good, "matrix": {**good["matrix"], "scores": [[1]]}}),
        "nested.json": "[" * 100_000,
    }
    for name, text in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        with pytest.raises(StatsError) as caught:
            load_fit(path)
        message = str(caught.value)
        assert "\n" not in message and name in message, message


def test_a_file_whose_columns_or_past_scores_do_not_hold_is_refused_at_load(benchmark, tmp_path):
    """Columns that disagree with the item table, a scale that is not two numbers and a past
    mean score outside [0, 1] were loaded, and failed (a ValueError traceback for the scale)
    only after an active run had sent its first wave."""
    past, _ = benchmark
    good = json.loads(fit_irt(past).save(tmp_path / "good.json").read_text())
    columns = good["columns"]
    means = list(good["items"]["mean_score"])
    means[0] = 7.0
    cases = {
        "scale-text.json": {**good, "columns": {**columns, "scale": "abc"}},
        "scale-backwards.json": {**good, "columns": {**columns, "scale": [10, 1]}},
        "case-other.json": {**good, "columns": {**columns, "case": ["probe", "nope"]}},
        "system-number.json": {**good, "columns": {**columns, "system": 3}},
        "mean-seven.json": {**good, "items": {**good["items"], "mean_score": means}},
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(data))
        with pytest.raises(StatsError) as caught:
            load_fit(path)
        message = str(caught.value)
        assert "\n" not in message and name in message, message


# ---- issue 53: a prior named by its content; hostile priors refused at load -----------------


@pytest.mark.parametrize("scores", [True, False])
def test_a_fit_has_a_content_hash_its_file_keeps_and_any_change_moves(benchmark, tmp_path, scores):
    # an active plan names its prior by this hash: a fit.json replaced under the same name
    # (another fit, one number edited) is another prior
    past, _ = benchmark
    fit = fit_irt(past)
    path = fit.save(tmp_path / "fit.json", scores=scores)
    again = load_fit(path)
    assert len(again.content_hash) == 64
    assert again.content_hash == (fit.content_hash if scores else again.content_hash)
    assert load_fit(again.save(tmp_path / "again.json")).content_hash == again.content_hash
    record = json.loads(path.read_text())
    record["items"]["intercept"][3] += 1e-9
    (tmp_path / "edited.json").write_text(json.dumps(record))
    assert load_fit(tmp_path / "edited.json").content_hash != again.content_hash
    other = fit_irt(past[past["system"] != "sys00"])
    assert other.content_hash != fit.content_hash
    if not scores:  # the past scores are content: leaving them out is another file
        assert again.content_hash != fit.content_hash


@pytest.mark.parametrize("value", [1e308, -1e308, 5e3])
def test_a_prior_with_extreme_finite_parameters_is_refused_at_load(benchmark, tmp_path, value):
    # issue 53: 1e308 loaded, then an active run crashed after 2 requests ("Probabilities
    # contain NaN": a x ability overflowed to inf, inf - inf is NaN)
    past, _ = benchmark
    record = json.loads(fit_irt(past).save(tmp_path / "fit.json").read_text())
    record["items"]["discrimination"][0] = value
    (tmp_path / "x.json").write_text(json.dumps(record))
    with pytest.raises(StatsError, match=r"x.json: not a consistent item model \(a calibrated"):
        load_fit(tmp_path / "x.json")


@pytest.mark.timeout(60)
def test_a_fifo_a_device_or_a_folder_as_the_prior_is_one_line_not_a_hang(tmp_path):
    # issue 53: a FIFO as --prior hung `run`; /dev/zero read until the memory ran out
    fifo = tmp_path / "fit.json"
    os.mkfifo(fifo)
    for path, words in (
        (fifo, "not a regular file (a FIFO)"),
        ("/dev/zero", "not a regular file (a character device)"),
        (tmp_path, "is a folder"),
        (tmp_path / ("x" * 300), "over the 255 a file system allows"),
    ):
        with pytest.raises(StatsError, match=re.escape(words)):
            load_fit(path)


def test_save_fit_replaces_a_link_and_refuses_a_device(benchmark, tmp_path):
    # issue 53: --save-fit onto /dev/null replaced the device node with a regular file (as
    # root); a symlink at the name is replaced, never written through
    past, _ = benchmark
    fit = fit_irt(past)
    with pytest.raises(StatsError, match=r"/dev/null: not a regular file \(a character device\)"):
        fit.save("/dev/null")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "fit.json").symlink_to(victim)
    fit.save(tmp_path / "fit.json")
    assert victim.read_text() == "precious" and not (tmp_path / "fit.json").is_symlink()
