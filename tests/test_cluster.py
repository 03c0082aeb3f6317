"""Dask addresses a run cannot use end in one line, never a traceback or a hang (issue 37.8):
``tls://`` without certificates, ``ucx://`` without UCX, a live port that is not a scheduler (an
HTTP server, a silent listener, a Dask worker), nothing listening."""

from __future__ import annotations

import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from jevalkit.cli import main
from jevalkit.cluster import dask_client


@pytest.fixture
def silent_port():
    """A port that accepts connections and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    listener.close()
    for conn in held:
        conn.close()


class Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def refused(capsys, tmp_path, address: str) -> str:
    out = tmp_path / "r.jsonl"
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    code = main([*argv, "--out", str(out), "--no-cache", "--scheduler", address])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and err.startswith("jevalkit: error: ")
    assert not out.exists() and not out.with_name("r.jsonl.parts").exists()
    return err


def test_tls_without_certificates_is_refused_in_one_line(capsys, tmp_path):
    err = refused(capsys, tmp_path, "tls://127.0.0.1:8786")
    assert "tls:// needs Dask's TLS configuration" in err and "Security" in err


def test_ucx_without_ucx_is_refused_in_one_line(capsys, tmp_path):
    err = refused(capsys, tmp_path, "ucx://127.0.0.1:8786")
    assert "ucx:// needs UCX support" in err and "tcp://" in err


def test_a_live_port_that_never_answers_is_refused_instead_of_hanging(
    capsys, tmp_path, silent_port
):
    err = refused(capsys, tmp_path, f"tcp://127.0.0.1:{silent_port}")
    assert re.search(r"sent no Dask handshake within \d+ s: it is not a Dask scheduler", err)


def test_an_http_server_is_not_a_scheduler(capsys, tmp_path, http_port):
    err = refused(capsys, tmp_path, f"tcp://127.0.0.1:{http_port}")
    assert f"127.0.0.1:{http_port}" in err and "Dask" in err


def test_a_workers_address_is_not_a_schedulers(capsys, tmp_path):
    with dask_client(workers=1) as client:
        worker = next(iter(client.scheduler_info()["workers"]))
        err = refused(capsys, tmp_path, worker)
    assert "a worker's address is not one" in err
