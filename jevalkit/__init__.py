"""jevalkit: evaluate language-model outputs with versioned probes, a resumable runner, and
metrics that always carry n and a confidence interval.

Example:
    >>> import jevalkit
    >>> jevalkit.load_probe("schema-ten-records@2").score("[]").passed
    False
"""

from importlib.metadata import PackageNotFoundError, version

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
from .scorers import Score

try:
    __version__ = version("jevalkit")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
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
    "check_probes",
    "list_probes",
    "load_probe",
]
