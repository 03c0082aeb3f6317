"""``jevalkit local stop`` signals only the server jevalkit started (issue 19.6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from jevalkit import local
from jevalkit.cli import main


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path))
    return tmp_path / "server.json"


def write_state(path, **fields):
    record = {
        "pid": 0,
        "port": 8917,
        "model_path": "m.gguf",
        "model_sha256": "ab",
        "binary": "/x/llama-server",
        "start_time": 1,
        **fields,
    }
    path.write_text(json.dumps(record))


def test_a_stale_state_file_never_kills_an_unrelated_process(state, capsys):
    victim = subprocess.Popen(["sleep", "60"])
    try:
        start = local.process_start_time(victim.pid)
        write_state(state, pid=victim.pid, start_time=start)  # right pid and time, wrong program
        assert main(["local", "stop"]) == 0
        assert "not running" in capsys.readouterr().out
        assert victim.poll() is None and not state.exists()
        write_state(state, pid=victim.pid, start_time=start + 1)  # a reused pid
        assert local.stop() is False and victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("pid", [-1, 0, 1])
def test_pids_that_reach_many_processes_or_init_are_never_signalled(state, pid):
    write_state(state, pid=pid, start_time=local.process_start_time(1) or 1)
    assert local.status() is None
    write_state(state, pid=pid, start_time=local.process_start_time(1) or 1)
    assert local.stop() is False and not state.exists()


def test_a_garbled_state_file_is_not_running(state):
    state.write_text("{not json")
    assert local.status() is None and local.stop() is False


def test_a_lease_whose_process_is_gone_does_not_keep_the_server_up(state):
    leases = state.parent / "leases"
    leases.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    (leases / "dead.json").write_text(json.dumps({"pid": gone.pid, "start_time": 12345}))
    (leases / "garbled.json").write_text("{")
    assert local.live_leases() == 0 and list(leases.iterdir()) == []


def test_a_busy_machine_gets_one_thread_and_one_slot():
    # issue 37.1: beside 8 busy processes on 2 CPUs, two llama.cpp threads gave 1.2 tokens/s
    # and one thread 13.8 (the threads wait for each other at every step)
    assert local.capacity(busy=0.0, cpus=2) == (2, 4)
    assert local.capacity(busy=0.0, cpus=16) == (2, 4)
    assert local.capacity(busy=1.0, cpus=2) == (1, 1)
    assert local.capacity(busy=15.0, cpus=2) == (1, 1)
    cpus = len(os.sched_getaffinity(0))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * cpus)]
    try:
        assert local.busy_cpus() >= cpus  # counted at once, before the load average catches up
        assert local.capacity() == (1, 1)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_the_providers_table_names_every_embedded_model_and_its_developer():
    # io's export reads the developer of an embedded model's rows from jevalkit.providers
    # (plain data: the analysis wing never loads jevalkit.local); the two tables agree
    from jevalkit.local import LOCAL_MODELS
    from jevalkit.providers import EMBEDDED_MODELS

    assert {m.served_as: m.developer for m in LOCAL_MODELS.values()} == EMBEDDED_MODELS
