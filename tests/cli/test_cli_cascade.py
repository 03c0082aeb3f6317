"""``jevalkit cascade calibrate`` and ``jevalkit judge --cascade`` against the loopback server,
with two judge models that answer with different logprobs: which cases each judge is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from cascade_cases import calibrated_runs, case, new_cases, sent, write_cases

from jevalkit._paths import data_dir
from jevalkit.cli import main
from jevalkit.errors import StatsError
from jevalkit.labels import append_label, calibrate_cascade, label_record, load_cascade, read_labels
from jevalkit.results import read_results

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def calibrated(openai_server, tmp_path):
    return calibrated_runs(openai_server, tmp_path)


def test_calibrate_prints_the_guarantee_and_the_stages(calibrated, capsys):
    tmp_path, labels = calibrated
    argv = ["cascade", "calibrate", str(tmp_path / "small.jsonl"), str(tmp_path / "big.jsonl")]
    argv += ["--labels", str(labels), "--target", "0.8", "--confidence", "0.8"]
    argv += ["--min-items", "10", "--out", str(tmp_path / "cascade.json")]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("with probability at least 80% over the calibration draw")
    cascade = load_cascade(tmp_path / "cascade.json")
    assert cascade.judges == ("small", "big")
    assert cascade.thresholds == pytest.approx((0.97, 0.95))
    assert cascade.stages["n_decided"].tolist() == [30, 20]  # 10 left for people
    assert cascade.evaluator == "security@1" and cascade.prompt_hash
    small = cascade.steps[0]
    assert small.config.prompt_style == "chat" and small.base_url.endswith("/v1")


def test_judge_with_a_cascade_sends_each_judge_only_what_it_must(calibrated, openai_server, capsys):
    tmp_path, labels = calibrated
    argv = ["cascade", "calibrate", str(tmp_path / "small.jsonl"), str(tmp_path / "big.jsonl")]
    argv += ["--labels", str(labels), "--target", "0.8", "--confidence", "0.8"]
    argv += ["--min-items", "10", "--out", str(tmp_path / "cascade.json")]
    assert main(argv) == 0
    openai_server.requests.clear()
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    argv = ["judge", "security", "--data", str(data), "--cascade", str(tmp_path / "cascade.json")]
    argv += ["--out", str(tmp_path / "run.jsonl"), "--base-url", openai_server.base_url]
    argv += ["--for-people", str(tmp_path / "people.jsonl")]
    capsys.readouterr()
    assert main(argv) == 0
    assert sent(openai_server, "small") == [f"n{i:02d}" for i in range(20)]
    assert sent(openai_server, "big") == [f"n{i:02d}" for i in range(10, 20)]
    out = capsys.readouterr().out
    assert "15 of 20 case(s) decided by a judge; 5 for people" in out
    # each judge's rows are kept as usual, in its own results file
    small = read_results(tmp_path / "run__small.jsonl")
    big = read_results(tmp_path / "run__big.jsonl")
    assert sorted(small["case_id"]) == [f"n{i:02d}" for i in range(20)]
    assert sorted(big["case_id"]) == [f"n{i:02d}" for i in range(10, 20)]
    people = pd.read_json(tmp_path / "people.jsonl", lines=True)
    assert people["case_id"].tolist() == [f"n{i:02d}" for i in range(15, 20)]
    assert people["output"].str.startswith("answer n1").all()  # the answer, not a verdict
    # the same command again resumes: nothing is sent
    openai_server.requests.clear()
    assert main(argv) == 0
    assert openai_server.requests == []


def test_a_cascade_file_edited_by_hand_is_refused_in_one_line(calibrated, capsys):
    tmp_path, labels = calibrated
    argv = ["cascade", "calibrate", str(tmp_path / "small.jsonl"), str(tmp_path / "big.jsonl")]
    argv += ["--labels", str(labels), "--target", "0.8", "--confidence", "0.8"]
    argv += ["--min-items", "10", "--out", str(tmp_path / "cascade.json")]
    assert main(argv) == 0
    record = json.loads((tmp_path / "cascade.json").read_text())
    record["steps"][0]["threshold"] = 0.5  # lowered by hand: the guarantee would be a lie
    (tmp_path / "edited.json").write_text(json.dumps(record))
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    capsys.readouterr()
    argv = ["judge", "security", "--data", str(data), "--cascade", str(tmp_path / "edited.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "edited after calibration" in err
    record["steps"][0]["threshold"] = 0.97
    record["steps"][1]["base_url"] = "http://127.0.0.1:1/v1"  # issue 53: endpoints are digested
    (tmp_path / "moved.json").write_text(json.dumps(record))
    with pytest.raises(StatsError, match="edited after calibration"):
        load_cascade(tmp_path / "moved.json")
    # the bundled file is of the current format (its digest covers the endpoints) and reads
    bundled = REPO / "data" / "runs" / "cascade" / "cascade.json"
    assert json.loads(bundled.read_text())["format"] == "jevalkit-cascade/2"
    assert load_cascade(bundled).judges
    # a file of the first format (no calibration confidences for the shift check) is refused
    old = {**json.loads(bundled.read_text()), "format": "jevalkit-cascade/1"}
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(StatsError, match=r"format jevalkit-cascade/1.*calibrate again"):
        load_cascade(tmp_path / "old.json")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "small"], "--model with --cascade"),
        (["--prompt-style", "completion"], "--prompt-style with --cascade"),
    ],
)
def test_judge_flags_a_cascade_already_says_are_refused(calibrated, capsys, extra, message):
    tmp_path, labels = calibrated
    argv = ["cascade", "calibrate", str(tmp_path / "small.jsonl"), str(tmp_path / "big.jsonl")]
    argv += ["--labels", str(labels), "--target", "0.8", "--confidence", "0.8"]
    argv += ["--min-items", "10", "--out", str(tmp_path / "cascade.json")]
    assert main(argv) == 0
    capsys.readouterr()
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    argv = ["judge", "security", "--data", str(data), "--cascade", str(tmp_path / "cascade.json")]
    assert main([*argv, *extra]) == 2
    assert message in capsys.readouterr().err
    assert main(["judge", "faithfulness", "--data", "faithfulness", "--cascade", argv[-1]]) == 2
    assert "calibrated for the judge security@1, not faithfulness" in capsys.readouterr().err


def test_calibrate_refuses_in_one_line(calibrated, capsys, tmp_path):
    tmp, labels = calibrated
    both = tmp / "both.jsonl"
    both.write_text((tmp / "small.jsonl").read_text() + (tmp / "big.jsonl").read_text())
    argv = [
        "cascade",
        "calibrate",
        str(both),
        "--labels",
        str(labels),
        "--out",
        str(tmp / "c.json"),
    ]
    assert main(argv) == 2
    assert "holds 2 judges (big, small): say the cascade's order with --judges" in (
        capsys.readouterr().err
    )
    assert main([*argv, "--judges", "small", "gpt"]) == 2
    assert (
        "judge 'gpt' has no rows; the judge rows hold ['big', 'small']" in capsys.readouterr().err
    )
    assert main(["cascade", "calibrate", str(tmp / "nope.jsonl"), "--labels", str(labels),
                 "--out", str(tmp / "c.json")]) == 2  # fmt: skip
    assert "nope.jsonl: no results file there" in capsys.readouterr().err
    assert not (tmp / "c.json").exists()


def test_calibrating_on_the_cascades_own_queue_is_one_line(tmp_path, capsys):
    # issue 39 review: the people's queue of a cascade, labelled in the Labeler (which records
    # the plan's strategy), fed back as calibration labels: refused, saying why and what to bring
    examples = data_dir() / "examples"
    judged = read_results(examples / "cascade_judged.jsonl")
    cascade = calibrate_cascade(
        judged,
        read_labels(examples / "cascade_labels.jsonl"),
        judges=["small-judge", "large-judge"],
    )
    queue = cascade.apply(judged).query("decided_by == 'person'")
    labels = tmp_path / "queue-labels.jsonl"
    for row in queue.itertuples():
        append_label(labels, label_record(row.system, row.case_id, "safe", "ann", 1.0, "cascade"))
    argv = ["cascade", "calibrate", str(examples / "cascade_judged.jsonl"), "--judges"]
    argv += [
        "small-judge",
        "large-judge",
        "--labels",
        str(labels),
        "--out",
        str(tmp_path / "c.json"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "strategy 'cascade'" in err and "strategy='random'" in err, err
    assert not (tmp_path / "c.json").exists()


def test_new_cases_unlike_the_labelled_ones_go_to_people_unless_accepted(
    calibrated, openai_server, capsys
):
    """Issue 51: the small judge is unsure (0.6) of all 40 new cases where it was sure of half
    the labelled ones: the shift check names the stage and every case goes to people; with
    --accept-shift the cascade decides as usual."""
    tmp_path, labels = calibrated
    argv = ["cascade", "calibrate", str(tmp_path / "small.jsonl"), str(tmp_path / "big.jsonl")]
    argv += ["--labels", str(labels), "--target", "0.8", "--confidence", "0.8"]
    argv += ["--min-items", "10", "--out", str(tmp_path / "cascade.json")]
    assert main(argv) == 0
    harder = [case(f"h{i:02d}", (0.6, "Yes"), (0.95, "Yes"), None) for i in range(40)]
    data = write_cases(tmp_path / "harder.jsonl", harder)
    argv = ["judge", "security", "--data", str(data), "--cascade", str(tmp_path / "cascade.json")]
    argv += ["--out", str(tmp_path / "h.jsonl"), "--base-url", openai_server.base_url]
    argv += ["--for-people", str(tmp_path / "people.jsonl")]
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "stage 'small': the new items' confidence is not like the calibration items'" in out
    assert "0 of 40 case(s) decided by a judge; 40 for people" in out
    assert len(pd.read_json(tmp_path / "people.jsonl", lines=True)) == 40
    assert main([*argv, "--accept-shift"]) == 0  # resumes: nothing is sent again
    out = capsys.readouterr().out
    assert "accepted: stage 'small'" in out
    assert "40 of 40 case(s) decided by a judge; 0 for people" in out
    assert main(["judge", "security", "--data", str(data), "--accept-shift"]) == 2
    assert "--accept-shift goes with --cascade" in capsys.readouterr().err


def test_calibrate_with_the_expected_guarantee_names_it_and_refuses_mixed_flags(calibrated, capsys):
    tmp_path, labels = calibrated
    runs = [str(tmp_path / "small.jsonl"), str(tmp_path / "big.jsonl")]
    argv = ["cascade", "calibrate", *runs, "--labels", str(labels)]
    out = str(tmp_path / "expected.json")
    assert main([*argv, "--guarantee", "expected", "--risk", "0.2", "--out", out]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("in expectation over the calibration draw")
    cascade = load_cascade(out)
    assert cascade.guarantee_kind == "expected" and cascade.risk == 0.2
    judged = pd.concat([read_results(p) for p in runs], ignore_index=True)
    direct = calibrate_cascade(
        judged, read_labels(labels), judges=["small", "big"], guarantee="expected", risk=0.2
    )
    assert cascade.thresholds == direct.thresholds and cascade.digest == direct.digest
    for extra, message in (
        (["--guarantee", "expected"], "needs risk (--risk)"),
        (["--risk", "0.2"], "risk (--risk) is the 'expected' guarantee's"),
        (["--guarantee", "expected", "--risk", "0.2", "--target", "0.8"], "takes risk alone"),
    ):
        assert main([*argv, *extra, "--out", str(tmp_path / "no.json")]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    with pytest.raises(SystemExit) as exit_code:  # argparse's own refusal
        main([*argv, "--guarantee", "typical", "--out", str(tmp_path / "no.json")])
    assert exit_code.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert not (tmp_path / "no.json").exists()
