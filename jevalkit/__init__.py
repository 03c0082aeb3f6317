"""jevalkit: evaluate language-model outputs with versioned probes, a resumable runner, and
metrics that always carry n and a confidence interval.

The top-level names and subpackages load on first use, so a small tool (building the embedded
model's server, ``python -m jevalkit.local``) needs none of the scientific stack.

Example:
    >>> import jevalkit
    >>> jevalkit.load_probe("schema-ten-records@2").score("[]").passed
    False
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import (
    ClientError,
    JevalkitError,
    LocalModelError,
    ProbeError,
    ResultsError,
    ScoringError,
    StatsError,
)

if TYPE_CHECKING:
    from .metrics import choose_design
    from .probes import Probe, check_probes, list_probes, load_probe
    from .results import COLUMNS, read_results
    from .runner import arun, judge, plan, run
    from .scorers import Score

_LAZY = {
    "Probe": "probes",
    "check_probes": "probes",
    "list_probes": "probes",
    "load_probe": "probes",
    "COLUMNS": "results",
    "arun": "runner",
    "choose_design": "metrics",
    "judge": "runner",
    "plan": "runner",
    "read_results": "results",
    "run": "runner",
    "Score": "scorers",
}

__all__ = [
    "COLUMNS",
    "ClientError",
    "JevalkitError",
    "LocalModelError",
    "Probe",
    "ProbeError",
    "ResultsError",
    "Score",
    "ScoringError",
    "StatsError",
    "__version__",
    "arun",
    "check_probes",
    "choose_design",
    "judge",
    "list_probes",
    "load_probe",
    "plan",
    "read_results",
    "run",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    else:
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            raise AttributeError(f"module 'jevalkit' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
