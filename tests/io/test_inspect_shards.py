"""A folder of inspect_ai logs with shards (``<name>.shards/<k>/*.eval``, the per-worker logs of a
sharded eval, and ``<name>.eval``, their merge): ``io.read`` reads the merged log or its shards,
never both, and of a shard's attempts only the current one. The shard logs are made by running
inspect_ai itself against the loopback server; the merged log is written with inspect_ai's own
log API and its ``EvalShards`` ledger (inspect_ai 0.3.285, the newest on PyPI here, reads shard
sets but has no ``inspect log merge-shards`` yet)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import EvalShardEntry, EvalShards, read_eval_log, write_eval_log

from jevalkit import io
from jevalkit.cli import main
from jevalkit.errors import ImportFormatError

TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def tiny():
    return Task(
        dataset=[Sample(input=f"Question {i}", target="User 10", id=f"s{i}") for i in range(4)],
        solver=generate(),
        scorer=includes(),
        epochs=2,
    )
"""
NAME = "2026-12-01T00-00-00+00-00_tiny_merged"


def inspect_shard(server, work: Path, shard_dir: Path, sample_ids: str) -> Path:
    env = {
        **os.environ,
        "LOCAL_BASE_URL": server.base_url,
        "LOCAL_API_KEY": "x",
        "INSPECT_LOG_DIR": str(shard_dir),
        "INSPECT_DISPLAY": "none",
    }
    before = set(shard_dir.glob("*.eval")) if shard_dir.exists() else set()
    cmd = [sys.executable, "-m", "inspect_ai", "eval", "task.py", "--model", "openai-api/local/m"]
    cmd += ["--sample-id", sample_ids]
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (log,) = set(shard_dir.glob("*.eval")) - before
    return log


def merge(logs: Path, shards: dict[str, Path]) -> Path:
    """What ``inspect log merge-shards`` writes: every shard's samples, and the ledger."""
    read = {k: read_eval_log(str(p)) for k, p in shards.items()}
    merged = next(iter(read.values())).model_copy(deep=True)
    merged.samples = [s for log in read.values() for s in log.samples or []]
    merged.status = "success"
    ids = sorted({s.id for s in merged.samples})
    merged.eval.dataset.sample_ids = ids  # the merged selection
    merged.eval.dataset.samples = len(ids)
    ledger = [
        EvalShardEntry(
            shard=k,
            log=p.name,
            status=read[k].status,
            samples=len(read[k].samples or []),
            selected=len({s.id for s in read[k].samples or []}),
            selection_digest=hashlib.sha256(p.name.encode()).hexdigest(),
            size=p.stat().st_size,
        )
        for k, p in shards.items()
    ]
    merged.eval.shards = EvalShards(selection="ids", ledger=ledger)
    target = logs / f"{NAME}.eval"
    write_eval_log(merged, str(target))
    return target


@pytest.fixture(scope="module")
def shard_set(tmp_path_factory):
    from openai_server import OpenAIServer

    work = tmp_path_factory.mktemp("shards")
    (work / "task.py").write_text(TASK)
    logs = work / "logs"
    with OpenAIServer() as server:
        shards = {
            "0": inspect_shard(server, work, logs / f"{NAME}.shards" / "0", "s0,s1"),
            "1": inspect_shard(server, work, logs / f"{NAME}.shards" / "1", "s2,s3"),
        }
        retry = inspect_shard(server, work, work / "retry", "s2,s3")
    return logs, shards, retry


def copy_of(logs: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "logs"
    shutil.copytree(logs, dest)
    return dest


def key_count(df) -> int:
    return len(df.drop_duplicates(["case_id", "repeat", "probe", "model"]))


def test_shards_alone_are_read_once_each(shard_set, tmp_path):
    logs = copy_of(shard_set[0], tmp_path)
    df = io.read(logs)
    assert len(df) == 8 == key_count(df)  # 4 samples x 2 epochs, one scorer
    assert sorted(df["case_id"].unique()) == ["s0", "s1", "s2", "s3"]


def test_a_finished_merge_is_read_instead_of_its_shards(shard_set, tmp_path):
    logs = copy_of(shard_set[0], tmp_path)
    shards = {k: logs / f"{NAME}.shards" / k / p.name for k, p in shard_set[1].items()}
    merged = merge(logs, shards)
    chosen = io.folder_logs(logs)
    assert chosen.logs == (merged,)
    assert sorted(why for _, why in chosen.left_out) == [f"merged into {merged.name}"] * 2
    df = io.read(logs)  # was: a folder is not a file; the logs by hand: duplicate rows refused
    assert len(df) == 8 == key_count(df)
    assert df.equals(io.read(merged))


def test_a_later_attempt_outdates_the_merge_so_the_shards_are_read(shard_set, tmp_path):
    logs = copy_of(shard_set[0], tmp_path)
    shards = {k: logs / f"{NAME}.shards" / k / p.name for k, p in shard_set[1].items()}
    merged = merge(logs, shards)
    retry = logs / f"{NAME}.shards" / "1" / shard_set[2].name  # a newer attempt of shard 1
    shutil.copy(shard_set[2], retry)
    later = shards["1"].stat().st_mtime + 60  # made after it; its mtime says so whatever the clock
    os.utime(retry, (later, later))
    with pytest.warns(UserWarning, match="read its shards instead of this merged log"):
        chosen = io.folder_logs(logs)
    assert set(chosen.logs) == {shards["0"], retry}
    assert dict(chosen.left_out)[shards["1"]] == "an earlier attempt of shard 1"
    assert dict(chosen.left_out)[merged].startswith("its shards were read instead: shard 1's")
    with pytest.warns(UserWarning):
        df = io.read(logs)
    assert len(df) == 8 == key_count(df)  # never both, never two attempts of one shard


def test_the_import_command_reads_a_log_folder(shard_set, tmp_path, capsys):
    logs = copy_of(shard_set[0], tmp_path)
    out = tmp_path / "imported.jsonl"
    assert main(["import", str(logs), "--out", str(out)]) == 0, capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 8


def test_a_folder_without_logs_or_of_another_format_is_one_line(tmp_path):
    with pytest.raises(ImportFormatError, match=r"no inspect_ai \.eval logs in this folder"):
        io.read(tmp_path)
    with pytest.raises(ImportFormatError, match="a folder is read as inspect_ai logs"):
        io.read(tmp_path, "promptfoo")


def test_every_command_reading_results_reads_a_log_folder_as_import_does(
    shard_set, tmp_path, capsys
):
    # `jevalkit metrics FOLDER` said "not a regular file (a folder)" while `import` read it
    logs = copy_of(shard_set[0], tmp_path)
    assert main(["metrics", str(logs), "--json"]) == 0, capsys.readouterr().err
    rows = json.loads(capsys.readouterr().out)
    assert {r["n"] for r in rows if r["metric"] == "pass_rate"} == {8}
    (tmp_path / "empty").mkdir()
    assert main(["metrics", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file (a folder)" in err


def test_a_merge_saved_under_another_name_is_told_by_its_ledger(shard_set, tmp_path, capsys):
    # it was read together with its shards: "16 rows ... share a key"
    logs = copy_of(shard_set[0], tmp_path)
    shards = {k: logs / f"{NAME}.shards" / k / p.name for k, p in shard_set[1].items()}
    copy = logs / "tiny-final.eval"
    merge(logs, shards).rename(copy)
    chosen = io.folder_logs(logs)
    assert chosen.logs == (copy,)
    assert sorted(why for _, why in chosen.left_out) == [f"merged into {copy.name}"] * 2
    df = io.read(logs)
    assert len(df) == 8 == key_count(df)
    # two merges of the same shards (the default name and a copy): one line naming both
    merged = merge(logs, shards)
    with pytest.raises(ImportFormatError, match="are the same run") as refused:
        io.folder_logs(logs)
    assert "\n" not in str(refused.value)
    assert str(copy) in str(refused.value) and str(merged) in str(refused.value)
    assert main(["import", str(logs), "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "are the same run" in err
