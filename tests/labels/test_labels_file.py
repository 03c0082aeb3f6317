"""The labels file survives a crash and hostile lines (issue 24.5, 24.19): a torn tail is cut
before the next label is appended; the Labeler writes only what its reader accepts; the reader
refuses deep, huge-integer and non-UTF-8 lines in one line."""

from __future__ import annotations

import pandas as pd
import pytest

from jevalkit.errors import UsageError
from jevalkit.labels import append_label, label_record, read_labels
from jevalkit.widgets import Labeler


def test_a_label_after_a_torn_line_is_not_glued_onto_it(tmp_path):
    path = tmp_path / "labels.jsonl"
    append_label(path, label_record("m", "c0", "1", "ann"))
    whole = path.read_bytes()
    path.write_bytes(whole + whole[: len(whole) // 2])  # the kernel died mid-write
    items = pd.DataFrame({"system": "m", "case_id": ["c0", "c1"], "output": ["a", "b"]})
    labeler = Labeler(items, levels=["1", "2"], out=path, labeller="ann")
    labeler.press("2")
    assert read_labels(path)[["case_id", "level"]].values.tolist() == [["c0", "1"], ["c1", "2"]]


@pytest.mark.parametrize("bad", [0, 2, float("inf"), float("nan"), -0.5, True])
def test_the_labeler_refuses_probabilities_its_reader_would_refuse(tmp_path, bad):
    items = pd.DataFrame(
        {"system": "m", "case_id": ["c0"], "output": ["a"], "sampling_probability": [bad]}
    )
    if bad != bad:  # NaN is "not sampled", as read from a frame: allowed, written as null
        Labeler(items, levels=["1", "2"], out=tmp_path / "l.jsonl").press("1")
        assert read_labels(tmp_path / "l.jsonl")["sampling_probability"].isna().all()
        return
    with pytest.raises(UsageError, match=r"sampling_probability must be in \(0, 1\]"):
        Labeler(items, levels=["1", "2"], out=tmp_path / "l.jsonl")
    with pytest.raises(UsageError, match=r"sampling_probability must be in \(0, 1\]"):
        label_record("m", "c0", "1", "ann", sampling_probability=bad)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "line 2: nested too deeply"),
        (b'{"case_id": ' + b"9" * 5000 + b', "labeller": "a"}', "line 2: not JSON"),
        (b'{"case_id": "c\xff", "labeller": "a"}', r"line 2: not UTF-8 \(byte 14\)"),
    ],
)
def test_hostile_lines_are_refused_in_one_line(tmp_path, line, needle):
    path = tmp_path / "labels.jsonl"
    append_label(path, label_record("m", "c0", "1", "ann"))
    with path.open("ab") as fh:
        fh.write(line + b"\n")
    with pytest.raises(UsageError, match=needle):
        read_labels(path)


def test_a_torn_last_label_cut_before_appending_is_said_naming_the_file(tmp_path):
    # issue 35 review, as for results files: the cut was silent
    path = tmp_path / "labels.jsonl"
    append_label(path, label_record("m", "c0", "1", "ann"))
    with path.open("a") as fh:
        fh.write('{"system": "m", "case_id": "c1", "lev')
    with pytest.warns(UserWarning, match=r"labels\.jsonl: its last line was torn \(37 bytes"):
        append_label(path, label_record("m", "c2", "1", "ann"))
    assert read_labels(path)["case_id"].tolist() == ["c0", "c2"]
