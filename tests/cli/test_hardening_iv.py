"""The defects a hostile review of round 4 found (issue 53), each reproduced as the review did it
and answered in one line (exit 2, or 1 for a run that failed), nothing half-written, no key in any
written file and no request carrying a key to an endpoint only a file names."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from cascade_cases import calibrate, calibrated_runs, new_cases, write_cases
from hostile_files import null_device
from openai_server import OpenAIServer
from probe_folders import write_probe

from jevalkit.cli import main
from jevalkit.labels import load_cascade
from jevalkit.results import ResultRow, read_results

KEY = "sk-jk-USERS-OWN-KEY-0123456789"
OPENAI = "sk-openai-USERS-KEY-987654321"
SECRET = "AZURE-QUERY-SECRET-13579"
EEE = ["--to", "every-eval-ever"]


def cli(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse
        return exc.code


def one_line(capsys, code, expected=2) -> str:
    err = capsys.readouterr().err
    lines = [x for x in re.split(r"[\r\n]", err) if x.strip()]
    # a progress bar redraws with carriage returns; warnings come before the error
    lines = [x for x in lines if "%|" not in x and not x.startswith("jevalkit: warning")]
    assert code == expected and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]


def written(folder: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.stat().st_size
    )


# ---- 1. keys follow the user, not a file -----------------------------------------------------


@pytest.fixture
def cascade_setup(openai_server, tmp_path):
    """A calibrated cascade of two loopback judges, and an attacker's server."""
    folder, labels = calibrated_runs(openai_server, tmp_path)
    good = load_cascade(calibrate(folder, labels, tmp_path / "cascade.json"))
    with OpenAIServer() as attacker:
        attacker.logprobs = openai_server.logprobs
        yield folder, good, attacker


def hostile_cascade(good, url, path: Path, *, first_format=False) -> Path:
    """The cascade with every judge's endpoint moved to ``url``: written with a valid digest
    (anyone can write one), or as a file of the first format, whose digest has no endpoints."""
    moved = dataclasses.replace(
        good, steps=tuple(dataclasses.replace(s, base_url=url) for s in good.steps)
    )
    moved.save(path)
    if first_format:
        record = json.loads(path.read_text())
        record["format"] = "jevalkit-cascade/1"
        record["digest"] = first_format_digest(record)
        path.write_text(json.dumps(record))
    return path


def first_format_digest(record: dict) -> str:
    """The digest files of the first format carry (written by jevalkit before issue 53): the
    guarantee's fields and each judge's, the endpoints left out."""
    fields = ("format", "evaluator", "prompt_hash", "levels", "target_agreement",
              "confidence_level", "n_calibration", "confidence_column", "min_items")  # fmt: skip
    per_judge = ("name", "model", "threshold", "parameters", "params_hash", "repeats")
    kept = {k: record[k] for k in fields}
    kept["stages"] = [{k: s.get(k) for k in per_judge} for s in record["steps"]]
    text = json.dumps(kept, sort_keys=True, allow_nan=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("first_format", [False, True])
def test_a_cascade_file_never_forwards_the_users_key_to_its_endpoints(
    cascade_setup, openai_server, tmp_path, capsys, monkeypatch, first_format
):
    # issue 53 (high): both steps' base_url set to another server received the user's
    # JEVALKIT_API_KEY (30 requests), or the OpenAI key with --api-key-env
    _, good, attacker = cascade_setup
    evil = hostile_cascade(
        good, attacker.base_url, tmp_path / "evil.json", first_format=first_format
    )
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    argv = ["judge", "security", "--data", str(data), "--cascade", str(evil)]
    argv += ["--out", str(tmp_path / "run.jsonl")]
    openai_server.requests.clear()
    monkeypatch.setenv("JEVALKIT_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    if first_format:  # a file of the first format is refused before any request, whatever flags
        for extra in ([], ["--base-url", openai_server.base_url], ["--trust-file-endpoints"]):
            line = one_line(capsys, cli([*argv, *extra]))
            assert "format jevalkit-cascade/1" in line and "calibrate again" in line
        assert attacker.requests == [] and openai_server.requests == []
        return
    for extra in ([], ["--api-key-env", "OPENAI_API_KEY"]):
        line = one_line(capsys, cli([*argv, *extra]))
        assert attacker.base_url in line and "--trust-file-endpoints" in line
        assert "--base-url" in line
    assert attacker.requests == [] and openai_server.requests == []
    assert not list(tmp_path.glob("run*.jsonl"))
    # --base-url names the endpoint: every judge goes there, the file's endpoint gets nothing
    assert cli([*argv, "--base-url", openai_server.base_url]) == 0
    assert attacker.requests == [] and len(openai_server.requests) == 30
    assert {r["headers"]["Authorization"] for r in openai_server.requests} == {f"Bearer {KEY}"}
    # the user confirms the file's endpoints: printed, then sent with the key
    out2 = ["--out", str(tmp_path / "trusted.jsonl"), "--trust-file-endpoints"]
    capsys.readouterr()
    assert cli([*argv[:-2], *out2]) == 0
    printed = capsys.readouterr().out
    assert f"judge small: {attacker.base_url}" in printed and "--trust-file-endpoints)" in printed
    assert {r["headers"]["Authorization"] for r in attacker.requests} == {f"Bearer {KEY}"}


def test_a_file_endpoint_with_no_key_set_is_printed_and_gets_none(cascade_setup, tmp_path, capsys):
    _, good, attacker = cascade_setup
    evil = hostile_cascade(good, attacker.base_url, tmp_path / "evil.json")
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    argv = ["judge", "security", "--data", str(data), "--cascade", str(evil)]
    capsys.readouterr()
    assert cli([*argv, "--out", str(tmp_path / "run.jsonl")]) == 0
    assert "no key sent: $JEVALKIT_API_KEY is not set" in capsys.readouterr().out
    assert attacker.requests and all("Authorization" not in r["headers"] for r in attacker.requests)


def test_a_cascades_endpoints_are_in_its_digest_and_its_repeats_are_bounded(
    cascade_setup, tmp_path, capsys
):
    _, good, attacker = cascade_setup
    record = json.loads((tmp_path / "cascade.json").read_text())
    record["steps"][1]["base_url"] = attacker.base_url
    (tmp_path / "moved.json").write_text(json.dumps(record))
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    argv = ["judge", "security", "--data", str(data), "--cascade"]
    assert "edited after calibration" in one_line(
        capsys, cli([*argv, str(tmp_path / "moved.json")])
    )
    # repeats: 1000000 planned every job in memory (> 2.7 GB), then a MemoryError traceback
    huge = dataclasses.replace(
        good, steps=(dataclasses.replace(good.steps[0], repeats=1_000_000), good.steps[1])
    )
    huge.save(tmp_path / "huge.json")
    line = one_line(capsys, cli([*argv, str(tmp_path / "huge.json")]))
    assert "steps[0].repeats must be a whole number from 1 to 10,000, got 1000000" in line
    assert attacker.requests == []


@pytest.mark.usefixtures("cascade_setup")
def test_for_people_into_a_bad_path_is_refused_before_judging_and_written_whole(
    openai_server, tmp_path, capsys
):
    # issue 53 (low): a traceback after all the judging; the queue was written in place
    data = write_cases(tmp_path / "new.jsonl", new_cases())
    argv = ["judge", "security", "--data", str(data), "--cascade", str(tmp_path / "cascade.json")]
    argv += ["--base-url", openai_server.base_url, "--out", str(tmp_path / "run.jsonl")]
    (tmp_path / "a-file").write_text("")
    openai_server.requests.clear()
    for bad, words in (
        (tmp_path, "is a folder"),
        (tmp_path / "a-file" / "q.jsonl", "a-file is a file, not a folder"),
        (tmp_path / ("q" * 300), "a name in this path is"),
    ):
        assert words in one_line(capsys, cli([*argv, "--for-people", str(bad)]))
    assert openai_server.requests == []
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "people.jsonl").symlink_to(victim)
    assert cli([*argv, "--for-people", str(tmp_path / "people.jsonl")]) == 0
    assert victim.read_text() == "precious"
    queue = (tmp_path / "people.jsonl").read_text().splitlines()
    assert not (tmp_path / "people.jsonl").is_symlink() and len(queue) == 5


# ---- credentials in a URL's query ------------------------------------------------------------


def test_a_key_in_the_base_urls_query_is_sent_but_never_written(
    openai_server, tmp_path, capsys, monkeypatch
):
    # issue 53: ?api-key=... (Azure's style) was stored in every row and in the EEE export
    url = f"{openai_server.base_url}?api-version=2024-10-21&api-key={SECRET}"
    openai_server.reply = lambda body: f"you sent {SECRET} back"
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", url]
    argv += ["--out", str(tmp_path / "r.jsonl")]
    monkeypatch.setenv("JEVALKIT_CACHE_DIR", str(tmp_path / "cache"))  # checked below too
    assert cli(argv) == 0
    path = openai_server.requests[0]["path"]
    assert path.startswith("/v1/chat/completions?") and f"api-key={SECRET}" in path
    rows = read_results(tmp_path / "r.jsonl")
    assert set(rows["base_url"]) == {openai_server.base_url}
    assert rows["output"].iloc[0] == "you sent *** back"
    assert (
        cli(["export", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "eee.json"), *EEE]) == 0
    )
    assert SECRET not in written(tmp_path) and SECRET not in capsys.readouterr().out


def test_rows_an_older_version_wrote_with_a_key_in_the_url_are_exported_redacted(tmp_path):
    row = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0)
    row = {**row.__dict__, "score": 1.0, "passed": True}
    row["base_url"] = f"https://x.openai.azure.com/v1?api-key={SECRET}"
    (tmp_path / "old.jsonl").write_text(json.dumps(row) + "\n")
    assert (
        cli(["export", str(tmp_path / "old.jsonl"), *EEE, "--out", str(tmp_path / "e.json")]) == 0
    )
    text = (tmp_path / "e.json").read_text()
    assert SECRET not in text and "api-key=***" in text


# ---- 2. one rule for every file read and written ---------------------------------------------


def results_file(path: Path, *, label: str = "T=0", output: str = "ok", n: int = 3) -> Path:
    rows = [
        {
            **ResultRow(
                run_id="r",
                kind="probe",
                probe="p",
                version=1,
                model="m",
                repeat=0,
                case_id=f"c{i}",
                label=label,
                output=output,
                score=float(i % 2),
                passed=bool(i % 2),
            ).__dict__
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("label", "output"), [("T=0\u2028line two", "ok"), ("T=0", "x" * (1 << 20) + "y")]
)
def test_export_reads_every_results_file_jevalkit_writes(tmp_path, capsys, label, output):
    # issue 53: "not a format jevalkit reads" for a label holding U+2028, or a first row whose
    # output is over 1 MiB (sniffing split the first MiB with str.splitlines())
    path = results_file(tmp_path / "r.jsonl", label=label, output=output)
    assert cli(["metrics", str(path)]) == 0
    assert cli(["export", str(path), *EEE, "--out", str(tmp_path / "e.json")]) == 0, (
        capsys.readouterr()
    )
    assert json.loads((tmp_path / "e.json").read_text())["evaluation_results"]


@pytest.mark.timeout(120)
def test_unreadable_inputs_are_one_line(tmp_path, capsys):
    results = results_file(tmp_path / "r.jsonl")
    long = tmp_path / ("x" * 300 + ".jsonl")
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    cases = [
        (["metrics", "/proc/self/mem"], "(Input/output error)"),
        (["metrics", str(long)], "a name in this path is"),
        (["metrics", str(fifo)], "not a regular file (a FIFO)"),
        (["export", str(long), *EEE, "--out", str(tmp_path / "e.json")], "a name in this path is"),
        (["import", str(long), "--out", str(tmp_path / "o.jsonl")], "a name in this path is"),
        (["items", str(long)], "a name in this path is"),
        (["compare", str(results), str(long)], "a name in this path is"),
        (["merge", str(long)], "a name in this path is"),
        (["cascade", "show", str(long)], "a name in this path is"),
        (["cascade", "show", str(fifo)], "not a regular file (a FIFO)"),
        (["judge", "faithfulness", "--data", str(long)], "a name in this path is"),
        (["score", "schema-ten-records", "--file", str(long)], "a name in this path is"),
    ]
    for argv, words in cases:
        assert words in one_line(capsys, cli(argv)), argv


@pytest.mark.timeout(120)
def test_every_output_refuses_devices_folders_and_fifos_and_replaces_links(tmp_path, capsys):
    # issue 53: export --out and items --save-fit replaced a device node with a regular file;
    # compare --html and cascade calibrate --out wrote through a symlink or a device
    results = results_file(tmp_path / "r.jsonl", n=12)
    examples = Path(__file__).resolve().parents[2] / "data" / "examples"
    fifo = tmp_path / "fifo.out"
    os.mkfifo(fifo)
    device = null_device(tmp_path)
    (tmp_path / "a-file").write_text("")
    writers = {
        "export": ["export", str(results), *EEE, "--out"],
        "compare --html": ["compare", str(results), str(results), "--html"],
        "items --save-fit": [
            "items",
            str(examples / "benchmark.jsonl"),
            "--irt",
            "1pl",
            "--save-fit",
        ],
        "cascade calibrate": [
            "cascade",
            "calibrate",
            str(examples / "cascade_judged.jsonl"),
            "--judges",
            "small-judge",
            "large-judge",
            "--labels",
            str(examples / "cascade_labels.jsonl"),
            "--out",
        ],
        "probes page": ["probes", "page", "schema-ten-records", "--out"],
    }
    bad = [(fifo, "not a regular file (a FIFO)"), (tmp_path, "is a folder")]
    bad += [(tmp_path / "a-file" / "o", "a-file is a file, not a folder")]
    bad += [(tmp_path / ("o" * 300), "a name in this path is")]
    if device is not None:
        bad.append((device, "not a regular file (a character device)"))
    for name, argv in writers.items():
        for target, words in bad:
            assert words in one_line(capsys, cli([*argv, str(target)])), (name, target)
        victim = tmp_path / f"victim-{name.replace(' ', '-')}.txt"
        victim.write_text("precious")
        link = tmp_path / f"link-{name.replace(' ', '-')}"
        link.symlink_to(victim)
        code = cli([*argv, str(link)])
        capsys.readouterr()
        assert victim.read_text() == "precious" and not link.is_symlink(), (name, code)
    assert fifo.is_fifo() and (device is None or device.is_char_device())


def test_report_on_a_file_that_is_not_a_notebook_is_one_line(tmp_path, capsys):
    # issue 53: nbformat's multi-line text; a notebook without a kernel: a papermill traceback
    cases = {
        "text.ipynb": "hello\nworld\n",
        "list.ipynb": "[1, 2]",
        "bad-cell.ipynb": json.dumps(
            {"nbformat": 4, "nbformat_minor": 5, "cells": [{"x": 1}], "metadata": {}}
        ),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        line = one_line(capsys, cli(["report", str(tmp_path / name), "--out", str(tmp_path / "o")]))
        assert name in line and "not a notebook" in line, line
    # a notebook that names no kernel or language was a papermill traceback: it runs as Python
    (tmp_path / "nokernel.ipynb").write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {}})
    )
    assert cli(["report", str(tmp_path / "nokernel.ipynb"), "--out", str(tmp_path / "o")]) == 0


# ---- 3. counts a file can set are bounded ----------------------------------------------------


@pytest.fixture
def shards(openai_server, tmp_path, monkeypatch):
    """Shard 0 of 2 of a run of the ``double`` probe (30 cases), its part kept."""
    write_probe(tmp_path / "probes")
    monkeypatch.setenv("JEVALKIT_PROBES", str(tmp_path / "probes"))
    out = tmp_path / "r.jsonl"
    argv = ["run", "double", "--model", "m", "--base-url", openai_server.base_url]
    argv += ["--no-cache", "--out", str(out)]
    assert cli([*argv, "--shard", "0/2"]) == 0
    return out, argv


@pytest.mark.timeout(120)
def test_a_parts_run_configuration_that_is_a_fifo_or_holds_bad_counts_is_one_line(shards, capsys):
    # issue 53: a FIFO as a shard's .run.json hung `merge`; negative shard counts were accepted
    out, _ = shards
    config = out.with_name("r.jsonl.parts") / "0.run.json"
    good = json.loads(config.read_text())
    for change, words in (
        ({"shard_jobs": [-5, 20]}, "a shard holds a negative number of jobs"),
        ({"jobs": -1}, "must be 0 <= keys <= jobs"),
        ({"shard_jobs": [1] * 100_001}, "over the 100,000 a run may have"),
        ({"shard_jobs": [1, 1]}, "the shards hold 2 jobs, not the run's 30 keys"),
    ):
        config.write_text(json.dumps({**good, **change}))
        assert words in one_line(capsys, cli(["merge", str(out), "--partial"]))
    config.unlink()
    os.mkfifo(config)
    assert "not a regular file (a FIFO)" in one_line(capsys, cli(["merge", str(out)]))


def test_a_shard_count_past_its_bound_is_one_line(shards, capsys, tmp_path):
    _, argv = shards
    argv = [*argv[:-1], str(tmp_path / "other.jsonl"), "--shard", "0/1000000000"]
    assert "the count must be from 1 to 100,000" in one_line(capsys, cli(argv))


def test_metrics_on_a_partial_merge_says_it_is_partial(shards, capsys):
    # issue 53: `metrics` on a `merge --partial` file did not say it was partial
    out, _ = shards
    assert cli(["merge", str(out), "--partial"]) == 0
    capsys.readouterr()
    assert cli(["metrics", str(out)]) == 0
    said = capsys.readouterr().out
    planned = [x for x in said.splitlines() if x.startswith("partial: ")]
    assert len(planned) == 1 and " of 30 planned jobs, 1 of 2 shards complete" in planned[0]
    assert "shard 1 has no part file" in planned[0]


@pytest.mark.timeout(120)
def test_a_hostile_prior_is_refused_before_any_request(openai_server, tmp_path, capsys):
    # issue 53: a FIFO as --prior hung `run`, /dev/zero read until the memory ran out, and a
    # prior with 1e308 parameters crashed the run after 2 requests ("Probabilities contain NaN")
    from active_benchmark import PROBE, active_benchmark

    _, path, _, _ = active_benchmark(tmp_path)
    record = json.loads(path.read_text())
    record["items"]["discrimination"][0] = 1e308
    (tmp_path / "extreme.json").write_text(json.dumps(record))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    argv = ["run", PROBE, "--model", "m", "--base-url", openai_server.base_url, "--cases"]
    argv += ["active:10", "--sample-seed", "0", "--out", str(tmp_path / "r.jsonl"), "--prior"]
    for prior, words in (
        (fifo, "not a regular file (a FIFO)"),
        ("/dev/zero", "not a regular file (a character device)"),
        (tmp_path / "extreme.json", "beyond the +/-1000"),
    ):
        assert words in one_line(capsys, cli([*argv, str(prior)]))
    assert openai_server.requests == []


# ---- 4. exit codes a CI can trust ------------------------------------------------------------


def test_a_run_with_40_percent_failed_requests_exits_1_with_every_row_saved(
    openai_server, tmp_path, capsys
):
    # issue 53: a run with 40% failed requests exited 0 (only "none scored" exited 1)
    openai_server.faults["m"] = ["500", "500"]
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    argv += ["--repeats", "5", "--max-retries", "0", "--no-cache", "--out", str(tmp_path / "r")]
    line = one_line(capsys, cli(argv), expected=1)
    assert "2 of 5 request(s) failed (40%, over --max-error-rate 0.05)" in line
    rows = read_results(tmp_path / "r")
    assert len(rows) == 5 and rows["error"].notna().sum() == 2
    openai_server.faults["m"] = ["500", "500"]
    argv[-1] = str(tmp_path / "r2")
    assert cli([*argv, "--max-error-rate", "0.5"]) == 0
    assert "expected a share from 0 to 1" in one_line(
        capsys, cli([*argv, "--max-error-rate", "nan"])
    )


def test_a_judge_run_with_too_many_failures_exits_1(openai_server, tmp_path, capsys):
    openai_server.faults["m"] = ["500"] * 3
    argv = ["judge", "faithfulness", "--data", "faithfulness", "--model", "m"]
    argv += ["--base-url", openai_server.base_url, "--max-retries", "0", "--no-cache"]
    argv += ["--method", "sampling", "--n-samples", "1", "--out", str(tmp_path / "j.jsonl")]
    line = one_line(capsys, cli(argv), expected=1)
    assert "judgment(s) failed" in line and "over --max-error-rate 0.05" in line
    assert read_results(tmp_path / "j.jsonl")["error"].notna().sum() == 3


# ---- found by the flag fuzz (tests/cli/test_flag_fuzz.py with JEVALKIT_FUZZ_VALUES=all) -------


def test_a_results_path_linked_to_someone_elses_file_is_refused_not_cut(
    openai_server, tmp_path, capsys
):
    # `run --out LINK` to a text file with no newline: the torn-tail repair cut the file to
    # nothing (its only line "was torn") and appended rows to it
    (tmp_path / "notes.txt").write_text("my notes, no newline at the end")
    (tmp_path / "r.jsonl").symlink_to(tmp_path / "notes.txt")
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    line = one_line(capsys, cli([*argv, "--out", str(tmp_path / "r.jsonl")]))
    assert "its last line is not a results row" in line
    assert (tmp_path / "notes.txt").read_text() == "my notes, no newline at the end"
    assert openai_server.requests == []


@pytest.mark.timeout(120)
def test_counts_that_would_fill_the_memory_are_refused(openai_server, tmp_path, capsys):
    # --concurrency 10^39 opened a connection per request in flight; --n-samples 10^39 planned
    # as many requests per judgment: both hung
    huge = "9" * 40
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    line = one_line(capsys, cli([*argv, "--concurrency", huge, "--out", str(tmp_path / "r")]))
    assert "concurrency must be a whole number from 1 to 1,000" in line
    argv = ["judge", "faithfulness", "--data", "faithfulness", "--model", "m", "--method"]
    line = one_line(capsys, cli([*argv, "sampling", "--n-samples", huge]))
    assert "--n-samples: expected a whole number from 1 to 1,000" in line
    assert "--resamples must be from 100 to 100,000" in one_line(
        capsys, cli(["leaderboard", str(results_file(tmp_path / "b.jsonl")), "--resamples", huge])
    )
    assert openai_server.requests == []


@pytest.mark.timeout(300)
def test_a_report_folder_named_like_a_stream_is_a_folder(tmp_path, capsys, monkeypatch):
    # papermill reads a path starting with "-" as stdout: `report --out -1` wrote the notebook's
    # bytes to the terminal and ended in a TypeError traceback
    monkeypatch.chdir(tmp_path)
    results = results_file(tmp_path / "r.jsonl", n=6)
    code = cli(["report", "probe_report", "--results", str(results), "--out", "-1"])
    capsys.readouterr()
    assert code == 0 and (tmp_path / "-1" / "probe_report.html").is_file()
