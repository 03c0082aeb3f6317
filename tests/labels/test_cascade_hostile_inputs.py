"""A hostile review of issues 51 and 53: cascade files whose digest was recomputed after an edit
(anyone can: it is a checksum, not a signature), judge rows that are no probability
distribution, and a cascade applied to rows none of its judges wrote. Each is refused in one
line naming the file, field or value, never routed silently."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from jevalkit.cli import main
from jevalkit.errors import JudgeError, StatsError
from jevalkit.labels import calibrate_cascade, load_cascade


@pytest.fixture(scope="module")
def calibrated():
    """Two judges over 600 items, a random half labelled; both certified at 80%."""
    rng = np.random.default_rng(7)
    n = 600
    truth = rng.random(n) < 0.5
    ids = [f"c{i:03d}" for i in range(n)]
    frames = []
    for judge, floor, cost in (("cheap", 0.5, 0.0), ("strong", 0.85, 0.002)):
        sure = rng.uniform(0.5, 1.0, n)
        right = rng.random(n) < floor + (0.99 - floor) * (sure - 0.5) / 0.5
        p_pass = np.where(np.where(right, truth, ~truth), sure, 1 - sure)
        frames.append(
            pd.DataFrame(
                {
                    "model": judge,
                    "system": "m",
                    "case_id": ids,
                    "cost_usd": cost,
                    "probs": [[1 - p, p] for p in p_pass],
                }
            )
        )
    judged = pd.concat(frames, ignore_index=True)
    labels = pd.DataFrame(
        {"system": "m", "case_id": ids[:300], "level": np.where(truth[:300], "pass", "fail")}
    )
    cascade = calibrate_cascade(
        judged, labels, judges=["cheap", "strong"], levels=["fail", "pass"], target_agreement=0.8
    )
    assert not any(math.isinf(t) for t in cascade.thresholds)
    return cascade, judged


def one_line_show(path, capsys) -> str:
    code = main(["cascade", "show", str(path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (code, err)
    return err


def test_a_cascade_applied_to_rows_of_other_judges_is_refused_not_empty(calibrated):
    # before: apply returned an empty table and summary said 0 decided and a share of 1.0
    cascade, judged = calibrated
    other = judged.assign(model=judged["model"].map({"cheap": "gpt-x", "strong": "gpt-y"}))
    for use in (cascade.apply, cascade.summary, cascade.shift):
        with pytest.raises(StatsError, match=r"none of the 1200 rows is by the cascade's judges"):
            use(other)
    # the same models asked with other judge parameters than calibrated: said so
    hashed = dataclasses.replace(
        cascade, steps=tuple(dataclasses.replace(s, params_hash="aaaa") for s in cascade.steps)
    )
    with pytest.raises(StatsError, match=r"judged with other judge parameters"):
        hashed.apply(judged.assign(params_hash="bbbb"))
    # rows of one of the judges are still applied (the rest pending), and no rows is no items
    assert set(cascade.apply(judged[judged["model"] == "cheap"])["decided_by"]) >= {"cheap"}
    assert cascade.apply(judged.iloc[:0]).empty


@pytest.mark.parametrize("probs", [[-3.0, 4.0], [0.2, 0.2], [0.5, 1.5]])
def test_judge_rows_that_are_no_distribution_are_refused(calibrated, probs):
    # before: probs [-3, 4] was read as confidence 4.0 and decided by any threshold
    cascade, judged = calibrated
    bad = judged.copy()
    bad.at[0, "probs"] = probs
    with pytest.raises(JudgeError, match=r"is not a probability distribution over the levels"):
        cascade.apply(bad)


def test_a_recomputed_digest_does_not_let_a_file_turn_the_shift_check_off(
    calibrated, tmp_path, capsys
):
    # before: calibration_confidence [] with a valid digest was read, and the shift check of a
    # deciding judge said "not tested" and routed every item as usual
    cascade, _ = calibrated
    edited = dataclasses.replace(cascade, references=((), cascade.references[1]))
    path = edited.save(tmp_path / "no_reference.json")
    err = one_line_show(path, capsys)
    assert "steps[0].calibration_confidence" in err and "got 0" in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"threshold": -5.0},
            r"steps\[0\]: threshold and calibration_confidence are probabilities",
        ),
        ({"threshold": 1e300}, r"between 0 and 1; got threshold 1e\+300"),
        ({"calls": 7}, r"steps\[0\].calls: 7 calls per item for 1 repeat"),
        ({"calls": 10**9}, r"steps\[0\].calls: 1000000000 calls per item"),
        ({"min_items": 0}, r"min_items must be a whole number >= 1, got 0"),
    ],
)
def test_a_cascade_file_with_a_recomputed_digest_is_still_checked_for_sense(
    calibrated, tmp_path, capsys, change, message
):
    # before: a threshold of -5 (every item decided), 10**9 calls per item and min_items 0 were
    # read as long as the digest was recomputed
    cascade, _ = calibrated
    if "threshold" in change:
        first = dataclasses.replace(cascade.steps[0], threshold=change["threshold"])
        edited = dataclasses.replace(
            cascade,
            steps=(first, *cascade.steps[1:]),
            thresholds=(change["threshold"], *cascade.thresholds[1:]),
        )
    elif "calls" in change:
        edited = dataclasses.replace(cascade, calls=(change["calls"], *cascade.calls[1:]))
    else:
        edited = dataclasses.replace(cascade, **change)
    path = edited.save(tmp_path / "edited.json")
    with pytest.raises(StatsError, match=message):
        load_cascade(path)
    assert str(path) in one_line_show(path, capsys)
    # the unedited cascade reads back
    assert load_cascade(cascade.save(tmp_path / "good.json")).thresholds == cascade.thresholds
