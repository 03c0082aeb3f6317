"""Shared fixtures: paths to the bundled data and the reference material."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jevalkit._paths import data_dir
from jevalkit.client import KEY_VARIABLES

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def probes_copy(tmp_path: Path) -> Path:
    """A private copy of data/probes that a test may tamper with."""
    dest = tmp_path / "probes"
    shutil.copytree(data_dir() / "probes", dest)
    return dest


@pytest.fixture
def openai_server():
    """A fresh loopback OpenAI-compatible server with fault injection."""
    from openai_server import OpenAIServer

    with OpenAIServer() as server:
        yield server


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """No test reads the developer's keys, base URL or cache."""
    for name in (*KEY_VARIABLES, "JEVALKIT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JEVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def local_server(tmp_path_factory):
    """The embedded llama.cpp server, started once per session on a free port. Tests that use the
    model by name (``"local"``) find it through JEVALKIT_STATE_DIR and leave it running."""
    import os
    import socket

    from jevalkit import local

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = tmp_path_factory.mktemp("local-state")
    old = os.environ.get("JEVALKIT_STATE_DIR")
    os.environ["JEVALKIT_STATE_DIR"] = str(state)
    server = local.serve(port=port, slots=4)  # threads follow the load (local.capacity)
    yield server
    local.stop()
    if old is None:
        os.environ.pop("JEVALKIT_STATE_DIR", None)
    else:
        os.environ["JEVALKIT_STATE_DIR"] = old
