"""Every importer on a generated corpus of hostile files (issue 24.2, 24.7, 24.11, 24.14 and "close
the classes"): each file is read into rows or refused in one line naming it, never a traceback and
never 0 rows without a word; and every CLI command that reads a file, called in-process on the same
files, exits 0, or 2 with one line on stderr."""

from __future__ import annotations

import json
import zipfile

import pytest
from hostile_files import corpus, read_member, table_corpus

from jevalkit import io
from jevalkit.cli import main
from jevalkit.errors import ImportFormatError


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return corpus(tmp_path_factory.mktemp("hostile"))


def test_the_corpus_is_large_and_its_seeds_read(files):
    assert len(files) > 300
    seeds = [f for f in files if f[0].endswith(":valid")]
    for _, path, fmt, options in seeds:
        assert len(io.read(path, format=fmt, **options)) == 2


def test_every_reader_reads_or_refuses_each_hostile_file_in_one_line(files):
    outcomes = {"read": 0, "refused": 0}
    for name, path, fmt, options in files:
        try:
            frame = io.read(path, format=fmt, **options)
        except ImportFormatError as exc:
            message = str(exc)
            assert "\n" not in message and str(path) in message, (name, message)
            outcomes["refused"] += 1
        else:
            assert len(frame) > 0, name
            outcomes["read"] += 1
        try:
            io.detect_format(path)
        except ImportFormatError as exc:
            assert "\n" not in str(exc), name
    assert outcomes["read"] > 50 and outcomes["refused"] > 200, outcomes


# the sample fields the builtin engine reads; a damaged field it does not read (input, messages,
# events, ...) is refused by inspect_ai's schema and ignored by builtin, the rows being the same
BUILTIN_READS = {
    "sample.id",
    "sample.epoch",
    "sample.output",
    "sample.output.model",
    "sample.output.completion",
    "sample.scores",
    "sample.scores.match",
    "sample.scores.match.value",
    "sample.target",
    "sample.error",
    "sample.model_usage",
}


def test_both_inspect_engines_read_the_same_rows_or_both_refuse(files):
    pairs = {}
    for name, path, _, options in files:
        if name.startswith("inspect-eval:"):
            pairs.setdefault(name.split(":", 2)[2], {})[options["engine"]] = path
    assert len(pairs) > 20
    both_refused = 0
    for label, paths in pairs.items():
        got = {}
        for engine, path in paths.items():
            try:
                frame = io.read(path, format="inspect", engine=engine)
                got[engine] = sorted(
                    zip(frame["case_id"], frame["score"], frame["output"], strict=True)
                )
            except ImportFormatError:
                got[engine] = "refused"
        field = label.split("=")[0]
        if field in BUILTIN_READS or not field.startswith("sample."):
            assert got["builtin"] == got["inspect"], label
            both_refused += got["builtin"] == "refused"
        elif got["builtin"] != "refused" and got["inspect"] != "refused":
            assert got["builtin"] == got["inspect"], label
    assert both_refused >= 15


def test_a_current_eval_log_reads_without_inspect_ai_and_bombs_are_refused(files):
    by_name = {name: path for name, path, _, _ in files}
    valid = by_name["inspect-eval:builtin:valid"]
    assert {m.compress_type for m in zipfile.ZipFile(valid).infolist()} == {93}  # zstd members
    df = io.read(valid, format="inspect", engine="builtin")
    assert sorted(df["case_id"]) == ["s0", "s1"] and df["score"].tolist() == [1.0, 1.0]
    for engine in ("builtin", "inspect"):
        with pytest.raises(ImportFormatError, match="more than the 268,435,456 jevalkit reads"):
            io.read(by_name[f"inspect-eval:{engine}:bomb"], format="inspect", engine=engine)
        with pytest.raises(ImportFormatError, match=r"50 sample member.s. not listed in header"):
            io.read(
                by_name[f"inspect-eval:{engine}:unlisted-members"], format="inspect", engine=engine
            )
    assert json.loads(read_member(valid, "header.json"))["eval"]["task"] == "tiny"


COMMANDS = [
    lambda p, o: ["import", str(p), "--out", str(o)],
    lambda p, o: ["metrics", str(p), "--from", "auto"],
    lambda p, o: ["metrics", str(p)],
    lambda p, o: ["gate", str(p), "--from", "auto", "--min", "0.5"],
    lambda p, o: ["compare", str(p), str(p)],
    lambda p, o: ["items", str(p), "--from", "auto"],
    lambda p, o: ["leaderboard", str(p), "--from", "auto", "--resamples", "50"],
]


def test_every_command_on_any_hostile_file_exits_0_or_one_line_and_2(files, tmp_path, capsys):
    codes = {0: 0, 1: 0, 2: 0}
    for k, (name, path, _, _) in enumerate(files[::4]):
        for j, command in enumerate(COMMANDS):
            argv = command(path, tmp_path / f"out{k}_{j}.jsonl")
            code = main(argv)  # an exception escaping here is the traceback a user would see
            out, err = capsys.readouterr()
            assert code in (0, 1, 2), (name, argv, code)
            if code == 2 and err:
                lines = [
                    line for line in err.splitlines() if not line.startswith("jevalkit: warning")
                ]
                assert len(lines) == 1 and lines[0].startswith("jevalkit"), (name, argv, err)
            elif code == 2:  # the gate's own answer: REFUSED or UNDECIDED on stdout, with why
                assert argv[0] == "gate" and ("REFUSED: " in out or "UNDECIDED: " in out), (
                    name,
                    argv,
                    out,
                )
            codes[code] += 1
    assert codes[2] > 100, codes


def test_a_json_log_too_large_to_parse_whole_is_refused_before_reading(tmp_path):
    log = tmp_path / "log.json"
    with log.open("wb") as fh:
        fh.truncate(300 * 1024**2)  # sparse: 300 MB on paper, nothing on disk
    for engine in ("builtin", "inspect"):
        with pytest.raises(ImportFormatError, match="larger than 256 MB is not read"):
            io.read(log, format="inspect", engine=engine)


@pytest.mark.parametrize("name", ["pairwise.jsonl", "benchmark.jsonl"])
def test_a_file_saved_with_a_byte_order_mark_reads(tmp_path, name):
    """A JSONL file saved by a Windows editor starts with a UTF-8 BOM: it reads as without it,
    not 'not a JSON row (Expecting value)' or 'not a format jevalkit reads'."""
    from jevalkit.reports import example_path

    original = example_path(name)
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + original.read_bytes())
    assert io.read(path).equals(io.read(original))


def test_a_log_nested_900_deep_is_refused_in_one_line_by_every_reader_and_command(
    files, tmp_path, capsys
):
    # issue 37.12: a promptfoo file whose vars nest 900 deep parsed (the JSON parser allows
    # ~1,000), then `jevalkit import` ended in a RecursionError traceback writing it
    deep = [
        (name, path)
        for name, path, _, _ in files
        if path.suffix in (".json", ".jsonl")
        and '{"a": {"a": {"a": {"a":' in path.read_text("utf-8", "replace")
    ]
    assert {name.split(":")[0] for name, _ in deep} >= {
        "promptfoo",
        "inspect",
        "lm_eval",
        "jevalkit",
    }
    for k, (name, path) in enumerate(deep):
        out = tmp_path / f"d{k}.jsonl"
        for argv in (["import", str(path), "--out", str(out)], ["metrics", str(path)]):
            code = main(argv)  # an exception escaping here is the traceback a user would see
            err = capsys.readouterr().err
            if code != 0:
                lines = [x for x in err.splitlines() if not x.startswith("jevalkit: warning")]
                assert code == 2 and len(lines) == 1, (name, argv, err)
        if out.exists():  # written only when every value it holds is one jevalkit can read back
            assert main(["metrics", str(out)]) in (0, 1, 2)
            capsys.readouterr()


def test_any_table_reads_or_is_refused_in_one_line(tmp_path):
    # from_table is an importer too: fuzzed with the same hostile values on every run
    outcomes = {"read": 0, "refused": 0}
    for name, path in table_corpus(tmp_path):
        try:
            frame = io.from_table(path, case="q", system="m", score="s")
        except ImportFormatError as exc:
            assert "\n" not in str(exc), (name, str(exc))
            outcomes["refused"] += 1
            continue
        assert len(frame) > 0 or name.endswith("header-only"), name
        try:
            io.write_results(frame, tmp_path / f"{len(outcomes)}-{outcomes['read']}.jsonl")
        except ImportFormatError as exc:  # a value the results file cannot hold
            assert "\n" not in str(exc), (name, str(exc))
        outcomes["read"] += 1
    assert outcomes["read"] >= 2 and outcomes["refused"] > 20, outcomes
