"""Every subcommand and every flag of the CLI given hostile values (issue 53): empty, huge,
negative, NaN, unicode with terminal escapes, an over-long name, a FIFO, a device, a symlink out
of the scratch folder, a folder; no traceback, no hang (each call killed after ``TIMEOUT_S``), no
write outside the call's own folder, and every refusal one line.

The flags are read from the parser itself (a new flag is fuzzed without a line here). Each call
starts from a command line that works (a probe, a results file, the loopback server), with one
flag (or positional) replaced by one hostile value. At the suite's size every flag gets three of
the ten values, turning through them so that each value meets every command; set
``JEVALKIT_FUZZ_VALUES=all`` for every value on every flag (about ten times as long).

Each call gets a folder of its own as its working directory, holding its own FIFO, device node
(as root; else a link to /dev/null) and a symlink to a file in an ``outside`` folder: the call
must leave the FIFO a FIFO, the device a device, and the outside file as it was, whatever it
did. Nothing runs the embedded model: ``demo``, ``local serve`` and ``local build`` get only the
values they must refuse before starting anything (checked too).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
from pathlib import Path

import nbconvert
import nbformat
import papermill
import pytest
from forked_cli import Job, run_all
from hostile_files import null_device
from openai_server import OpenAIServer
from probe_folders import write_probe

import jevalkit.io
import jevalkit.reports
import jevalkit.runner
from jevalkit._paths import data_dir
from jevalkit.cli import build_parser
from jevalkit.labels import calibrate_cascade, read_labels
from jevalkit.results import read_results

# imported before the fork, so that each child starts warm (a report's refusal took 12 s of
# importing papermill and nbconvert in the child)
WARM = (jevalkit.io, jevalkit.reports, jevalkit.runner, nbconvert, nbformat, papermill)
TIMEOUT_S = 60
EXAMPLES = data_dir() / "examples"
VALUES = {
    "empty": "",
    "huge": "9" * 40,
    "negative": "-1",
    "nan": "nan",
    "unicode": "é☃\u2028\u202e\x1b]0;pwned\x07",
    "long": "x" * 300,
    "fifo": "{fifo}",
    "device": "{device}",
    "link": "{link}",
    "folder": "{folder}",
}
PER_FLAG = 1  # at the suite's size (JEVALKIT_FUZZ_VALUES=all: every value on every flag)
# a report starts a Jupyter kernel (10-30 s on a busy machine): at the suite's size its flags get
# the values refused before the kernel starts, and the flags that only change a report that
# runs are left to the full sweep
REPORT_AT_SUITE_SIZE = {
    "--out": ("fifo", "device", "long", "empty"),
    "--results": ("fifo", "device", "long", "empty"),
    "--batch": ("fifo", "device", "long", "folder"),
    "-p": ("unicode", "empty"),
    "--from": ("nan",),
}
# nothing here builds llama.cpp (a download and a compile): `local build` gets only values it
# must refuse before it starts (the embedded model cannot start: JEVALKIT_LLAMA_SERVER names no
# binary, below)
REFUSED_ONLY = {("local", "build"): ("empty", "negative", "nan", "huge", "unicode")}
NOT_RUN = {("local", "build")}


def commands(parser: argparse.ArgumentParser, path=()):
    """(command words, its parser) for every leaf command."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from commands(sub, (*path, name))


def baselines(inputs: Path, url: str) -> dict[tuple[str, ...], list[str]]:
    """A command line that works, for every command (``{here}``: the call's own folder)."""
    results = str(inputs / "variants.jsonl")
    bench = str(inputs / "benchmark.jsonl")
    model = ["--model", "m", "--base-url", url, "--max-retries", "0", "--timeout", "5"]
    probes = ["--probes-dir", str(inputs / "probes")]
    return {
        ("probes", "list"): ["probes", "list", *probes],
        ("probes", "check"): ["probes", "check", *probes],
        ("probes", "show"): ["probes", "show", "double", *probes],
        ("probes", "page"): ["probes", "page", "double", *probes, "--out", "{here}/p.html"],
        ("probes", "lock"): ["probes", "lock", "--probes-dir", "{here}/probes"],
        ("probes", "new"): ["probes", "new", "fresh", "--probes-dir", "{here}/probes"],
        ("score",): ["score", "double", "--file", str(inputs / "output.txt"), "--case", "c02"],
        ("run",): ["run", "double", *model, "--no-cache", "--out", "{here}/r.jsonl"],
        ("race",): [
            "race",
            "double",
            "--models",
            "m",
            "m2",
            *model[2:],
            "--no-cache",
            "--out",
            "{here}/race.jsonl",
        ],
        ("merge",): ["merge", "{here}/r.jsonl"],
        ("local", "build"): ["local", "build"],
        ("local", "serve"): ["local", "serve"],
        ("local", "status"): ["local", "status"],
        ("local", "stop"): ["local", "stop"],
        ("metrics",): ["metrics", results],
        ("gate",): ["gate", results, "--min", "0.5"],
        ("items",): ["items", bench],
        ("leaderboard",): ["leaderboard", bench, "--resamples", "20"],
        ("design",): [
            "design",
            str(inputs / "demo.jsonl"),
            "--facets",
            "case,label",
            "--budget-usd",
            "1",
            "--cost-per-request",
            "0.001",
        ],
        ("compare",): ["compare", results, results],
        ("judge",): [
            "judge",
            "faithfulness",
            "--data",
            "faithfulness",
            *model,
            "--method",
            "sampling",
            "--n-samples",
            "1",
            "--no-cache",
            "--out",
            "{here}/j.jsonl",
        ],
        ("judges", "list"): ["judges", "list"],
        ("judges", "lock"): ["judges", "lock"],
        ("cascade", "calibrate"): [
            "cascade",
            "calibrate",
            str(inputs / "cascade_judged.jsonl"),
            "--judges",
            "small-judge",
            "large-judge",
            "--labels",
            str(inputs / "cascade_labels.jsonl"),
            "--out",
            "{here}/c.json",
        ],
        ("cascade", "show"): ["cascade", "show", str(inputs / "cascade.json")],
        ("import",): ["import", str(inputs / "grades.jsonl"), "--out", "{here}/i.jsonl"],
        ("export",): ["export", results, "--to", "every-eval-ever", "--out", "{here}/e.json"],
        ("report",): ["report", "probe_report", "--results", results, "--out", "{here}/rep"],
        ("demo",): ["demo", "--repeats", "1"],
    }


def with_value(
    base: list[str], path: tuple[str, ...], action: argparse.Action, value: str
) -> list[str]:
    """``base`` with ``action`` (a flag, or the command's positional) given ``value``."""
    argv = list(base)
    if not action.option_strings:  # the positional follows the command words
        at = len(path)
        if at < len(argv) and not argv[at].startswith("-"):
            argv[at] = value
        else:
            argv.insert(at, value)
        return argv
    flag = action.option_strings[-1]
    width = action.nargs if isinstance(action.nargs, int) else 1
    if flag in argv:  # the base sets it: replace its value(s)
        i = argv.index(flag)
        del argv[i : i + 1 + width]
    return [*argv, flag, *([value] * width)]


def hostile_objects(folder: Path, outside: Path) -> dict[str, str]:
    """The call's own FIFO, device, symlink out and folder."""
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "fifo")
    device = null_device(folder, "device")
    if device is None:  # no root: a link to /dev/null (replaced or written through: harmless)
        device = folder / "device"
        device.symlink_to("/dev/null")
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text("outside the scratch folder")
    (folder / "link").symlink_to(outside)
    (folder / "folder").mkdir()
    return {
        "fifo": str(folder / "fifo"),
        "device": str(device),
        "link": str(folder / "link"),
        "folder": str(folder / "folder"),
        "here": str(folder),
    }


def intact(job: Job, outside: Path) -> list[str]:
    """What the call changed that it must not: its FIFO, its device, the file its link names."""
    problems = []
    if not (job.folder / "fifo").is_fifo():
        problems.append("its FIFO is no longer a FIFO")
    device = job.folder / "device"
    if not (device.is_symlink() or device.is_char_device()):
        problems.append("its device node was replaced")
    if outside.read_text() != "outside the scratch folder":  # the link itself may be replaced
        problems.append("it wrote through the symlink to a file outside its folder")
    return problems


def plan(scratch: Path, url: str) -> list[tuple[Job, Path, tuple]]:
    inputs = scratch / "in"
    inputs.mkdir(parents=True)
    for name in ("variants.jsonl", "benchmark.jsonl", "grades.jsonl", "cascade_judged.jsonl"):
        shutil.copy(EXAMPLES / name, inputs / name)
    shutil.copy(EXAMPLES / "cascade_labels.jsonl", inputs / "cascade_labels.jsonl")
    shutil.copy(data_dir() / "runs" / "schema-ten-records__local-demo.jsonl", inputs / "demo.jsonl")
    write_probe(inputs / "probes")
    (inputs / "output.txt").write_text("4")
    calibrate_cascade(
        read_results(inputs / "cascade_judged.jsonl"),
        read_labels(inputs / "cascade_labels.jsonl"),
        judges=["small-judge", "large-judge"],
    ).save(inputs / "cascade.json")
    env = {
        "JEVALKIT_PROBES": str(inputs / "probes"),
        "JEVALKIT_STATE_DIR": str(scratch / "state"),
        "JEVALKIT_CACHE_DIR": str(scratch / "cache"),
        "MPLCONFIGDIR": str(scratch / "mpl"),
        "XDG_CACHE_HOME": str(scratch / "xdg"),
        # the embedded model never starts here: a command that would start it says the server
        # binary is missing, in one line, instead
        "JEVALKIT_LLAMA_SERVER": str(scratch / "no-llama-server"),
    }
    base = baselines(inputs, url)
    every = os.environ.get("JEVALKIT_FUZZ_VALUES") == "all"
    kinds = list(VALUES)
    turn = itertools.count()
    jobs, numbers = [], itertools.count()
    for path, parser in commands(build_parser()):
        assert path in base, f"no working command line for `jevalkit {' '.join(path)}`: add one"
        actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
        for action in actions:
            flag = action.option_strings[-1] if action.option_strings else action.dest
            if (*path, flag) in NOT_RUN or (action.nargs == 0 and path in NOT_RUN):
                continue
            allowed = REFUSED_ONLY.get(path, kinds)
            if path == ("report",) and action.option_strings and not every:
                chosen = list(REPORT_AT_SUITE_SIZE.get(flag, ()))
            elif action.nargs == 0:
                chosen = ["present"]
            elif every or not action.option_strings:
                chosen = list(allowed)
            else:
                start = next(turn) * PER_FLAG
                chosen = [allowed[(start + k) % len(allowed)] for k in range(PER_FLAG)]
            for kind in chosen:
                n = next(numbers)
                folder = scratch / "jobs" / str(n)
                outside = scratch / "outside" / f"{n}.txt"
                names = hostile_objects(folder, outside)
                value = VALUES.get(kind, "").format(**names)
                argv = with_value(base[path], path, action, value)
                argv = [a.replace("{here}", names["here"]) for a in argv]
                jobs.append((Job(argv, env, folder, (inputs,)), outside, (path, flag, kind)))
    return jobs


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("flag-fuzz")
    with OpenAIServer() as server:
        jobs = plan(scratch, server.base_url)
        outcomes = run_all([job for job, *_ in jobs], timeout=TIMEOUT_S)
    by_argv = {tuple(o.argv): o for o in outcomes}
    return [(job, outside, by_argv[tuple(job.argv)], what) for job, outside, what in jobs], scratch


def test_every_command_and_flag_is_fuzzed(fuzzed):
    runs, _ = fuzzed
    tried = {(path, flag) for *_, (path, flag, _) in runs}
    missing = [
        f"{' '.join(path)} {action.option_strings[-1] if action.option_strings else action.dest}"
        for path, parser in commands(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        and (path, action.option_strings[-1] if action.option_strings else action.dest)
        not in tried
        and path not in NOT_RUN
        and not (path == ("report",) and action.option_strings
                 and action.option_strings[-1] not in REPORT_AT_SUITE_SIZE)
    ]  # fmt: skip
    assert missing == [], missing
    assert {kind for *_, (_, _, kind) in runs} >= set(VALUES)
    assert len(runs) > 250, len(runs)


def test_no_traceback_no_hang_nothing_written_outside(fuzzed):
    runs, scratch = fuzzed
    tracebacks = [(o.argv, o.traceback[-800:]) for _, _, o, _ in runs if o.traceback]
    hangs = [o.argv for _, _, o, _ in runs if o.hung]
    broken = [(o.argv, intact(job, outside)) for job, outside, o, _ in runs if intact(job, outside)]
    written = [(o.argv, o.written) for _, _, o, _ in runs if o.written]
    assert (tracebacks, hangs, broken, written) == ([], [], [], []), (
        tracebacks[:3],
        hangs[:5],
        broken[:5],
        written[:5],
    )
    # the shared inputs are as they were (no call wrote into them)
    assert json.loads((scratch / "in" / "cascade.json").read_text())["format"]


def test_every_refusal_is_one_line(fuzzed):
    runs, _ = fuzzed
    codes: dict[object, int] = {}
    long_lines = []
    for _, _, o, _ in runs:
        codes[o.code] = codes.get(o.code, 0) + 1
        if o.code == 2:
            lines = [x for x in o.err.split("\n") if x.strip() and "\r" not in x]
            lines = [x for x in lines if not x.startswith("jevalkit: warning")]
            if len(lines) > 1:
                long_lines.append((o.argv, o.err[-600:]))
    assert long_lines == [], long_lines[:3]
    assert set(codes) <= {0, 1, 2}, codes
