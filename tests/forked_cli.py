"""Run CLI commands each in a forked child of a warm parent, a few at a time, with a deadline:
a command that hangs (a FIFO read that waits for a writer forever) is killed and counted instead
of stopping the suite; a command's files written on error are found (tests/cli/test_cli_fuzz.py
and test_flag_fuzz.py)."""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import multiprocessing.connection
import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from jevalkit.cli import main

TIMEOUT_S = 90  # a command on a small hostile file answers in seconds even on a busy machine
AT_ONCE = 2


@dataclass
class Job:
    argv: list[str]
    env: dict[str, str]
    folder: Path  # its working directory, where its outputs go
    scope: tuple[Path, ...] = ()  # other folders it may write
    group: str = ""  # jobs of one group (one probe folder) run one after another


@dataclass
class Outcome:
    argv: list[str]
    code: object = None
    err: str = ""
    traceback: str = ""
    hung: bool = False
    written: tuple[str, ...] = ()
    seconds: float = 0.0


def _child(job: Job, conn) -> None:
    os.chdir(job.folder)
    os.environ.update(job.env)
    out, err = io.StringIO(), io.StringIO()
    result: dict = {}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result["code"] = main(job.argv)
    except SystemExit as exc:
        result["code"] = exc.code
    except BaseException:
        result["traceback"] = traceback.format_exc()[-3000:]
    result["err"] = err.getvalue()[-3000:]
    conn.send(result)  # a pipe: sent before the child exits (a Queue's feeder thread may not be)
    conn.close()
    os._exit(0)


def files_under(roots) -> dict[str, tuple[int, int]]:
    seen = {}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.is_dir() else [root]:
            if path.is_file() and not path.is_symlink() and not path.name.endswith(".lock"):
                info = path.stat()
                seen[str(path)] = (info.st_size, info.st_mtime_ns)
    return seen


@dataclass
class _Running:
    job: Job
    child: multiprocessing.Process
    conn: multiprocessing.connection.Connection
    before: dict
    deadline: float
    started: float = field(default_factory=time.monotonic)


def _start(job: Job, timeout: float = TIMEOUT_S) -> _Running:
    ctx = multiprocessing.get_context("fork")
    job.folder.mkdir(parents=True, exist_ok=True)
    theirs, mine = ctx.Pipe(duplex=False)
    before = files_under((job.folder, *job.scope))
    child = ctx.Process(target=_child, args=(job, mine))
    child.start()
    mine.close()
    return _Running(job, child, theirs, before, time.monotonic() + timeout)


def _finish(running: _Running, *, hung: bool) -> Outcome:
    job, outcome, result = running.job, Outcome(running.job.argv, hung=hung), {}
    outcome.seconds = time.monotonic() - running.started
    if hung:
        running.child.kill()
    else:
        try:
            result = running.conn.recv()
        except EOFError:  # the child died without a word (a crash of the interpreter)
            result = {"traceback": "the command's process died"}
    running.child.join(30)
    running.conn.close()
    outcome.code = result.get("code")
    outcome.err = result.get("err", "")
    outcome.traceback = result.get("traceback", "")
    if outcome.code not in (0, None) or outcome.traceback or outcome.hung:
        after = files_under((job.folder, *job.scope))
        changed = [k for k, v in after.items() if running.before.get(k) != v]
        # a report's partial notebook, kept on purpose and named in the error ("kept at ...")
        # a merge that met a torn part merges its complete rows and keeps the part (exit 1)
        merged = "so the part is kept" in outcome.err and job.argv[0] == "merge"
        # a race that ran and certified nothing exits 1 (its answer, as a gate's FAIL) with its
        # rows and outcome written, as a run's are
        raced = job.argv[0] == "race" and outcome.code == 1 and not outcome.traceback
        outcome.written = tuple(
            sorted(
                k for k in changed if f"kept at {k}" not in outcome.err and not merged and not raced
            )
        )
    return outcome


def run_all(jobs: list[Job], *, timeout: float = TIMEOUT_S) -> list[Outcome]:
    """Every job, ``AT_ONCE`` at a time, the jobs of a group one after another, each killed
    (and counted as hung) after ``timeout`` seconds."""
    queues: dict[str, list[Job]] = {}
    for job in jobs:
        queues.setdefault(job.group or f"alone-{id(job)}", []).append(job)
    waiting = list(queues.values())
    running: dict[str, _Running] = {}  # group -> its running job
    outcomes = []
    while waiting or running:
        for queue in list(waiting):
            if len(running) >= AT_ONCE:
                break
            key = queue[0].group or f"alone-{id(queue[0])}"
            if key in running:
                continue
            running[key] = _start(queue.pop(0), timeout)
            if not queue:
                waiting.remove(queue)
        ready = multiprocessing.connection.wait([r.conn for r in running.values()], timeout=1.0)
        for key, r in list(running.items()):
            if r.conn in ready or time.monotonic() > r.deadline:
                outcomes.append(_finish(r, hung=r.conn not in ready))
                del running[key]
    return outcomes
