"""The embedded model, for real: llama.cpp serving Gemma 3 270M on 127.0.0.1 (marker local_model)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from jevalkit import local
from jevalkit.client import CHAT, ChatClient, Endpoint, Request, RetryPolicy
from jevalkit.errors import LocalModelError
from jevalkit.results import read_results
from jevalkit.runner import run
from jevalkit.stats import AdaptiveRepeats

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="session")
def server(local_server):
    return local_server


def chat(server, **body):
    body = {
        "model": server.model_name,
        "messages": [{"role": "user", "content": "Count to five."}],
        **body,
    }
    r = httpx.post(
        server.base_url + "/chat/completions", json=body, timeout=120, headers=server.headers()
    )
    r.raise_for_status()
    return r.json()


def listening_addresses(port: int) -> set[str]:
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                local_addr, state = line.split()[1], line.split()[3]
                addr, hex_port = local_addr.split(":")
                if int(hex_port, 16) == port and state == "0A":  # LISTEN
                    found.add(addr)
    return found


def test_binds_loopback_only(server):
    assert listening_addresses(server.port) == {"0100007F"}  # 127.0.0.1, nothing else


def test_status_reports_the_running_server(server):
    assert local.status() == server
    out = subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", "local", "status"],
        capture_output=True,
        env=os.environ.copy(),
        timeout=60,
    )
    assert out.returncode == 0 and server.base_url.encode() in out.stdout
    # started with a random key: it says so, and how another tool gets a key it can use
    assert b"random API key" in out.stdout and local.KEY_VARIABLE.encode() in out.stdout


def test_two_concurrent_requests_both_succeed(server):
    async def both():
        async with httpx.AsyncClient(timeout=120, headers=server.headers()) as client:
            body = {
                "model": server.model_name,
                "max_tokens": 8,
                "temperature": 0,
                "messages": [{"role": "user", "content": "Hello"}],
            }
            return await asyncio.gather(
                *(client.post(server.base_url + "/chat/completions", json=body) for _ in range(2))
            )

    responses = asyncio.run(both())
    assert [r.status_code for r in responses] == [200, 200]
    assert all(r.json()["choices"][0]["message"]["content"] for r in responses)


def test_logprobs_come_back_with_top_alternatives(server):
    data = chat(server, max_tokens=1, temperature=0, logprobs=True, top_logprobs=5)
    content = data["choices"][0]["logprobs"]["content"]
    assert len(content) == 1 and len(content[0]["top_logprobs"]) == 5
    assert all(alt["logprob"] <= 0 for alt in content[0]["top_logprobs"])


def test_same_seed_at_temperature_one_repeats_itself(server):
    # without the prompt cache, as the runner sends seeded requests (a cold and a warm prompt
    # gave two texts for one seed)
    def text():
        body = {"max_tokens": 16, "temperature": 1.0, "seed": 1234, "cache_prompt": False}
        return chat(server, **body)["choices"][0]["message"]["content"]

    a, b = text(), text()
    assert a == b and a


def test_max_tokens_is_honoured(server):
    data = chat(server, max_tokens=5, temperature=0)
    assert data["usage"]["completion_tokens"] <= 5


def test_runner_rows_carry_the_model_name_and_file_hash(server, tmp_path):
    df = run(
        "schema-ten-records",
        "local",
        repeats=2,
        max_tokens=12,
        temperature=1.0,
        seed=3,
        out=tmp_path / "r.jsonl",
        progress=False,
    ).rows
    assert len(df) == 2 and df["error"].isna().all()
    assert set(df["model"]) == {"local"}
    assert set(df["model_resolved"]) == {local.MODEL_NAME}
    assert set(df["model_sha256"]) == {server.model_sha256}
    assert set(df["base_url"]) == {server.base_url}
    assert local.status() == server  # it was running before, so it is left running


def test_a_taken_port_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(
            LocalModelError, match=r"port \d+ on 127.0.0.1 is taken; pass another with --port"
        ):
            local.serve(port=s.getsockname()[1])


def test_a_missing_server_names_the_install_command(tmp_path, monkeypatch, capsys):
    from jevalkit.cli import main

    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path))  # no server known to be running
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "prefix", str(tmp_path))  # where `local build` would install it
    assert main(["local", "serve"]) == 2
    err = capsys.readouterr().err
    assert "llama-server is not installed" in err and "jevalkit local build" in err
    monkeypatch.setenv("JEVALKIT_LLAMA_SERVER", str(tmp_path / "nope"))
    assert main(["local", "serve"]) == 2
    assert "JEVALKIT_LLAMA_SERVER=" in capsys.readouterr().err


def metric(server, name: str) -> float:
    text = httpx.get(
        f"http://127.0.0.1:{server.port}/metrics", timeout=10, headers=server.headers()
    ).text
    return float(
        next(line.split()[-1] for line in text.splitlines() if line.startswith(name + " "))
    )


def test_a_request_given_up_on_is_cancelled_on_the_server(server):
    # 6,000 tokens take ~100 s; the client gives up once the first tokens have arrived
    wait_until_idle(server)  # an earlier test's request still decoding would count below

    async def give_up() -> int:
        client = ChatClient(
            Endpoint(server.base_url, server.api_key),
            model=server.model_name,
            paced=True,
            retry=RetryPolicy(max_retries=0),
        )
        body = {
            "messages": [{"role": "user", "content": "Count."}],
            "max_tokens": 6000,
            "temperature": 1.0,
            "ignore_eos": True,
        }
        async with client:
            task = asyncio.ensure_future(client.send(Request(CHAT, body)))
            while client.streamed_tokens < 5 and not task.done():  # streamed: tokens arrive
                await asyncio.sleep(0.05)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return client.streamed_tokens

    assert asyncio.run(give_up()) >= 5
    # The server notices a closed connection between two decode steps, so under load it may
    # decode some tokens after the client left (issue 24: a fixed sleep then a counter read
    # raced that). Count decode steps, not seconds: a request not cancelled decodes its 6,000
    # tokens; a cancelled one stops well short of half of them.
    gave_up = metric(server, "llamacpp:n_decode_total")
    while metric(server, "llamacpp:requests_processing"):
        decoded = metric(server, "llamacpp:n_decode_total") - gave_up
        assert decoded < 3000, f"still generating: {decoded} decode steps after the client left"
        time.sleep(0.2)
    before = metric(server, "llamacpp:n_decode_total")
    time.sleep(1.0)
    assert metric(server, "llamacpp:n_decode_total") == before  # and nothing queued behind


def test_a_run_on_the_embedded_model_shows_its_tokens_arriving(server, tmp_path, capsys):
    # issue 37.1: a 400-token answer at 1 token/s moved no progress bar for minutes
    df = run(
        "schema-ten-records",
        "local",
        out=tmp_path / "t.jsonl",
        cache=False,
        max_tokens=24,
        temperature=1.0,
        extra_params={"ignore_eos": True},
    ).rows
    assert df["error"].isna().all() and (df["completion_tokens"] == 24).all()
    assert "tokens=" in capsys.readouterr().err


def wait_until_idle(server) -> None:
    """Until the server generates nothing: another sequence in the batch changes the numerics,
    and so a seeded text."""
    while metric(server, "llamacpp:requests_processing"):
        time.sleep(0.2)


@contextlib.contextmanager
def default_port_taken():
    """Hold the embedded model's default port, as another user's server on the machine would
    (when something else holds it already, it is taken anyway)."""
    with socket.socket() as s:
        # as a server binds: a connection of an earlier test left in TIME_WAIT does not hold it
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        with contextlib.suppress(OSError):
            s.bind(("127.0.0.1", local.DEFAULT_PORT))
            s.listen()
        assert not local.port_is_free(local.DEFAULT_PORT)
        yield


def test_a_seeded_run_reproduces_its_text_on_a_fresh_server(tmp_path, monkeypatch):
    # a server of its own, so the first run's prompts are not cached yet: the prompt cache
    # changed a seeded text between a cold and a warm prompt (the runner now turns it off).
    # Issue 37.13: with the default port taken by another server on the machine (the run then
    # starts its server on a free port)
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path / "state"))

    def sample(out):
        return (
            run(
                "schema-ten-records",
                "local",
                out=tmp_path / out,
                progress=False,
                cache=False,
                max_tokens=16,
                temperature=1.0,
                seed=5,
                repeats=2,
            )
            .rows["output"]
            .tolist()
        )

    try:
        with default_port_taken():
            assert sample("a.jsonl") == sample("b.jsonl")
    finally:
        local.stop()


def test_status_says_how_to_connect_and_that_way_works(tmp_path, monkeypatch):
    # issue 37.3: `local serve` started behind a random key no command showed: another tool and
    # `jevalkit run --base-url` got 401
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path / "state"))
    with default_port_taken():
        for serve_args, env in (([], {local.KEY_VARIABLE: "a-key-of-my-own"}), (["--no-key"], {})):
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            try:
                cli = [sys.executable, "-m", "jevalkit.cli", "local"]
                subprocess.run([*cli, "serve", *serve_args], check=True, timeout=300)
                status = subprocess.run(
                    [*cli, "status"], capture_output=True, text=True, timeout=60, check=True
                ).stdout
                example = next(x for x in status.splitlines() if "e.g. jevalkit run" in x)
                argv = example.split("e.g. jevalkit ")[1].replace("PROBE", "schema-ten-records")
                out = tmp_path / f"r{len(serve_args)}.jsonl"
                given = [*argv.split(), "--max-tokens", "4", "--out", str(out)]
                done = subprocess.run(
                    [sys.executable, "-m", "jevalkit.cli", *given],
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert done.returncode == 0, done.stderr
                assert read_results(out)["error"].isna().all()
            finally:
                local.stop()
                for name in env:
                    monkeypatch.delenv(name)


def test_a_seed_reproduces_its_text_and_seeded_runs_go_one_at_a_time(server, tmp_path):
    wait_until_idle(server)

    def sample(out, repeats):
        return run(
            "schema-ten-records",
            "local",
            out=tmp_path / out,
            progress=False,
            cache=False,
            max_tokens=24,
            temperature=1.0,
            seed=11,
            repeats=repeats,
            concurrency=4,
        ).rows

    started = time.monotonic()
    first = sample("a.jsonl", 4)
    wall = time.monotonic() - started
    second = sample("b.jsonl", 4)
    assert first["output"].tolist() == second["output"].tolist()  # same seeds, same texts
    assert first["output"].nunique() > 1  # and the seeds differ per repeat
    # seeded jobs on the embedded model run one at a time (asked for concurrency 4): llama.cpp's
    # batching changes the numerics, so a seed alone and a seed batched with others can differ
    assert wall >= 0.95 * first["latency_s"].sum()


def busy_slot_steps(server) -> tuple[float, float]:
    """(decode steps, busy slots summed over them) since the server started."""
    steps = metric(server, "llamacpp:n_decode_total")
    return steps, steps * metric(server, "llamacpp:n_busy_slots_per_decode")


def test_slots_serve_unseeded_requests_in_parallel(server, tmp_path):
    # counted by the server, not timed: a busy machine slows every request alike, but only
    # requests in flight together share a decode step
    steps_before, busy_before = busy_slot_steps(server)
    df = run(
        "schema-ten-records",
        "local",
        out=tmp_path / "p.jsonl",
        progress=False,
        cache=False,
        max_tokens=48,
        temperature=1.0,
        extra_params={"ignore_eos": True},
        repeats=4,
        concurrency=4,
    ).rows
    assert df["error"].isna().all()
    steps_after, busy_after = busy_slot_steps(server)
    per_step = (busy_after - busy_before) / (steps_after - steps_before)
    assert per_step > 2  # one at a time would be 1.0; four together, close to 4


def test_adaptive_repeats_and_the_exact_dry_run_on_the_embedded_model(server, tmp_path):
    from jevalkit.runner import plan

    out = tmp_path / "r.jsonl"
    planned = plan("schema-ten-records", "local", repeats=1, max_tokens=12, out=out).iloc[0]
    assert planned["prompt_tokens_method"].startswith("exact")
    result = run(
        "schema-ten-records",
        "local",
        design=AdaptiveRepeats(target_half_width=0.25, max_repeats=30),
        max_tokens=12,
        temperature=1.0,
        seed=3,
        out=out,
        progress=False,
    )
    df, summary = result.rows, result.design.table().iloc[0]
    # 12 tokens never hold ten records: every repeat fails, so the interval narrows steadily
    assert summary["stop_reason"] == "target met" and summary["value"] == 0.0
    assert summary["half_width"] <= 0.25 and len(df) == summary["n"] < 30
    assert (df["prompt_tokens"] == planned["prompt_tokens"]).all()  # counted exactly
    assert (df["cost_usd"] == 0.0).all()  # the embedded model is free, and says so


def test_the_server_answers_only_jevalkit_not_any_web_page(server):
    # issue 24.9: a random API key kept in the 0600 state file; no /slots; no reflected Origin
    root = f"http://127.0.0.1:{server.port}"
    body = {"model": server.model_name, "messages": [{"role": "user", "content": "hi"}]}
    evil = {"Origin": "https://evil.example"}
    assert httpx.post(root + "/v1/chat/completions", json=body, headers=evil).status_code == 401
    assert httpx.get(root + "/slots", headers=server.headers()).status_code in (404, 501)
    preflight = httpx.options(root + "/v1/chat/completions", headers=evil)
    assert preflight.headers.get("access-control-allow-origin") != "https://evil.example"
    assert len(server.api_key) >= 24 and local.read_state() == server
    assert oct(local.state_file().stat().st_mode & 0o777) == "0o600"


def test_a_run_ending_never_stops_the_server_under_another(tmp_path, monkeypatch):
    # issue 24.4: run A starts the server, run B joins, A ends: B keeps its server; the last
    # one out stops it
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first = local.local_endpoint(port=port)
    a = first.__enter__()
    second = local.local_endpoint(port=port)
    try:
        b = second.__enter__()
        assert b == a and local.live_leases() == 2
        first.__exit__(None, None, None)
        assert local.status() == b and chat(b, max_tokens=4)["choices"]
    finally:
        second.__exit__(None, None, None)
    assert local.status() is None and local.live_leases() == 0
