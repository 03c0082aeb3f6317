"""The jevalkit exception tree.

Every error a user can cause is a :class:`JevalkitError` whose message is one line naming the file,
field or value at fault and how to fix it. The CLI prints that line and exits 2; library callers
catch the subclass they care about.

::

    JevalkitError
    ├── ProbeError          a probe file is malformed, tampered with, or cannot be found
    ├── ScoringError        a scorer was given something it cannot score (not the output: the spec)
    ├── ClientError         an endpoint could not be reached or answered with something unusable
    ├── ResultsError        a results file cannot be read or resumed
    ├── StatsError          a statistic cannot be computed from the data given (n too small, NaN, ...)
    └── LocalModelError     the embedded llama.cpp server cannot be installed, started or reached

Example:
    >>> try:
    ...     raise ProbeError("data/probes/x/v1.yaml: version: must be an integer")
    ... except JevalkitError as exc:
    ...     print(exc)
    data/probes/x/v1.yaml: version: must be an integer
"""

from __future__ import annotations

__all__ = [
    "ClientError",
    "JevalkitError",
    "LocalModelError",
    "ProbeError",
    "ResultsError",
    "ScoringError",
    "StatsError",
]


class JevalkitError(Exception):
    """Base class of every error jevalkit raises on purpose."""


class ProbeError(JevalkitError):
    """A probe is missing, malformed, or no longer matches its locked hash."""


class ScoringError(JevalkitError):
    """A scorer specification is unusable (for example a schema with a remote ``$ref``)."""


class ClientError(JevalkitError):
    """An endpoint could not be used (bad URL, missing key for a remote host, ...)."""


class ResultsError(JevalkitError):
    """A results file is unreadable or inconsistent."""


class StatsError(JevalkitError, ValueError):
    """The data cannot support the statistic asked for."""


class LocalModelError(JevalkitError):
    """The embedded llama.cpp model cannot be installed, started or reached."""
