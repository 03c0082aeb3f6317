"""The runner on Dask (issue 28): a real ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1 (the CLIs that come with ``distributed``), against the loopback OpenAI-compatible
server, which records every request it receives."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import dask
import dask.distributed  # its configuration defaults, before any dask.config.set
import pandas as pd
import pytest
import race_answers
from active_benchmark import PROBE as ACTIVE_PROBE
from active_benchmark import active_benchmark, answerer

import jevalkit
from jevalkit.cli import main
from jevalkit.cluster import dask_client
from jevalkit.errors import ClusterError, ResultsError, UsageError
from jevalkit.items import ActiveCases
from jevalkit.judges import JudgeConfig, load_judge_prompt
from jevalkit.labels import CascadeDesign, CascadeStage
from jevalkit.metrics import Race
from jevalkit.results import (
    KEY_COLUMNS,
    PartsReader,
    ResultRow,
    config_path,
    iter_rows,
    merge_parts,
    merge_rows,
    part_files,
    parts_dir,
    read_results,
    row_key,
)
from jevalkit.runner import (
    Job,
    RunSettings,
    dask_shards,
    execute,
    guided_shards,
    judge,
    open_executor,
    shard_of,
)
from jevalkit.stats import AdaptiveRepeats

REPO = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).with_name("dask")
WORKER_KEY = "sk-worker-only-0123456789abcdef"
CONTENT = ["output", "score", "passed", "parameters", "checks", "error", "params_hash"]


class Cluster:
    """A scheduler and two workers, each a process of its own, every port on 127.0.0.1."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "scheduler.json"
        self.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "5s",
            "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL": "1s",
        }
        self.env.pop("JEVALKIT_TEST_KEY", None)
        self.logs: list[Path] = []
        self.scheduler = self._start(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address",
            "127.0.0.1:0",
            "--scheduler-file", str(self.file),
        )  # fmt: skip
        self.workers: list[subprocess.Popen] = []
        self.add_workers(2)
        self.address = self.scheduler_address()

    def _start(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        log = self.folder / f"{args[0]}-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("wb") as fh:
            return subprocess.Popen(
                [str(DASK), *args],
                env=env or self.env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=self.folder,  # not the driver's working folder
            )

    def add_workers(self, n: int) -> None:
        for _ in range(n):
            while not self.file.exists():
                time.sleep(0.1)
            env = {**self.env, "JEVALKIT_TEST_KEY": WORKER_KEY}
            self.workers.append(
                self._start(
                    "worker",
                    "--scheduler-file",
                    str(self.file),
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--dashboard-address",
                    "127.0.0.1:0",
                    "--no-nanny",
                    env=env,
                )
            )
        alive = sum(w.poll() is None for w in self.workers)
        with dask_client(scheduler=self.scheduler_address()) as client:
            client.wait_for_workers(alive, timeout=120)

    def scheduler_address(self) -> str:
        # the scheduler writes its file in place: it can exist and still be empty or partial
        while True:
            try:
                return json.loads(self.file.read_text())["address"]
            except (ValueError, KeyError):
                if self.scheduler.poll() is not None:
                    raise RuntimeError(
                        f"the scheduler exited: {self.logs[0].read_text()}"
                    ) from None
                time.sleep(0.1)

    def close(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    yield c
    c.close()


def grid() -> list[jevalkit.Probe]:
    """Two cases: the bundled probe under two ids, told apart by top_p."""
    base = jevalkit.load_probe("schema-ten-records@3")  # keys hashed into shards as written
    return [
        dataclasses.replace(base, id=f"case-{i}", parameters={**base.parameters, "top_p": p})
        for i, p in enumerate((0.9, 0.8))
    ]


def run(server, out, probes=None, **options):
    defaults = dict(
        base_url=server.base_url,
        out=out,
        repeats=6,
        temperature=1.0,
        seed=0,
        max_tokens=400,
        progress=False,
        cache=False,
    )
    return jevalkit.run(probes or grid(), "m", **{**defaults, **options})


def by_key(frame) -> dict[tuple, dict]:
    return {row_key(r): {c: r[c] for c in CONTENT} for r in frame.to_dict("records")}


def lines_by_key(path: Path) -> Counter:
    return Counter(row_key(r) for r in iter_rows(path))


def test_a_run_on_dask_gives_the_rows_of_a_single_process_run(cluster, openai_server, tmp_path):
    alone = run(openai_server, tmp_path / "alone.jsonl").rows
    sent_alone = len(openai_server.requests)
    spread = run(
        openai_server, tmp_path / "dask.jsonl", scheduler=cluster.address, concurrency=4
    ).rows
    assert len(alone) == 12 and by_key(spread) == by_key(alone)
    assert len(openai_server.requests) - sent_alone == 12  # every job sent once
    counts = lines_by_key(tmp_path / "dask.jsonl")
    assert set(counts.values()) == {1} and len(counts) == 12  # every key exactly once
    assert not parts_dir(tmp_path / "dask.jsonl").exists()  # merged, parts removed
    # the rows came from several shards (several tasks, several run ids)
    assert spread["run_id"].nunique() > 1
    # resuming on the cluster sends nothing
    again = run(openai_server, tmp_path / "dask.jsonl", scheduler=cluster.address).rows
    assert len(openai_server.requests) - sent_alone == 12 and by_key(again) == by_key(alone)


def test_retry_errors_on_dask_sends_only_the_error_rows_again(cluster, openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    openai_server.faults["m"] = ["500"] * 3
    first = run(openai_server, out, scheduler=cluster.address, max_retries=0).rows
    failed = {row_key(r) for r in first.to_dict("records") if r["error"]}
    assert len(failed) == 3 and len(openai_server.requests) == 12
    again = run(openai_server, out, scheduler=cluster.address, retry_errors=True).rows
    assert len(openai_server.requests) == 15 and again["error"].isna().all()
    counts = lines_by_key(out)
    assert len(counts) == 12 and set(counts.values()) == {1}


def test_judges_run_on_dask_too(cluster, tmp_path):
    alone = judge(
        "tool_call_accuracy", "tool_call_accuracy", out=tmp_path / "a.jsonl", progress=False
    ).rows
    spread = judge(
        "tool_call_accuracy",
        "tool_call_accuracy",
        out=tmp_path / "d.jsonl",
        progress=False,
        scheduler=cluster.address,
    ).rows
    columns = ["verdict", "gold", "expected_level"]
    key = list(KEY_COLUMNS)
    left = alone.sort_values(key)[key + columns].reset_index(drop=True)
    right = spread.sort_values(key)[key + columns].reset_index(drop=True)
    assert len(left) > 2 and left.equals(right)


def count_in_flight(server, overlap: int, wait_s: float) -> list[int]:
    """Make ``server`` hold each answer until ``overlap`` requests are in flight (at most
    ``wait_s`` seconds); return a one-item list holding the most ever in flight."""
    in_flight, peak, more = [0], [0], threading.Condition()
    plain = server.reply

    def reply(body):
        with more:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            more.notify_all()
            more.wait_for(lambda: in_flight[0] >= overlap, timeout=wait_s)
            in_flight[0] -= 1
        return plain(body)

    server.reply = reply
    return peak


def test_one_concurrency_and_one_budget_across_both_workers(cluster, openai_server, tmp_path):
    peak = count_in_flight(openai_server, overlap=3, wait_s=0.3)  # give overlap a chance

    out = tmp_path / "r.jsonl"
    result = run(openai_server, out, scheduler=cluster.address, concurrency=2, budget_requests=5)
    assert len(openai_server.requests) == 5 and len(result.rows) == 5  # the budget, not per worker
    assert "across all workers" in result.stopped
    rest = run(openai_server, out, scheduler=cluster.address, concurrency=2).rows
    assert len(rest) == 12 and len(openai_server.requests) == 12  # resumed, nothing sent twice
    assert set(lines_by_key(out).values()) == {1}
    assert peak[0] <= 2  # the concurrency, not 2 per worker


def test_a_dollar_budget_holds_across_workers_and_an_overrun_stops_the_run(
    cluster, openai_server, tmp_path
):
    prices = dict(price_in=1000.0, price_out=1000.0)
    result = run(openai_server, tmp_path / "usd.jsonl", scheduler=cluster.address,
                 budget_usd=1.5, concurrency=2, **prices)  # fmt: skip
    df = result.rows
    # the single-process rule, whichever worker asks: 5 answers ($0.156 each) fit, with the
    # next one's $0.799 reservation; a task that finds others' requests in flight yields and
    # the driver runs another wave, so the run stops only at the budget, as in one process
    alone = run(
        openai_server, tmp_path / "alone.jsonl", budget_usd=1.5, concurrency=2, **prices
    ).rows
    assert len(df) == len(alone) == 5 and df["cost_usd"].sum() <= 1.5
    assert "across all workers" in result.stopped and not result.budget_overrun
    # the test server reports more completion tokens than max_tokens: the reservation is short
    over = run(openai_server, tmp_path / "over.jsonl", scheduler=cluster.address, budget_usd=50.0,
               max_tokens=5, concurrency=2, price_in=0.001, price_out=1000.0)  # fmt: skip
    assert over.budget_overrun and "budget overrun" in over.stopped
    assert len(over.rows) < 12


def test_shards_then_merge_equal_the_whole_run(openai_server, tmp_path, capsys):
    whole = run(openai_server, tmp_path / "whole.jsonl").rows
    sent = len(openai_server.requests)
    out = tmp_path / "sharded.jsonl"
    for shard in ("0/2", "1/2"):
        part = run(openai_server, out, shard=shard).rows
        index = int(shard[0])
        assert all(shard_of(row_key(r), 2) == index for r in part.to_dict("records"))
    assert len(part_files(out)) == 2 and not out.exists()
    assert len(openai_server.requests) - sent == 12  # each job in exactly one shard
    assert main(["merge", str(out)]) == 0
    assert "merged 2 part file(s)" in capsys.readouterr().out
    assert by_key(read_results(out)) == by_key(whole) and not parts_dir(out).exists()
    # a shard re-run after the merge finds its keys done and sends nothing
    run(openai_server, out, shard="1/2")
    assert len(openai_server.requests) - sent == 12


def test_the_cli_runs_on_a_scheduler_and_refuses_mixed_options(
    cluster, openai_server, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.jsonl"
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    argv += ["--out", "r.jsonl", "--repeats", "4", "--no-cache"]  # relative to the driver
    assert main([*argv, "--scheduler", cluster.address]) == 0
    assert len(read_results(out)) == 4 and len(openai_server.requests) == 4
    shown = capsys.readouterr()
    assert "Dask dashboard:" in shown.err and "pass_rate" in shown.out  # one bar, the summary
    assert main([*argv, "--scheduler", cluster.address, "--shard", "0/2"]) == 2
    assert "drop --scheduler/--workers" in capsys.readouterr().err
    assert main([*argv, "--shard", "2/2"]) == 2
    assert "from 0 to 1" in capsys.readouterr().err
    assert main([*argv, "--repeats", "auto", "--shard", "0/2"]) == 2
    assert "not as --shard" in capsys.readouterr().err
    assert main(["merge", "none.jsonl"]) == 2
    assert "no part files" in capsys.readouterr().err


def test_the_embedded_model_on_workers_that_cannot_share_it_is_refused_with_the_fix(
    cluster, tmp_path, monkeypatch
):
    # issue 37.4: the refusal named `jevalkit local start`, which does not exist. These workers
    # keep their state elsewhere (as workers on other machines do): refused before any server
    # starts, naming commands that exist
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path / "driver-state"))
    with pytest.raises(UsageError, match="these Dask workers do not see it") as refused:
        jevalkit.run(
            "schema-ten-records", "local", out=tmp_path / "r.jsonl", scheduler=cluster.address
        )
    commands = re.findall(r"`([^`]*)`", str(refused.value))
    assert commands and all(" local serve" in c for c in commands)
    assert "local start" not in str(refused.value)
    assert not (tmp_path / "driver-state" / "server.json").exists()
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.local_model
def test_the_embedded_model_on_a_local_cluster_is_one_shared_server(local_server, tmp_path):
    # issue 37.4: on a LocalCluster on this machine, the one local server serves every task
    df = jevalkit.run(
        "schema-ten-records",
        "local",
        out=tmp_path / "r.jsonl",
        workers=2,
        repeats=4,
        max_tokens=8,
        temperature=1.0,
        progress=False,
    ).rows
    assert len(df) == 4 and df["error"].isna().all()
    assert set(df["base_url"]) == {local_server.base_url}  # no task started a server of its own
    assert set(df["model_sha256"]) == {local_server.model_sha256}


def test_workers_read_the_key_from_their_own_environment(cluster, openai_server, tmp_path):
    assert "JEVALKIT_TEST_KEY" not in os.environ  # only the workers have it
    out = tmp_path / "r.jsonl"
    run(openai_server, out, scheduler=cluster.address, api_key_env="JEVALKIT_TEST_KEY", repeats=2)
    auth = {r["headers"].get("Authorization") for r in openai_server.requests}
    assert auth == {f"Bearer {WORKER_KEY}"}
    for path in [out, *cluster.logs]:
        assert WORKER_KEY not in path.read_text(errors="replace")


def test_adaptive_repeats_run_in_waves_and_stop_like_a_single_process(
    cluster, openai_server, tmp_path
):
    plan = dict(target_half_width=0.45, min_repeats=2, max_repeats=6)
    one = run(openai_server, tmp_path / "a.jsonl", design=AdaptiveRepeats(**plan))
    dask = run(
        openai_server, tmp_path / "d.jsonl", scheduler=cluster.address,
        design=AdaptiveRepeats(**plan),
    )  # fmt: skip
    assert by_key(dask.rows) == by_key(one.rows)
    columns = ["n", "sweeps", "rounds", "value", "ci_low", "ci_high", "stop_reason"]
    assert dask.design.table()[columns].equals(one.design.table()[columns])
    assert one.design.table()["rounds"].iloc[0] >= 2  # more than one wave


def test_an_active_plan_on_dask_sends_the_same_draws_and_estimate_as_one_process(
    cluster, openai_server, tmp_path
):
    """Each wave of an active plan is one execution on the cluster: the same cases drawn, the
    same rows and the same estimate as in one process, with and without a target half-width."""
    _, path, gold, params = active_benchmark(tmp_path)
    openai_server.reply = answerer(gold, params)
    columns = ["n_answered", "waves", "value", "ci_low", "ci_high", "stop_reason"]
    for name, more in (("fixed", {}), ("target", {"target_half_width": 0.2})):
        options = dict(base_url=openai_server.base_url, progress=False, cache=False)
        one = jevalkit.run(
            ACTIVE_PROBE, "new", out=tmp_path / f"{name}-1.jsonl",
            design=ActiveCases(k=32, prior=path, seed=1, **more), **options,
        )  # fmt: skip
        dask = jevalkit.run(
            ACTIVE_PROBE,
            "new",
            out=tmp_path / f"{name}-dask.jsonl",
            scheduler=cluster.address,
            design=ActiveCases(k=32, prior=path, seed=1, **more),
            **options,
        )
        assert by_key(dask.rows) == by_key(one.rows)
        assert dask.design.table()[columns].equals(one.design.table()[columns])
        assert dask.design.plan.cases == one.design.plan.cases
    assert one.design.table()["stop_reason"].iloc[0] == "target"


def test_a_cascade_on_dask_asks_each_judge_what_one_process_asks(cluster, openai_server, tmp_path):
    """A cascade's judges are the arms of one design: each wave (a judge's open cases) runs on
    the cluster, and the decisions and rows equal one process's."""
    openai_server.logprobs = cascade_logprobs
    prompt = load_judge_prompt("security")
    stages = [
        CascadeStage(name=name, model=name, threshold=0.95, config=JudgeConfig())
        for name in ("small", "big")
    ]
    results = {}
    for where, more in (("one", {}), ("dask", {"scheduler": cluster.address})):
        design = CascadeDesign(stages=stages, levels=prompt.labels, evaluator=prompt.name)
        results[where] = judge(
            "security", cascade_cases(), design=design, base_url=openai_server.base_url,
            out=tmp_path / f"{where}.jsonl", progress=False, cache=False, **more,
        )  # fmt: skip
    one, dask = results["one"], results["dask"]
    assert by_key(dask.rows) == by_key(one.rows)
    pd.testing.assert_frame_equal(dask.design.decisions, one.design.decisions)
    assert set(one.design.decisions["decided_by"]) == {"small", "big", "person"}


def cascade_cases():
    # c0-c3: the small judge is sure; c4-c5: only the big one; c6-c7: neither
    sure = [("0.99", "0.9")] * 4 + [("0.6", "0.99")] * 2 + [("0.6", "0.6")] * 2
    return [
        {"id": f"c{i}", "output": f"answer c{i}: small={s} big={b}"}
        for i, (s, b) in enumerate(sure)
    ]


def cascade_logprobs(body):
    text = json.dumps(body.get("messages"))
    p = float(re.search(rf"{body['model']}=([0-9.]+)", text).group(1))
    alts = [{"token": "No", "logprob": math.log(p)}, {"token": "Yes", "logprob": math.log(1 - p)}]
    return {"content": [{"token": "No", "logprob": alts[0]["logprob"], "top_logprobs": alts}]}


def test_a_race_on_dask_sends_the_same_waves_and_certifies_as_one_process(
    cluster, openai_server, tmp_path
):
    """Each wave of a race is one execution per system still in it on the cluster: the same
    cases to the same systems, the same certified ranks as in one process."""
    openai_server.reply = race_answers.answerer()[0]
    race = Race(models=["good", "mid", "bad"], target="ranks")
    options = dict(base_url=openai_server.base_url, progress=False, cache=False, concurrency=2)
    one = jevalkit.run(race_answers.PROBE, None, design=race, out=tmp_path / "1.jsonl", **options)
    dask = jevalkit.run(
        race_answers.PROBE,
        None,
        design=race,
        out=tmp_path / "d.jsonl",
        scheduler=cluster.address,
        **options,
    )
    assert by_key(dask.rows) == by_key(one.rows)
    assert dask.design.table().equals(one.design.table()) and one.design.certified
    assert one.design.waves >= 3


def test_guided_shards_hold_every_job_once_and_shrink_to_the_smallest():
    keys = [("p", 1, f"c{i % 7}", None, "m", "ab", None, None, None, None, i) for i in range(1000)]
    shards = guided_shards(keys, threads=4, smallest=16)
    sizes = [len(s) for s in shards]
    assert sorted(i for s in shards for i in s) == list(range(1000))
    assert sizes[0] == 125 and sizes == sorted(sizes, reverse=True)  # 1000 / (2 x 4), shrinking
    assert all(size >= 16 for size in sizes[:-1]) and sizes[-1] <= 16
    # which keys share a shard does not depend on the order the jobs were planned in
    shuffled = random.Random(0).sample(keys, len(keys))
    again = guided_shards(shuffled, threads=4, smallest=16)
    assert [{keys[i] for i in s} for s in shards] == [{shuffled[i] for i in s} for s in again]
    assert guided_shards([], threads=2, smallest=4) == []
    assert [len(s) for s in guided_shards(keys[:3], threads=8, smallest=4)] == [3]
    # on Dask: the smallest shard is four times a task's share of the concurrency
    assert min(len(s) for s in dask_shards(keys, threads=2, concurrency=32)[:-1]) == 64


def test_dask_shards_give_every_worker_thread_a_task_when_there_are_jobs_enough():
    # a task holds at most its share of the concurrency: fewer tasks than threads would leave
    # workers idle and cap the run below its concurrency (one task of 12 jobs at default 8
    # concurrency on 2 threads sent 4 at a time, from one worker)
    for n in (1, 3, 6, 12, 17, 100, 2500):
        keys = [("p", 1, None, "m", "ab", None, None, None, None, r) for r in range(n)]
        for threads in (1, 2, 8):
            for concurrency in (1, 4, 8, 64, 1000):
                shards = dask_shards(keys, threads=threads, concurrency=concurrency)
                assert sorted(i for s in shards for i in s) == list(range(n))
                assert len(shards) >= min(threads, n, concurrency), (n, threads, concurrency)


def test_guided_shards_never_split_one_key_over_two_shards():
    # two jobs of one key (the same probe given twice) must share a part: in two parts their
    # two rows are two answers to one request, which the merge refuses after paying for both
    keys = [("p", 1, None, "m", "ab", None, None, None, None, r % 50) for r in range(100)]
    for threads, smallest in ((1, 1), (2, 3), (4, 5), (8, 1)):
        shards = guided_shards(keys, threads=threads, smallest=smallest)
        assert sorted(i for s in shards for i in s) == list(range(100))
        owner: dict[tuple, int] = {}
        for index, shard in enumerate(shards):
            for i in shard:
                assert owner.setdefault(keys[i], index) == index, (threads, smallest, keys[i])


def test_a_probe_given_three_times_runs_on_dask_as_in_one_process(cluster, openai_server, tmp_path):
    # 36 jobs of 12 keys: the first shard (9 jobs) ended inside one key's three jobs, two parts
    # held two answers to it and the merge refused the run after every request was sent
    alone = run(openai_server, tmp_path / "a.jsonl", probes=grid() * 3).rows
    spread = run(openai_server, tmp_path / "d.jsonl", probes=grid() * 3, concurrency=4,
                 scheduler=cluster.address).rows  # fmt: skip
    assert by_key(spread) == by_key(alone)
    assert set(lines_by_key(tmp_path / "d.jsonl").values()) == {1}


def test_a_small_run_uses_both_workers_and_the_whole_concurrency(cluster, openai_server, tmp_path):
    peak = count_in_flight(openai_server, overlap=4, wait_s=2)

    df = run(openai_server, tmp_path / "r.jsonl", scheduler=cluster.address, repeats=3,
             concurrency=4).rows  # fmt: skip
    assert len(df) == 6 and df["run_id"].nunique() == 2  # a task on each worker
    assert peak[0] == 4  # the run's concurrency, not one task's share of it


def test_merge_refuses_two_answers_to_one_request_and_changes_nothing(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    run(openai_server, out, shard="0/2", repeats=2)
    part = part_files(out)[0]
    rows = list(iter_rows(part))
    other = parts_dir(out) / "1.jsonl"
    other.write_text(json.dumps({**rows[0], "output": "[]", "run_id": "x"}) + "\n")
    shutil.copy(config_path(part), config_path(other))  # a part of the same run
    before = part.read_bytes()
    with pytest.raises(ResultsError, match="the same request was answered twice"):
        merge_parts(out)
    assert not out.exists() and part.read_bytes() == before and other.exists()


def test_a_shard_retrying_an_error_that_fails_again_still_merges(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    openai_server.faults["m"] = ["500"] * 3
    run(openai_server, out, repeats=3, max_retries=0)
    assert sum(bool(r.get("error")) for r in iter_rows(out)) == 3
    openai_server.faults["m"] = ["500"] * 100  # the retries fail again
    for shard in ("0/2", "1/2"):
        run(openai_server, out, shard=shard, repeats=3, max_retries=0, retry_errors=True)
    assert len(openai_server.requests) == 9  # 6, then the 3 error rows once more
    report = merge_parts(out)
    assert sum(r["replaced_errors"] for r in report) == 3
    counts = lines_by_key(out)
    assert len(counts) == 6 and set(counts.values()) == {1}


def test_merge_without_parts_names_the_results_file_in_the_fix(tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(ResultsError) as err:
        merge_parts(out)
    assert f"--out {out}`" in str(err.value) and "{path}" not in str(err.value)


def test_an_interrupted_merge_can_be_run_again(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    for shard in ("0/2", "1/2"):
        run(openai_server, out, shard=shard, repeats=3)
    saved = tmp_path / "saved"
    shutil.copytree(parts_dir(out), saved)
    merge_parts(out)
    merged = out.read_bytes()
    # interrupted after the merged file was written, before its parts were removed
    shutil.copytree(saved, parts_dir(out), dirs_exist_ok=True)
    report = merge_parts(out)
    assert out.read_bytes() == merged and not parts_dir(out).exists()
    assert sum(r["already_merged"] for r in report) == 6 and sum(r["new"] for r in report) == 0
    # interrupted before the rename: a stray temporary file, the old results and every part
    out.unlink()
    (tmp_path / ".r.jsonl.tmp").write_text('{"torn": ')
    shutil.copytree(saved, parts_dir(out))
    merge_parts(out)
    assert lines_by_key(out) == lines_by_key_bytes(merged, tmp_path)


def lines_by_key_bytes(data: bytes, folder: Path) -> Counter:
    copy = folder / "copy.jsonl"
    copy.write_bytes(data)
    return lines_by_key(copy)


def plain(repeat: int, **fields) -> ResultRow:
    return ResultRow(
        run_id="a", kind="probe", probe="p", version=1, model="m", repeat=repeat, **fields
    )


def test_merge_copies_each_line_unchanged_and_compares_rows_not_spacing(tmp_path):
    out = tmp_path / "r.jsonl"
    rows = [plain(i, output=f'say "error": {i}', score=1.0, passed=True) for i in range(4)]
    parts_dir(out).mkdir()
    for i in (0, 1):
        (parts_dir(out) / f"{i}.jsonl").write_text("".join(r.to_json() + "\n" for r in rows[i::2]))
    saved = {p.name: p.read_bytes() for p in part_files(out)}
    merge_parts(out)
    assert sorted(out.read_bytes().splitlines()) == sorted(r.to_json().encode() for r in rows)
    # the same rows written with other spacing are the same rows: already merged, not refused
    out.write_text("".join(json.dumps(json.loads(r.to_json())) + "\n" for r in rows))
    parts_dir(out).mkdir()
    for name, data in saved.items():
        (parts_dir(out) / name).write_bytes(data)
    report = merge_parts(out)
    assert sum(r["already_merged"] for r in report) == 4 and sum(r["new"] for r in report) == 0
    # one value changed, the spacing the file's own: two answers to one request, refused
    before = out.read_bytes()
    changed = json.loads(before.splitlines()[0])
    changed["score"] = 0.0
    parts_dir(out).mkdir()
    (parts_dir(out) / "0.jsonl").write_text(json.dumps(changed) + "\n")
    with pytest.raises(ResultsError, match="the same request was answered twice"):
        merge_parts(out)
    assert out.read_bytes() == before and part_files(out)


def test_merge_writes_hand_edited_lines_anew_and_refuses_ambiguous_ones(tmp_path):
    out = tmp_path / "r.jsonl"
    parts_dir(out).mkdir()
    line = plain(0, score=1.0).to_json()
    # a carriage return between tokens and trailing blanks: valid JSON other readers split
    (parts_dir(out) / "0.jsonl").write_bytes(line.replace(",", ",\r", 1).encode() + b"  \n")
    merge_parts(out)
    assert out.read_bytes() == json.dumps(json.loads(line), separators=(",", ":")).encode() + b"\n"
    # a name twice in one object (readers disagree on which value counts), a number too large
    for bad, reason in (
        (line.replace('"score":1.0', '"score":0.0,"score":1.0'), "'score' is given twice"),
        (line.replace('"score":1.0', '"score":1e400'), "1e400 is too large for a number"),
    ):
        parts_dir(out).mkdir(exist_ok=True)
        (parts_dir(out) / "0.jsonl").write_text(bad + "\n")
        with pytest.raises(ResultsError, match=reason):
            merge_parts(out)
        shutil.rmtree(parts_dir(out))


def test_rows_read_while_parts_are_written_count_progress_and_are_not_parsed_again(tmp_path):
    out = tmp_path / "r.jsonl"
    parts_dir(out).mkdir()
    error = {"type": "http", "message": "503", "status": 503}
    rows = [
        plain(0, output='{"error": {"type": "x"}, "cost_usd": 9}'),  # only inside the text
        plain(1, error=error),
        plain(2, output="[]", cost_usd=0.25),
        plain(3, error=error, cost_usd=0.5),
    ]
    part = parts_dir(out) / "0.jsonl"
    part.write_text("".join(r.to_json() + "\n" for r in rows[:3]) + rows[3].to_json()[:20])
    reader = PartsReader(out)
    reader.poll()
    assert reader.counts() == {"rows": 3, "errors": 1, "usd": 0.25}  # not the torn last line
    part.write_text("".join(r.to_json() + "\n" for r in rows))  # the writer mended its end
    (parts_dir(out) / "1.jsonl").write_text(plain(4, error=error).to_json() + "\n")
    reader.poll()
    reader.poll()  # nothing new: nothing counted twice
    assert reader.counts() == {"rows": 5, "errors": 3, "usd": 0.75}
    # rows read before and rows read by the merge make the same file and rows
    expected = {row_key(json.loads(r.to_json())): json.loads(r.to_json()) for r in rows}
    copy = tmp_path / "copy.jsonl"
    shutil.copytree(parts_dir(out), parts_dir(copy))
    _, merged = merge_rows(out, reader=reader)
    _, alone = merge_rows(copy)
    assert merged == alone and len(merged) == 5 and all(merged[k] == v for k, v in expected.items())
    assert out.read_bytes() == copy.read_bytes()


def test_a_part_changed_after_it_was_read_is_read_anew_by_the_merge(tmp_path):
    out = tmp_path / "r.jsonl"
    parts_dir(out).mkdir()
    part = parts_dir(out) / "0.jsonl"
    part.write_text(plain(0, score=1.0).to_json() + "\n")
    reader = PartsReader(out)
    reader.poll()
    with part.open("r+") as fh:  # the same size and inode, another answer
        fh.write(plain(0, score=0.0).to_json() + "\n")
    _, merged = merge_rows(out, reader=reader)
    assert [row["score"] for row in merged.values()] == [0.0]
    assert [row["score"] for row in iter_rows(out)] == [0.0]
    # a line that is not a row is named by the merge, not hidden by the reader
    parts_dir(out).mkdir()
    (parts_dir(out) / "1.jsonl").write_text(plain(1).to_json() + "\n{oops\n")
    reader = PartsReader(out)
    reader.poll()
    with pytest.raises(ResultsError, match=r"1\.jsonl:2"):
        merge_rows(out, reader=reader)


def test_a_worker_killed_mid_run_loses_nothing_and_resends_no_written_row(
    cluster, openai_server, tmp_path
):
    """Runs last: it kills a worker (and starts a new one)."""
    gate, answered, lock = threading.Event(), [0], threading.Lock()
    plain = openai_server.reply
    first = 6

    def reply(body):
        with lock:
            answered[0] += 1
            mine = answered[0]
        if mine > first:
            gate.wait(120)  # hold every later answer until a worker is dead
        return plain(body)

    openai_server.reply = reply
    out = tmp_path / "r.jsonl"
    result: dict = {}

    def drive():
        try:
            result["df"] = run(
                openai_server, out, scheduler=cluster.address, repeats=20, concurrency=4
            ).rows
        except BaseException as exc:  # reported by the assertion below
            result["error"] = exc

    driver = threading.Thread(target=drive)
    driver.start()
    try:
        with dask_client(scheduler=cluster.address) as client:
            # wait until the first answers are written and every later request is held
            written: dict[Path, int] = {}
            for _ in range(1200):
                written = {p: len(list(iter_rows(p))) for p in part_files(out)}
                if sum(written.values()) >= first and len(openai_server.requests) > first:
                    break
                time.sleep(0.1)
            assert sum(written.values()) == first
            snapshot = {row_key(r) for p in part_files(out) for r in iter_rows(p)}
            pids = client.run(os.getpid)
            processing = client.processing()
            # kill a worker that is mid-shard with rows written in its part
            victim = next(
                w
                for w, keys in processing.items()
                for k in keys
                if written.get(parts_dir(out) / f"{k.rsplit('-s', 1)[1]}.jsonl", 0) > 0
            )
            victim_index = next(
                int(k.rsplit("-s", 1)[1])
                for k in processing[victim]
                if written.get(parts_dir(out) / f"{k.rsplit('-s', 1)[1]}.jsonl", 0) > 0
            )
            os.kill(pids[victim], signal.SIGKILL)
        gate.set()
        driver.join(300)
    finally:
        gate.set()
    assert "error" not in result, result.get("error")
    df = result["df"]
    counts = lines_by_key(out)
    assert len(df) == 40 and len(counts) == 40 and set(counts.values()) == {1}
    sent = Counter((r["body"]["top_p"], r["body"]["seed"]) for r in openai_server.requests)
    for key in snapshot:  # no row written before the kill was asked for again
        row = df[[row_key(r) == key for r in df.to_dict("records")]].iloc[0]
        assert sent[(row["parameters"]["top_p"], row["parameters"]["seed"])] == 1
    # the killed shard was finished by another attempt, which resumed from the dead one's part
    dead = {row_key(r): r["run_id"] for r in df.to_dict("records") if row_key(r) in snapshot}
    keys = [row_key(r) for r in df.to_dict("records")]
    shard = {keys[i] for i in dask_shards(keys, threads=2, concurrency=4)[victim_index]}
    victim_shard = set(dead) & shard
    later = [
        r["run_id"]
        for r in df.to_dict("records")
        if row_key(r) in shard and row_key(r) not in snapshot
    ]
    assert victim_shard and later and not set(later) & set(dead.values())
    cluster.workers = [w for w in cluster.workers if w.poll() is None]
    cluster.add_workers(2 - len(cluster.workers))


def listening() -> set:
    import psutil

    me = psutil.Process()
    return {
        (p.pid, c.laddr)
        for p in [me, *me.children(recursive=True)]
        for c in p.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    }


def test_a_cluster_without_workers_is_waited_for_then_refused_in_one_line(
    openai_server, tmp_path, monkeypatch
):
    from dask.distributed import LocalCluster

    monkeypatch.setenv("JEVALKIT_WORKER_WAIT_S", "2")
    empty = LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None)
    try:
        started = time.monotonic()
        with pytest.raises(UsageError, match=r"no Dask worker joined the scheduler within 2 s"):
            run(openai_server, tmp_path / "r.jsonl", cluster=empty)
        assert time.monotonic() - started >= 2.0  # it waited for one before refusing
        assert not openai_server.requests and not part_files(tmp_path / "r.jsonl")
    finally:
        empty.close()


def test_a_local_cluster_binds_loopback_only():
    before = listening()
    with dask_client(workers=1) as client:
        info = client.scheduler_info()
        addresses = [info["address"], *info["workers"]]
        assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses
        new = listening() - before
        assert len(new) >= 3  # the scheduler, its dashboard and the worker
        assert {addr.ip for _, addr in new} == {"127.0.0.1"}, new
        # its workers' statistical profiler samples every 100 ms, not every 10 ms (its cost)
        intervals = client.run(dask.config.get, "distributed.worker.profile.interval")
        assert set(intervals.values()) == {"100ms"}
    with pytest.raises(UsageError, match="must be an address"):
        jevalkit.run("schema-ten-records", "m", scheduler=" ")


def test_a_huge_local_cluster_is_refused_before_any_process_starts(tmp_path):
    with (
        pytest.raises(UsageError, match="worker processes on this machine"),
        dask_client(workers=100_000),
    ):
        pass
    argv = ["run", "schema-ten-records", "--model", "m", "--workers", "100000"]
    assert main([*argv, "--out", str(tmp_path / "r.jsonl"), "--no-cache"]) == 2


def test_model_drift_warns_on_the_driver(cluster, openai_server, tmp_path):
    run(openai_server, tmp_path / "r.jsonl", repeats=2)
    openai_server.identity["m"] = ("m-2026-02", "fp_2")
    with pytest.warns(UserWarning, match=r"model drift: m "):
        run(openai_server, tmp_path / "r.jsonl", repeats=3, scheduler=cluster.address)


def test_workers_n_runs_on_a_local_cluster(openai_server, tmp_path):
    df = run(openai_server, tmp_path / "r.jsonl", workers=2, repeats=2).rows
    assert len(df) == 4 and len(openai_server.requests) == 4 and df["error"].isna().all()
    # the frame built from the merged rows is the file's own
    pd.testing.assert_frame_equal(df, read_results(tmp_path / "r.jsonl"), check_like=False)


def test_a_task_that_kills_its_workers_ends_in_one_line_and_keeps_the_rows(tmp_path):
    # classes of the test's own, so that Dask sends them by value (workers cannot import tests/)
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Answers(Job):
        """A deterministic job that fills its row."""

        needs_model: bool = False

        async def perform(self, send):
            return {"output": "ok", "score": 1.0, "passed": True}

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class KillsItsWorker(Answers):
        """A job that kills the process running it, as a task running out of memory does."""

        async def perform(self, send):
            os.kill(os.getpid(), signal.SIGKILL)

    out = tmp_path / "r.jsonl"
    jobs = [
        (KillsItsWorker if r == 0 else Answers)(
            kind="probe", probe="p", version=1, probe_hash=None, params_hash="h", repeat=r
        )
        for r in range(12)
    ]

    async def spread(jobs):
        settings = RunSettings(workers=2, progress=False)
        async with open_executor(settings) as executor:
            return await execute(jobs, model=None, out=out, settings=settings, executor=executor)

    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        pytest.raises(ClusterError) as caught,
    ):
        asyncio.run(spread(jobs))
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and "failed on 2 workers" in message
    assert re.match(rf"shard \d+ of the run into {re.escape(str(out))} ", message)
    assert "rows written so far are kept" in message and "again resumes" in message
    kept = {row_key(r)[-1] for r in iter_rows(out)}
    assert kept and 0 not in kept  # the other shards' rows are in the results file
    assert not part_files(out)  # merged; the dead shard's part held no row
    # running again resumes: the rows kept are not made again
    df = asyncio.run(spread(jobs[1:])).rows
    assert len(df) == 11 and set(lines_by_key(out).values()) == {1}
