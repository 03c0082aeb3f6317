"""Where jevalkit finds its bundled files: every data location is defined here.

In a checkout they are the top-level ``data/`` and ``notebooks/`` folders; an installed wheel
carries copies inside the package (``jevalkit/_bundled_data``, ``jevalkit/_bundled_notebooks``).
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _bundled(name: str, checkout_name: str, override: str) -> Path:
    chosen = os.environ.get(override)
    if chosen:
        return Path(chosen)
    checkout = _PACKAGE_DIR.parent / checkout_name
    if checkout.is_dir() and (_PACKAGE_DIR.parent / "pyproject.toml").is_file():
        return checkout
    return _PACKAGE_DIR / name


def data_dir() -> Path:
    """The data folder: ``$JEVALKIT_DATA_DIR``, the checkout's ``data/``, or the wheel's copy.

    Example:
        >>> (data_dir() / "probes").is_dir()
        True
    """
    return _bundled("_bundled_data", "data", "JEVALKIT_DATA_DIR")


def notebooks_dir() -> Path:
    """The notebooks folder: ``$JEVALKIT_NOTEBOOKS_DIR``, the checkout's ``notebooks/``, or the
    wheel's copy.

    Example:
        >>> (notebooks_dir() / "probe_report.ipynb").is_file()
        True
    """
    return _bundled("_bundled_notebooks", "notebooks", "JEVALKIT_NOTEBOOKS_DIR")


def probes_dir() -> Path:
    """The folder holding ``<probe-id>/v<N>.yaml`` files and ``probes.lock``.

    Example:
        >>> probes_dir().name
        'probes'
    """
    return data_dir() / "probes"


def judges_dir() -> Path:
    """The folder holding ``<evaluator>/v<N>.yaml`` judge prompt files and ``judges.lock``.

    Example:
        >>> judges_dir().name
        'judges'
    """
    return data_dir() / "judges"


def cases_dir() -> Path:
    """The folder of bundled case sets (``<evaluator>.jsonl``).

    Example:
        >>> (cases_dir() / "faithfulness.jsonl").is_file()
        True
    """
    return data_dir() / "cases"


def runs_dir() -> Path:
    """The folder of bundled real runs of the embedded model.

    Example:
        >>> (runs_dir() / "README.md").is_file()
        True
    """
    return data_dir() / "runs"
