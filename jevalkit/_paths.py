"""Where jevalkit finds its bundled data (probes, judge prompts, case sets, example runs)."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir() -> Path:
    """Return the data folder: ``$JEVALKIT_DATA_DIR``, the checkout's ``data/``, or the wheel's copy.

    Example:
        >>> (data_dir() / "probes").is_dir()
        True
    """
    override = os.environ.get("JEVALKIT_DATA_DIR")
    if override:
        return Path(override)
    checkout = _PACKAGE_DIR.parent / "data"
    if checkout.is_dir():
        return checkout
    return _PACKAGE_DIR / "_bundled_data"


def probes_dir() -> Path:
    """Return the folder holding ``<probe-id>/v<N>.yaml`` files and ``probes.lock``.

    Example:
        >>> probes_dir().name
        'probes'
    """
    return data_dir() / "probes"
