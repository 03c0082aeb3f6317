"""jevalkit: evaluate language-model outputs with versioned probes, a resumable runner, and
metrics that always carry n and a confidence interval.

Example:
    >>> import jevalkit
    >>> jevalkit.load_probe("schema-ten-records@2").score("[]").passed
    False
"""

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
from .probes import Probe, check_probes, list_probes, load_probe
from .runner import COLUMNS, arun, plan, read_results, run
from .scorers import Score

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
    "list_probes",
    "load_probe",
    "plan",
    "read_results",
    "run",
]
