"""Every command on hostile probe folders, case files, outputs, results, part folders and imported
logs (issue 37): no traceback, no hang, and no file written by a command that failed.

Each command runs in a forked child (the scientific stack imported once, before the fork), so a
command that hangs (a FIFO read that waits for a writer forever) is killed after ``TIMEOUT_S``
and counted, instead of stopping the suite; two children run at once, from a parent with one
thread of its own. A command is given its own folder (its working directory and its outputs)
and names the folders it may write besides (a probe folder it reads: ``probes lock`` writes
there); "written on error" is a regular file new or changed in those when the command exited
non-zero (not counted: results files' lock files, empty and kept by design so that a second run
refuses at once, a failed report's partial notebook, kept for its traceback and named in the
error, and the rows a merge could take from parts beside a torn one, which it keeps and names).

Every hostile input is read by a command that checks it (``probes check`` and ``run`` for a
probe folder, ``import`` and ``metrics --from auto`` for a log) and by the other commands in turn;
the inputs that hang or flood a careless reader (FIFOs, a device, a folder, a link out of the
probe folder, 1,200 columns) by every command. That keeps the whole near a minute (60 s at a
load average of 13 on 2 CPUs, 96 s at 20), where every command on every input took 150 s idle.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
import yaml
from forked_cli import Job, run_all
from hostile_files import corpus
from probe_folders import write_probe

import jevalkit.io
import jevalkit.reports
import jevalkit.runner
from jevalkit.cli import COMMANDS

WARM = (
    jevalkit.io,
    jevalkit.reports,
    jevalkit.runner,
)  # imported before the fork: children start warm
WIDE = 1200  # columns: past the 1,000 fields a case may hold


def hostile_cases(folder: Path, outside: Path) -> dict[str, Path | None]:
    """Case files a user may give a probe (``None``: the probe's own ``cases.jsonl`` kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": "c01", "x": 1, "expected": "2"}, {"id": "c02", "x": 2, "expected": "4"}]
    made: dict[str, Path | None] = {}

    def write(name: str, data: bytes | str) -> None:
        path = folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        made[name] = path

    write("huge-field.csv", "id,x,expected\nc01," + "9" * 200_000 + ",2\nc02,2,4\n")
    header = "id,x,expected," + ",".join(f"w{i}" for i in range(WIDE))
    write("wide.csv", header + "\nc01,1,2" + "," * WIDE + "\nc02,2,4" + "," * WIDE + "\n")
    write("not-utf8.jsonl", b'{"id": "c01", "x": "\xff\xfe"}\n')
    write("deep.jsonl", '{"id": "c01", "x": ' + "[" * 900 + "]" * 900 + "}\n")
    write("too-deep.jsonl", '{"id": "c01", "x": ' + "[" * 5000 + "]" * 5000 + "}\n")
    write("bigint.jsonl", '{"id": "c01", "x": ' + "9" * 5000 + "}\n")
    write("empty.jsonl", "")
    write("not-objects.jsonl", "[1, 2]\n3\n")
    write("duplicate-ids.jsonl", "".join(json.dumps(r | {"id": "c01"}) + "\n" for r in rows))
    write("many-fields.jsonl", json.dumps({"id": "c01", **{f"f{i}": i for i in range(WIDE)}}))
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    made["fifo.jsonl"] = fifo
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text("".join(json.dumps(r) + "\n" for r in rows))
    link = folder / "link-outside.jsonl"
    link.symlink_to(outside)
    made["link-outside.jsonl"] = link
    return made


def hostile_probe_folders(root: Path, cases: dict[str, Path | None]) -> dict[str, Path]:
    """A published probe ``double`` per hostile case file (swapped in after publishing, as a
    user editing in place would), and probe files that are hostile themselves."""
    folders = {}
    for name, source in cases.items():
        probes = root / f"probes-{name}"
        write_probe(probes)
        target = probes / "double" / ("cases.csv" if name.endswith(".csv") else "cases.jsonl")
        data = yaml.safe_load((probes / "double" / "v1.yaml").read_text())
        data["cases"] = target.name
        (probes / "double" / "v1.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        (probes / "double" / "cases.jsonl").unlink()
        if source.is_fifo():
            os.mkfifo(target)
        elif source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            target.write_bytes(source.read_bytes())
        folders[name] = probes
    for name, text in (
        ("yaml-bomb", "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"),
        ("yaml-deep", "x: " + "[" * 5000 + "]" * 5000 + "\n"),
        ("yaml-not-a-mapping", "- 1\n- 2\n"),
        ("yaml-binary", "\x00\x01\x02"),
    ):
        probes = root / f"probes-{name}"
        write_probe(probes)
        (probes / "double" / "v1.yaml").write_text(text)
        folders[name] = probes
    probes = root / "probes-yaml-fifo"
    write_probe(probes)
    (probes / "double" / "v1.yaml").unlink()
    os.mkfifo(probes / "double" / "v1.yaml")
    folders["yaml-fifo"] = probes
    return folders


def import_files(root: Path) -> tuple[list[Path], list[Path]]:
    """A spread of the generated hostile logs (every format, every kind of damage) and the 900-deep
    ones; then files no reader should wait on or take whole (a FIFO, a device, a folder)."""
    files = corpus(root / "corpus")
    chosen = [path for _, path, _, _ in files[::20]]
    chosen += [path for name, path, _, _ in files if '{"a": {"a":' in name][:6]
    fifo = root / "log-fifo.jsonl"
    os.mkfifo(fifo)
    return chosen, [fifo, Path("/dev/zero"), root / "corpus"]


def shard_jobs(work: Path, url: str) -> list[Job]:
    """Real shards of two runs to damage: ``run`` with ``--shard 0/2`` and ``1/2`` into
    ``parts-src/r.jsonl``, and shard 1/2 of another model's run into ``parts-src/other.jsonl``."""
    src = work / "parts-src"
    model = ["--base-url", url, "--max-retries", "0", "--timeout", "10", "--no-cache"]
    env = {"JEVALKIT_PROBES": str(work / "probes-shards")}
    write_probe(work / "probes-shards")
    runs = [("m", "r", "0/2"), ("m", "r", "1/2"), ("m2", "other", "1/2")]
    return [
        Job(
            [
                "run",
                "double",
                "--model",
                m,
                *model,
                "--shard",
                k,
                "--out",
                str(src / f"{name}.jsonl"),
            ],
            env,
            src,
        )
        for m, name, k in runs
    ]


def hostile_parts(work: Path) -> dict[str, Path]:
    """Results files whose ``.parts`` folder is damaged, each in a folder of its own: a part of
    another run, a torn last line, a folder or part that is a link, a FIFO part, a part that is
    not rows, a run configuration damaged or missing."""
    src = work / "parts-src"
    made = {}

    def variant(name: str) -> Path:
        folder = work / f"parts-{name}"
        folder.mkdir()
        (folder / "r.jsonl.parts").mkdir()
        for f in (src / "r.jsonl.parts").iterdir():
            (folder / "r.jsonl.parts" / f.name).write_bytes(f.read_bytes())
        made[name] = folder / "r.jsonl"
        return folder / "r.jsonl.parts"

    parts = variant("clean")
    parts = variant("foreign")
    for f in ("1.jsonl", "1.run.json"):
        (parts / f).write_bytes((src / "other.jsonl.parts" / f).read_bytes())
    parts = variant("torn")
    with (parts / "0.jsonl").open("ab") as fh:
        fh.write(b'{"probe": "dou')
    parts = variant("folder-link")
    parts.rename(parts.with_name("elsewhere"))
    parts.symlink_to(parts.with_name("elsewhere"))
    parts = variant("part-link")
    (parts / "0.jsonl").rename(work / "parts-part-link" / "one.jsonl")
    (parts / "0.jsonl").symlink_to(work / "parts-part-link" / "one.jsonl")
    parts = variant("fifo")
    (parts / "1.jsonl").unlink()
    os.mkfifo(parts / "1.jsonl")
    parts = variant("not-rows")
    (parts / "1.jsonl").write_bytes(b"\xff\xfe\n" + b"[" * 5000 + b"]" * 5000 + b"\n[1, 2]\n")
    parts = variant("config-damaged")
    (parts / "1.run.json").write_text('{"model": ' + "[" * 900 + "]" * 900 + "}")
    parts = variant("config-missing")
    (parts / "1.run.json").unlink()
    return made


PROBE_COMMANDS = ("list", "show", "page", "lock", "dry-run", "score")
LOG_COMMANDS = (
    "metrics",
    "gate",
    "compare",
    "items",
    "leaderboard",
    "design",
    "merge",
    "export",
    "cascade",
)


def commands(work: Path, url: str) -> list[Job]:
    """A job for every command, on every hostile input that command reads."""
    cases = hostile_cases(work / "case-files", work / "outside" / "secret.jsonl")
    probes = hostile_probe_folders(work, cases)
    logs, endless = import_files(work)
    numbers = itertools.count()
    jobs: list[Job] = []

    def add(argv, env=None, scope=(), group="") -> None:
        folder = work / "jobs" / str(next(numbers))
        argv = [a.format(here=folder) for a in argv]
        jobs.append(Job(argv, env or {}, folder, tuple(scope), group))

    out = "{here}/r.jsonl"  # an output of its own, so that no run refuses an earlier one's
    model = ["--model", "m", "--base-url", url, "--max-retries", "0", "--timeout", "10"]
    (work / "output.txt").write_text("[]")
    turn = itertools.cycle(PROBE_COMMANDS)
    every = {"fifo.jsonl", "link-outside.jsonl", "wide.csv", "yaml-fifo"}
    for name, folder in probes.items():
        env = {"JEVALKIT_PROBES": str(folder)}
        d = ["--probes-dir", str(folder)]
        given = {
            "list": ["probes", "list", *d],
            "show": ["probes", "show", "double", *d],
            "page": ["probes", "page", "double", *d, "--out", "{here}/p.html"],
            "lock": ["probes", "lock", *d],
            "dry-run": ["run", "double", *model, "--dry-run"],
            "score": ["score", "double", "--file", str(work / "output.txt")],
        }
        chosen = PROBE_COMMANDS if name in every else (next(turn),)
        race = ["race", "double", "--models", "m", "n", *model[2:], "--out", out]
        for argv in (["probes", "check", *d], ["run", "double", *model, "--out", out], race):
            add(argv, env, (folder,), name)
        for key in chosen:
            add(given[key], env, (folder,), name)
    for path in cases.values():
        new = ["probes", "new", "new-one", "--cases", str(path), "--probes-dir", "{here}/mine"]
        add(new)
        add(["judge", "llm_judge", "--data", str(path), *model, "--out", out])
    # not a FIFO: an output may come from a pipe (`--file <(cmd)`), read as stdin is
    for path in (Path("/dev/zero"), cases["huge-field.csv"], cases["not-utf8.jsonl"]):
        add(["score", "schema-ten-records", "--file", str(path)])
    turn = itertools.cycle(LOG_COMMANDS)
    for path in logs + endless:
        p = str(path)
        given = {
            "metrics": ["metrics", p],
            "gate": ["gate", p, "--from", "auto", "--min", "0.5"],
            "compare": ["compare", p, p, "--from", "auto"],
            "items": ["items", p, "--from", "auto"],
            "leaderboard": ["leaderboard", p, "--from", "auto", "--resamples", "20"],
            "design": ["design", p, "--from", "auto"],
            "merge": ["merge", p],
            "export": ["export", p, "--to", "every-eval-ever", "--out", "{here}/e.json"],
            "cascade": ["cascade", "calibrate", p, "--labels", p, "--out", "{here}/c.json"],
        }
        add(["import", p, "--out", out])
        add(["cascade", "show", p])
        add(["metrics", p, "--from", "auto"])
        for key in LOG_COMMANDS if path in endless else (next(turn),):
            add(given[key])
    # a report starts a kernel (seconds): one on a damaged log, one on a file nothing can read
    for path in (logs[1], endless[1]):
        add(["report", "probe_report", "--results", str(path), "--out", "{here}/rep"])
    env = {"JEVALKIT_PROBES": str(work / "probes-shards")}
    for name, results in hostile_parts(work).items():
        r, here = str(results), results.parent
        for argv in (
            ["merge", r],
            ["metrics", r],
            ["export", r, "--to", "every-eval-ever", "--out", "{here}/e.json"],
            ["run", "double", *model, "--no-cache", "--shard", "0/2", "--out", r],
            ["run", "double", *model, "--no-cache", "--out", r],
        ):
            add(argv, env, (here,), f"parts-{name}")
    state = {"JEVALKIT_STATE_DIR": str(work / "state")}
    (work / "state").mkdir()
    (work / "state" / "server.json").write_text('{"pid": 1, "port": "x"')
    for argv in (
        ["local", "status"],
        ["local", "stop"],
        ["local", "serve", "--port", "0"],
        ["local", "serve", "--slots", "-1"],
        ["demo", "--repeats", "0"],
        ["demo", "--port", "70000"],
        ["judges", "list"],
    ):
        add(argv, state, (work / "state",), "state")
    return jobs


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    from openai_server import OpenAIServer

    work = tmp_path_factory.mktemp("fuzz")
    with OpenAIServer() as server:
        shards = run_all(shard_jobs(work, server.base_url))
        assert [o.code for o in shards] == [0, 0, 0], [o.err[-500:] for o in shards]
        return run_all(commands(work, server.base_url))


def test_every_command_is_fuzzed(outcomes):
    fuzzed = {o.argv[0] for o in outcomes}
    assert set(COMMANDS) <= fuzzed, set(COMMANDS) - fuzzed
    assert len(outcomes) > 150


def test_no_traceback_no_hang_and_nothing_written_on_error(outcomes):
    tracebacks = [(o.argv, o.traceback) for o in outcomes if o.traceback]
    hangs = [o.argv for o in outcomes if o.hung]
    written = [(o.argv, o.written) for o in outcomes if o.written]
    assert (len(tracebacks), len(hangs), len(written)) == (0, 0, 0), (
        tracebacks[:3],
        hangs[:5],
        written[:5],
    )


def test_every_error_is_one_line(outcomes):
    codes = {}
    for o in outcomes:
        codes[o.code] = codes.get(o.code, 0) + 1
        if o.code == 2 and o.err.strip():
            lines = [
                x for x in o.err.splitlines() if x.strip() and not x.startswith("jevalkit: warning")
            ]
            # a progress bar redraws with carriage returns: its lines end in one
            lines = [x for x in lines if "\r" not in x]
            assert len(lines) <= 1, (o.argv, o.err[-1500:])
    assert set(codes) <= {0, 1, 2}, codes
    assert codes.get(2, 0) > 100, codes
