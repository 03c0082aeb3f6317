"""Hostile inputs for probes with cases: case files, --cases specs, resume, subset labels."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from probe_folders import write_probe

from jevalkit.errors import CaseFileError, ProbeError, UsageError
from jevalkit.probes import (
    cases_from_list,
    check_probes,
    load_probe,
    new_probe,
    publish_probes,
    read_case_file,
    select_cases,
)


def test_a_jsonl_value_with_a_unicode_line_separator_is_one_case(tmp_path):
    # JSON allows U+2028 / U+0085 unescaped inside a string; str.splitlines would tear the line
    path = tmp_path / "cases.jsonl"
    rows = [{"id": "a", "q": "x\u2028y"}, {"id": "b", "q": "p\x85q"}, {"id": "c", "q": "r"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows), "utf-8")
    cases, _ = read_case_file(path)
    assert [(c.id, c.fields["q"]) for c in cases] == [
        ("a", "x\u2028y"),
        ("b", "p\x85q"),
        ("c", "r"),
    ]


def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path):
    # csv.DictReader keeps the last of two same-named cells: the first would be dropped silently
    path = tmp_path / "cases.csv"
    path.write_text("id,question,question,expected\na,first,second,1\n")
    with pytest.raises(CaseFileError, match=r"cases.csv:1: .*'question' more than once"):
        read_case_file(path)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("1-", r"'1-' is not a position or range"),
        ("2-", r"'2-' is not a position or range"),
        ("1--2", r"'1--2' is not a position or range"),
        ("-3", r"'-3' is not a position or range"),
        ("1,,2", r"'' is not a position or range"),
        ("5-3", r"5-3 runs backwards; write 3-5"),
        ("0", r"0 is outside 1-10"),
        ("9-11", r"9-11 is outside 1-10"),
    ],
)
def test_malformed_or_reversed_case_ranges_are_refused(spec, message):
    # "1-" was read as case 1 alone; "5-3" was called "outside 1-10"
    cases = cases_from_list([{"id": f"c{i}"} for i in range(1, 11)], "p")
    with pytest.raises(UsageError, match=message):
        select_cases(cases, cases_spec=spec)
    picked, _ = select_cases(cases, cases_spec=" 2 - 3 , 10")
    assert [c.id for c in picked] == ["c2", "c3", "c10"]


def test_a_user_probe_whose_id_shadows_a_bundled_one_is_refused(tmp_path, monkeypatch):
    # `probes new` wrote it and `probes check --probes-dir` passed it, then every load through
    # $JEVALKIT_PROBES refused it ("in both")
    cases = tmp_path / "c.jsonl"
    cases.write_text('{"id": "a", "x": 1, "expected": "2"}\n')
    with pytest.raises(UsageError, match="'unit-conversion' is a bundled probe's"):
        new_probe("unit-conversion", cases=cases, probes_dir=tmp_path / "mine")
    assert not (tmp_path / "mine" / "unit-conversion").exists()
    root = tmp_path / "probes"
    write_probe(root, "unit-conversion")
    write_probe(root, "double")
    assert check_probes(root=root)["ok"].all()  # a folder of its own: no clash
    report = check_probes(root=root, beside_bundled=True)
    bad = report[~report["ok"]]
    assert bad["probe"].tolist() == ["unit-conversion@1"]
    assert "is also a bundled probe's" in bad["problem"].iloc[0]
    monkeypatch.setenv("JEVALKIT_PROBES", str(root))
    with pytest.raises(ProbeError, match="is in both"):
        load_probe("unit-conversion")
    assert load_probe("double").cases[0].id == "c01"


def test_a_format_one_probe_keeps_literal_braces_in_its_messages(tmp_path):
    # format 1 has no templates; its text with {{user.name}} (a Handlebars question) was refused
    # as "not a placeholder" once format 2 arrived: published format 1 files must stay valid
    source = load_probe("schema-ten-records@2")
    raw = yaml.safe_load(source.path.read_text())
    assert "format" not in raw
    raw["id"] = "handlebars"
    raw["messages"][-1]["content"] = "What do {{user.name}} and {{name}} print in Handlebars?"
    (tmp_path / "handlebars").mkdir()
    (tmp_path / "handlebars" / "v2.yaml").write_text(yaml.safe_dump(raw))
    probe = load_probe("handlebars", root=tmp_path)
    assert probe.chat_messages()[-1]["content"] == raw["messages"][-1]["content"]
    raw["format"] = 2  # in format 2 the same text is a template, and refused
    (tmp_path / "handlebars" / "v2.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ProbeError, match=r"'\{\{user.name\}\}' is not a placeholder"):
        load_probe("handlebars", root=tmp_path)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_a_sample_seed_numpy_cannot_take_is_refused_in_one_line(seed):
    # a negative --sample-seed ended the CLI in numpy's ValueError traceback
    cases = cases_from_list([{"id": f"c{i}"} for i in range(1, 11)], "p")
    with pytest.raises(UsageError, match=r"--sample-seed must be a whole number from 0 up"):
        select_cases(cases, sample=3, seed=seed)


def test_the_cli_refuses_a_negative_sample_seed_with_exit_2():
    import subprocess
    import sys

    args = ["run", "unit-conversion", "--model", "x", "--dry-run", "--sample", "3"]
    done = subprocess.run(
        [sys.executable, "-m", "jevalkit", *args, "--sample-seed", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--sample-seed must be a whole number from 0 up" in done.stderr


def test_a_jsonl_case_file_with_a_utf8_bom_reads_like_a_csv_one(tmp_path):
    # a CSV with a byte-order mark was read, the same JSONL was refused ("decode using utf-8-sig")
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "q": 1}\n{"id": "b", "q": 2}\n')
    cases, digest = read_case_file(path)
    assert [c.id for c in cases] == ["a", "b"] and len(digest) == 64


def jevalkit_cli(*argv: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """``jevalkit ARGV`` in a fresh interpreter, killed after ``timeout`` s (a hang fails)."""
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
    )


def one_line_refusal(done: subprocess.CompletedProcess, *words: str) -> None:
    """Refused without a traceback: one line on stderr and exit 2, or (``probes check``) the
    probe's line in its table and exit 1."""
    said = [x for x in (done.stderr + done.stdout).splitlines() if all(w in x for w in words)]
    assert done.returncode in (1, 2) and said, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 1


def csv_probe(root, text: str) -> None:
    write_probe(root, cases="cases.csv", publish=False)
    (root / "double" / "cases.csv").write_text(text)


def test_a_csv_field_past_the_csv_limit_is_refused_in_one_line(tmp_path):
    # issue 37.9: `_csv.Error: field larger than field limit (131072)` traceback
    csv_probe(tmp_path, "id,x,expected\nc01," + "9" * 200_000 + ",2\n")
    with pytest.raises(CaseFileError, match=r"cases.csv:2: a field longer than 131,072"):
        read_case_file(tmp_path / "double" / "cases.csv")
    for command in ("check", "list"):
        done = jevalkit_cli("probes", command, "--probes-dir", str(tmp_path))
        one_line_refusal(done, "cases.csv", "131,072 characters", "JSONL")


def test_a_csv_with_50002_columns_is_refused_at_its_header(tmp_path):
    # issue 37.9: 250 KB with 50,002 columns ran past 60 s (the duplicate check was quadratic)
    header = "id,x,expected," + ",".join(f"c{i}" for i in range(49_999))
    csv_probe(tmp_path, header + "\nc01,1,2" + "," * 49_999 + "\n")
    for argv in (("probes", "check"), ("probes", "list")):
        done = jevalkit_cli(*argv, "--probes-dir", str(tmp_path), timeout=60)
        one_line_refusal(done, "cases.csv:1", "50,002 columns", "at most 1,000")
    jsonl = tmp_path / "wide.jsonl"
    jsonl.write_text(json.dumps({"id": "a", **{f"c{i}": 1 for i in range(5000)}}) + "\n")
    with pytest.raises(CaseFileError, match=r"5,001 fields; a case holds at most 1,000"):
        read_case_file(jsonl)


def test_a_case_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    # issue 37.9: `probes check` and `probes list` waited forever for a writer
    write_probe(tmp_path, publish=False)
    fifo = tmp_path / "double" / "cases.jsonl"
    fifo.unlink()
    os.mkfifo(fifo)
    for command in ("check", "list"):
        done = jevalkit_cli("probes", command, "--probes-dir", str(tmp_path), timeout=60)
        one_line_refusal(done, "cases.jsonl", "not a regular file")


def test_a_case_file_linking_outside_the_probe_folder_is_refused(tmp_path):
    # issue 37.9: a symlink bypassed the rules against `..` and absolute paths: the file it
    # named was read and its text sent to the endpoint
    secret = tmp_path / "elsewhere" / "secret.jsonl"
    secret.parent.mkdir()
    rows = [
        {"id": "c01", "x": "the ssh key", "expected": "2"},
        {"id": "c02", "x": 2, "expected": "4"},
    ]
    secret.write_text("".join(json.dumps(r) + "\n" for r in rows))
    root = tmp_path / "probes"
    write_probe(root, publish=False)
    link = root / "double" / "cases.jsonl"
    link.unlink()
    link.symlink_to(secret)
    with pytest.raises(CaseFileError, match=r"resolves outside the probe's folder"):
        load_probe("double", root=root)
    done = jevalkit_cli("run", "double", "--model", "m", "--dry-run", JEVALKIT_PROBES=str(root))
    assert done.returncode == 2 and "outside the probe's folder" in done.stderr
    # a link that stays inside the folder is the file beside it
    link.unlink()
    (root / "double" / "real.jsonl").write_text(secret.read_text())
    link.symlink_to("real.jsonl")
    publish_probes(root=root)
    assert load_probe("double", root=root).cases[0].fields["x"] == "the ssh key"
