"""The jevalkit exception tree: every exception jevalkit raises on purpose is defined here.

Every error a user can cause is a :class:`JevalkitError` whose message is one line naming the file,
field or value at fault and how to fix it. The CLI prints that line and exits 2; library callers
catch the subclass they care about.

::

    JevalkitError
    ├── UsageError          an argument is out of range or contradicts another (also a ValueError)
    ├── ProbeError          a probe file is malformed, tampered with, or cannot be found
    ├── JudgeFileError      a judge prompt file is malformed, tampered with, or cannot be found
    ├── CaseFileError       a case file is unreadable or a case in it is invalid
    ├── ScoringError        a scorer was given a spec it cannot use (not the output: the spec),
    │                       or no scorer has the name asked for
    ├── StrictJSONError     a text is not strict RFC 8259 JSON (``reason`` says why; also a
    │                       ValueError); scorers turn it into a failing score, never raise it
    ├── ClientError         an endpoint cannot be used (bad URL, missing or misplaced key, ...)
    ├── ResultsError        a results file cannot be read, written, resumed or shared
    ├── ImportFormatError   another tool's log or a table cannot be read as evaluation results
    ├── StatsError          the data cannot support the statistic asked for (also a ValueError)
    ├── JudgeError          a judge cannot give a trustworthy distribution for one case
    ├── LocalModelError     the embedded llama.cpp server cannot be installed, started or reached
    ├── BudgetReached       a run stopped at its budget (rows so far kept; re-run to resume)
    ├── ClusterError        a Dask cluster could not run a run's tasks (rows so far kept)
    └── ReportError         a notebook report failed (the message names the cell)
        └── BatchError      a batch file is unusable

Example:
    >>> try:
    ...     raise ProbeError("data/probes/x/v1.yaml: version: must be an integer")
    ... except JevalkitError as exc:
    ...     print(exc)
    data/probes/x/v1.yaml: version: must be an integer
"""

from __future__ import annotations

__all__ = [
    "BatchError",
    "BudgetReached",
    "CaseFileError",
    "ClientError",
    "ClusterError",
    "ImportFormatError",
    "JevalkitError",
    "JudgeError",
    "JudgeFileError",
    "LocalModelError",
    "ProbeError",
    "ReportError",
    "ResultsError",
    "ScoringError",
    "StatsError",
    "StrictJSONError",
    "UsageError",
]


class JevalkitError(Exception):
    """Base class of every error jevalkit raises on purpose."""


class UsageError(JevalkitError, ValueError):
    """An argument is out of range (``repeats=0``, ``timeout=-1``) or contradicts another."""


class ProbeError(JevalkitError):
    """A probe is missing, malformed, or no longer matches its locked hash."""


class JudgeFileError(JevalkitError):
    """A judge prompt file is missing, malformed, or no longer matches its locked hash."""


class CaseFileError(JevalkitError):
    """A case file cannot be read, or one of its cases is invalid (the line is named)."""


class ScoringError(JevalkitError):
    """A scorer specification is unusable (for example a schema with a remote ``$ref``)."""


class StrictJSONError(JevalkitError, ValueError):
    """A text is not strict JSON; ``reason`` says why in one line.

    Example:
        >>> StrictJSONError("$: duplicate object key 'a'").reason
        "$: duplicate object key 'a'"
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ClientError(JevalkitError):
    """An endpoint could not be used (bad URL, missing key for a remote host, ...)."""


class ResultsError(JevalkitError):
    """A results file is unreadable, inconsistent, or in use by another run."""


class BudgetReached(JevalkitError):
    """A run stopped at its budget; rows written so far are kept and re-running resumes."""


class ClusterError(JevalkitError):
    """A Dask cluster could not run a run's tasks (a task killed every worker that ran it); the
    rows written so far are kept and running the same command again resumes."""


class ImportFormatError(JevalkitError):
    """A file from another evaluation tool, or a table, cannot be read as results."""


class StatsError(JevalkitError, ValueError):
    """The data cannot support the statistic asked for."""


class JudgeError(JevalkitError):
    """A judge cannot give a trustworthy distribution (no logprobs, coverage too low, ...).

    ``error`` holds the typed request error (``{type, message, status}``) when a request failed.
    """

    def __init__(self, message: str, *, error: dict | None = None) -> None:
        super().__init__(message)
        self.error = error


class LocalModelError(JevalkitError):
    """The embedded llama.cpp model cannot be installed, started or reached."""


class ReportError(JevalkitError):
    """A notebook failed; the message names the cell and the exception, the partial notebook is
    kept as ``<name>.partial.ipynb`` (an earlier run's ``<name>.ipynb`` and ``.html`` are not
    replaced). ``cell`` is the failing cell's index in the notebook (None when no cell failed:
    the report could not start), ``notebook`` the partial notebook's path.

    Example:
        >>> ReportError("x.ipynb: cell 3 raised ValueError: bad", cell=4, notebook="out/x.ipynb").cell
        4
    """

    def __init__(self, message: str, *, cell: int | None = None, notebook: object = None) -> None:
        super().__init__(message)
        self.cell = cell
        self.notebook = notebook


class BatchError(ReportError):
    """A batch file is unusable."""
