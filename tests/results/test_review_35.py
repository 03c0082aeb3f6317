"""What a hostile review of the results layer found open (issue 35): a merge of an incomplete set
of shards, two different rows of one key inside one part, a blank label, a torn last row mended
without a word, rows of an unknown kind or an empty model. Each is one line naming the file,
field or value, exit 2 in the CLI, and no row lost."""

from __future__ import annotations

import json
import warnings

import pytest

import jevalkit
from jevalkit.cli import main
from jevalkit.errors import ResultsError, UsageError
from jevalkit.results import (
    ResultRow,
    iter_rows,
    part_files,
    parts_dir,
    read_results,
    row_key,
    shard_of,
)
from jevalkit.runner import RunSettings

PROBE = "schema-ten-records"


def shard(server, out, which, **options):
    defaults = dict(base_url=server.base_url, out=out, repeats=6, progress=False, cache=False)
    return jevalkit.run(PROBE, "m", shard=which, **{**defaults, **options})


def one_line(capsys, argv, code=2):
    assert main(argv) == code
    shown = capsys.readouterr()
    lines = [line for line in shown.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in shown.err, shown.err
    return lines[0], shown.out


def test_a_merge_with_a_shard_missing_is_refused_saying_how_many_and_partial_keeps_the_parts(
    openai_server, tmp_path, capsys
):
    out = tmp_path / "r.jsonl"
    for which in ("0/3", "2/3"):
        shard(openai_server, out, which)
    before = {p: p.read_bytes() for p in part_files(out)}
    line, _ = one_line(capsys, ["merge", str(out)])
    assert "2 of the 3 planned shards" in line and "of the 6 planned jobs" in line, line
    assert "shard 1 has no part file" in line and "--partial" in line, line
    assert not out.exists() and {p: p.read_bytes() for p in part_files(out)} == before
    # --partial merges what there is, says so, and keeps every part for the complete merge
    assert main(["merge", str(out), "--partial"]) == 0
    shown = capsys.readouterr()
    said = [line for line in shown.err.splitlines() if line.strip()]
    assert len(said) == 1 and "a partial merge of 2 of the 3 planned shards" in said[0], said
    assert "the part files are kept" in said[0] and "the part files are kept" in shown.out
    merged = len(read_results(out))
    assert 0 < merged < 6 and {p: p.read_bytes() for p in part_files(out)} == before
    shard(openai_server, out, "1/3")  # the missing shard, then the complete merge
    assert main(["merge", str(out)]) == 0
    capsys.readouterr()
    assert len(list(iter_rows(out))) == 6 and not parts_dir(out).exists()


def test_a_shard_that_stopped_early_is_refused_naming_its_part_and_counts(
    openai_server, tmp_path, capsys
):
    out = tmp_path / "r.jsonl"
    shard(openai_server, out, "0/2")
    shard(openai_server, out, "1/2", budget_requests=1)  # stops after one request
    part = part_files(out)[1]
    assert len(list(iter_rows(part))) == 1
    line, _ = one_line(capsys, ["merge", str(out)])
    assert "1 of the 2 planned shards" in line and "shard 1 ran 1 of its" in line, line
    assert f"({part.name} stopped early)" in line, line
    shard(openai_server, out, "1/2")  # resumes the rest of its jobs
    assert main(["merge", str(out)]) == 0
    assert len(read_results(out)) == 6


def test_a_results_file_merged_before_counts_its_rows_as_done(openai_server, tmp_path, capsys):
    # the shards merged; one row turned out an error; its shard alone retries it: the other
    # shard has no part any more, but its rows are in the results file, so the set is complete
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    assert main(["merge", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    mine = next(i for i, r in enumerate(rows) if shard_of(row_key(r), 2) == 1)
    rows[mine] = {**rows[mine], "output": None, "error": {"type": "HTTPError", "message": "500"}}
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sent = len(openai_server.requests)
    shard(openai_server, out, "1/2", retry_errors=True)
    assert len(openai_server.requests) == sent + 1 and len(part_files(out)) == 1
    assert main(["merge", str(out)]) == 0
    assert "1 replacing error rows" in capsys.readouterr().out
    merged = read_results(out)
    assert len(merged) == 6 and merged["error"].isna().all() and not parts_dir(out).exists()


def test_two_different_rows_of_one_key_inside_one_part_are_refused(openai_server, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    part = part_files(out)[0]
    first = json.loads(part.read_bytes().splitlines()[0])
    n_lines = len(part.read_bytes().splitlines())
    with part.open("a") as fh:  # another invocation's answer, pasted in (two shards' files joined)
        fh.write(json.dumps({**first, "output": "another answer", "run_id": "other"}) + "\n")
    before = {p: p.read_bytes() for p in part_files(out)}
    line, _ = one_line(capsys, ["merge", str(out)])
    assert f"{part}:{n_lines + 1}" in line and str(row_key(first)) in line, line
    assert "line 1 of the same part" in line, line
    assert not out.exists() and {p: p.read_bytes() for p in part_files(out)} == before


def test_a_later_row_replacing_an_error_row_in_one_part_still_merges(openai_server, tmp_path):
    # what --retry-errors appends to a part: the error row, then its answer
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    part = part_files(out)[0]
    lines = part.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    error = {**first, "output": None, "error": {"type": "HTTPError", "message": "500"}}
    part.write_bytes(json.dumps(error).encode() + b"\n" + b"".join(lines))
    jevalkit.results.merge_parts(out)
    rows = read_results(out)
    assert len(rows) == 6 and rows["error"].isna().all()


@pytest.mark.parametrize("label", ["", "  ", "\t"])
def test_an_empty_or_blank_label_is_refused_in_one_line(openai_server, tmp_path, capsys, label):
    out = tmp_path / "r.jsonl"
    argv = ["run", PROBE, "--model", "m", "--base-url", openai_server.base_url]
    line, _ = one_line(capsys, [*argv, "--label", label, "--out", str(out)])
    assert "label must name the configuration" in line and "got '" in line, line
    assert not out.exists() and not openai_server.requests
    with pytest.raises(UsageError, match="label must name the configuration"):
        RunSettings(label=label)
    with pytest.raises(UsageError, match="label must name the configuration"):
        jevalkit.runner.judge(
            "factuality", tmp_path / "nothing.jsonl", "m", out=tmp_path / "j.jsonl", label=label
        )


def test_a_torn_last_row_dropped_on_resume_is_said_naming_the_file(openai_server, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    argv = ["run", PROBE, "--model", "m", "--base-url", openai_server.base_url, "--no-cache"]
    argv += ["--repeats", "3", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:-1]) + lines[-1][:30])  # a crash tore the last write
    assert main(argv) == 0
    err = capsys.readouterr().err
    torn = [line for line in err.splitlines() if "torn" in line]
    assert len(torn) == 1 and str(out) in torn[0] and "30 bytes" in torn[0], err
    assert "sent again" in torn[0], torn[0]
    assert len(list(iter_rows(out))) == 3  # the dropped row was run again
    with warnings.catch_warnings(record=True) as caught:  # and in Python, a warning
        warnings.simplefilter("always")
        out.write_bytes(out.read_bytes()[:-10])
        jevalkit.run(
            PROBE,
            "m",
            base_url=openai_server.base_url,
            out=out,
            repeats=3,
            progress=False,
            cache=False,
        )
    assert any("torn" in str(w.message) and str(out) in str(w.message) for w in caught)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("kind", "bogus", 'kind: "bogus" is not one of'),
        ("kind", "", 'kind: "" is not one of'),
        ("model", "", "model: "),
        ("model", "  ", "model: "),
    ],
)
def test_a_row_of_an_unknown_kind_or_an_empty_model_is_refused_naming_line_and_field(
    tmp_path, field, value, words
):
    good = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0)
    bad = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=1)
    path = tmp_path / "r.jsonl"
    path.write_text(good.to_json() + "\n" + json.dumps({**bad.__dict__, field: value}) + "\n")
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: {field}") and words in message, message
    assert "\n" not in message
