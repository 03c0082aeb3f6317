"""A results file reached through a symlink is one file: one lock, rewritten where it points,
and a link planted at the temporary file's name is never followed (found by a hostile review)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jevalkit.errors import ResultsError
from jevalkit.results import iter_rows, locked, write_rows


def test_a_link_planted_at_the_temporary_name_is_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / ".r.jsonl.tmp")
    write_rows(tmp_path / "r.jsonl", [{"a": 1}])
    assert victim.read_text() == "precious"
    assert not (tmp_path / "r.jsonl").is_symlink()
    assert [row["a"] for row in iter_rows(tmp_path / "r.jsonl")] == [1]


def test_a_linked_results_file_is_rewritten_where_it_points_and_stays_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "r.jsonl"
    target.write_text("")
    link = tmp_path / "link.jsonl"
    os.symlink(target, link)
    write_rows(link, [{"a": 2}])
    assert link.is_symlink()
    assert [row["a"] for row in iter_rows(target)] == [2]
    assert oct(target.stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("other", ["link", "dotdot"])
def test_a_link_or_another_spelling_of_the_file_shares_its_lock(tmp_path, other):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "r.jsonl"
    link = tmp_path / "link.jsonl"
    os.symlink(target, link)
    name = link if other == "link" else tmp_path / "real" / ".." / "real" / "r.jsonl"
    with (
        locked(target),
        pytest.raises(ResultsError, match="being written by another run"),
        locked(Path(name)),
    ):
        pass
