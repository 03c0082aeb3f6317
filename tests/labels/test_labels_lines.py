"""The labels file is read by the shared strict line reader (jsontext.json_line): a hostile
line is one UsageError naming the file and line, never a traceback."""

from __future__ import annotations

import pytest

from jevalkit.errors import UsageError
from jevalkit.labels import read_labels

GOOD = b'{"case_id": "c1", "labeller": "ann", "level": "pass"}\n'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "line 2: nested too deeply"),
        (b'{"case_id": "c2", "labeller": "ann", "level": NaN}', "line 2: not JSON (NaN is"),
        (b'{"case_id" "c2"}', "line 2: not JSON (Expecting ':' delimiter)"),
    ],
)
def test_a_bad_labels_line_is_one_line_naming_it(tmp_path, line, message):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(GOOD + line + b"\n")
    with pytest.raises(UsageError) as caught:
        read_labels(path)
    assert f"labels.jsonl: {message}" in str(caught.value)


def test_good_lines_are_read(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(GOOD)
    assert read_labels(path)["level"].tolist() == ["pass"]
