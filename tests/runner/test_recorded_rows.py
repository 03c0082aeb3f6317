"""The rows a run writes, recorded before the results layer moved out of the runner (issue 35) and
checked against every later version: a plain run, a resume after ``kill -9``, a Dask run and a
sharded run plus its merge, each against the loopback server.

What is normalised, and why (nothing else is): ``started_at``, ``finished_at`` and ``latency_s``
are clock readings; ``run_id`` is drawn at random by each invocation (and each Dask task); the
order of the lines is the order in which concurrent requests happened to finish, so lines are
compared in key order. The server's port (in ``base_url``) is free-chosen and the package
version is the installed one: both are put back in as placeholders and must match exactly.

Regenerate (only when a change of the rows is intended, and say so in the commit):
``JEVALKIT_RECORD_ROWS=1 pytest tests/runner/test_recorded_rows.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

from killed_run import kill_after

import jevalkit
from jevalkit.cli import main

REPO = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).with_name("recorded")
RECORD = os.environ.get("JEVALKIT_RECORD_ROWS") == "1"
CLOCK = re.compile(
    rb'"(started_at|finished_at)":"[^"]*"|"latency_s":[-0-9.eE+]+|"run_id":"[0-9a-f]+"'
)


def grid() -> list[jevalkit.Probe]:
    """Two probe ids of one bundled probe (told apart by top_p) and three cases of another."""
    base = jevalkit.load_probe("schema-ten-records@3")  # the version the rows were recorded with
    return [
        dataclasses.replace(base, id=f"case-{i}", parameters={**base.parameters, "top_p": p})
        for i, p in enumerate((0.9, 0.8))
    ]


def options(server, out: Path, **more) -> dict:
    defaults = dict(
        base_url=server.base_url,
        out=out,
        repeats=3,
        temperature=1.0,
        seed=0,
        max_tokens=400,
        progress=False,
        cache=False,
    )
    return {**defaults, **more}


def normalised(path: Path, port: int) -> list[str]:
    """The lines of ``path`` with the clock fields and run ids blanked, the port and version as
    placeholders, in key order."""
    lines = []
    for line in path.read_bytes().splitlines():
        line = CLOCK.sub(lambda m: m.group(0).split(b":", 1)[0] + b":0", line)
        line = line.replace(f"127.0.0.1:{port}/".encode(), b"127.0.0.1:<port>/")
        line = line.replace(f'"{jevalkit.__version__}"'.encode(), b'"<version>"')
        lines.append(line.decode())
    return sorted(lines, key=_key_text)


def _key_text(line: str) -> str:
    row = json.loads(line)
    key = ("probe", "version", "case_id", "variant", "model", "params_hash", "label")
    return json.dumps([row.get(k) for k in (*key, "system_a", "system_b", "position", "repeat")])


def check(name: str, path: Path, port: int) -> None:
    got = normalised(path, port)
    fixture = RECORDED / f"{name}.jsonl"
    if RECORD:
        RECORDED.mkdir(exist_ok=True)
        fixture.write_text("".join(f"{line}\n" for line in got))
    want = fixture.read_text().splitlines()
    assert len(got) == len(want)
    for mine, theirs in zip(got, want, strict=True):
        assert mine == theirs


def a_run(server, out: Path) -> None:
    """Probe ids with no cases, a probe with cases and variants, a label, and a model whose every
    request fails (error rows)."""
    jevalkit.run(grid(), "m", **options(server, out))
    jevalkit.run(
        "unit-conversion@1", "m", cases="1-3", **options(server, out, repeats=2, label="T=1")
    )
    jevalkit.run("schema-ten-records@3", "m", variants="all", **options(server, out, repeats=1))
    server.faults["m-err"] = ["500"] * 100
    jevalkit.run(grid(), "m-err", **options(server, out, repeats=2, max_retries=0))


def test_a_run_writes_the_recorded_rows(openai_server, tmp_path):
    out = tmp_path / "run.jsonl"
    a_run(openai_server, out)
    check("run", out, openai_server.port)


KILLED = """
import sys, jevalkit, dataclasses
base = jevalkit.load_probe("schema-ten-records@3")
probes = [dataclasses.replace(base, id=f"case-{i}", parameters={**base.parameters, "top_p": p})
          for i, p in enumerate((0.9, 0.8))]
jevalkit.run(probes, "m", base_url=sys.argv[1], out=sys.argv[2], repeats=10, temperature=1.0,
             seed=0, max_tokens=400, progress=False, cache=False, concurrency=2)
"""


def test_a_resume_after_kill_9_writes_the_recorded_rows(openai_server, tmp_path):
    out = tmp_path / "killed.jsonl"
    first, plain = 6, openai_server.reply
    kill_after(openai_server, plain, first, KILLED, out)  # answers six, then SIGKILL
    assert out.read_bytes().count(b"\n") == first  # killed mid-run, the first rows written
    with out.open("ab") as fh:  # and a write the kill tore in two
        fh.write(b'{"run_id":"0123456789ab","kind":"pro')
    jevalkit.run(grid(), "m", **options(openai_server, out, repeats=10, concurrency=2))
    check("resume", out, openai_server.port)


def test_a_dask_run_writes_the_recorded_rows(openai_server, tmp_path):
    out = tmp_path / "dask.jsonl"
    jevalkit.run(grid(), "m", **options(openai_server, out, repeats=4, workers=2))
    check("dask", out, openai_server.port)


def test_shards_and_their_merge_write_the_recorded_rows(openai_server, tmp_path, capsys):
    out = tmp_path / "sharded.jsonl"
    for shard in ("0/3", "1/3", "2/3"):
        jevalkit.run(grid(), "m", **options(openai_server, out, repeats=4, shard=shard))
    assert main(["merge", str(out)]) == 0
    check("sharded", out, openai_server.port)
