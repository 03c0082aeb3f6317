"""``latest_rows`` answers rows by key and how many were replaced: ``len()`` of its answer must
give no number (a NamedTuple's would count its two fields, not the rows), and it still unpacks."""

from __future__ import annotations

import pytest

from jevalkit.results import ResultRow, latest_rows


def test_the_latest_rows_have_no_length_and_still_unpack(tmp_path):
    path = tmp_path / "r.jsonl"
    lines = [
        ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=i).to_json()
        for i in (0, 1, 2, 2)
    ]
    path.write_text("\n".join(lines) + "\n")
    read = latest_rows(path)
    assert len(read.rows) == 3 and read.replaced == 1
    rows, replaced = read
    assert rows is read.rows and replaced == 1
    with pytest.raises(TypeError, match=r"len\(result\.rows\)"):
        len(read)
    with pytest.raises(TypeError, match=r"result\.rows"):
        read[0]
