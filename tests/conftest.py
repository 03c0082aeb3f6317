"""Shared fixtures: paths to the bundled data and the reference material."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jevalkit._paths import data_dir

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
    for name in ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "JEVALKIT_API_KEY", "JEVALKIT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JEVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
