"""Shared fixtures: paths to the bundled data and the reference material."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jevalkit._paths import data_dir

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def probes_copy(tmp_path: Path) -> Path:
    """A private copy of data/probes that a test may tamper with."""
    dest = tmp_path / "probes"
    shutil.copytree(data_dir() / "probes", dest)
    return dest
