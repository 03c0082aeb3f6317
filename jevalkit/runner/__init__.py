"""The runner: executes jobs (probe requests, judgments) against any OpenAI-compatible endpoint
and keeps every answer in append-only, resumable results.

Probes and judges plan :class:`Job` objects; :func:`execute` is the one execution path for both.

Example:
    >>> from jevalkit.runner import COLUMNS
    >>> COLUMNS[:4]
    ['run_id', 'kind', 'probe', 'version']
"""

from ._adaptive import ADAPTIVE_COLUMNS, AdaptiveRepeats, best_half_width, check_reachable
from ._columns import COLUMNS, KEY_COLUMNS, ResultRow, finite, json_ready, params_hash, row_key
from ._drift import describe_drift, model_drift
from ._dry_run import PLAN_COLUMNS, plan
from ._execute import execute, now
from ._job import JOB_FIELDS, Job, Send
from ._options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    RUN_OPTIONS,
    Option,
    RunOptions,
    RunSettings,
    repeats_value,
)
from ._plan import (
    ProbeJob,
    check_repeats,
    constrained_format,
    default_results_path,
    effective_parameters,
    plan_jobs,
    score_fields,
)
from ._rounds import case_repeats, run_adaptive
from ._run import arun, check_generation, run
from ._store import (
    DTYPES,
    ResultsWriter,
    check_results_path,
    iter_rows,
    latest_rows,
    locked,
    read_results,
    repair_torn_tail,
    results_frame,
    validate_row,
    write_rows,
)
from ._target import Target, endpoint_identity, open_target, row_endpoint

__all__ = [
    "ADAPTIVE_COLUMNS",
    "COLUMNS",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "DTYPES",
    "JOB_FIELDS",
    "KEY_COLUMNS",
    "PLAN_COLUMNS",
    "RUN_OPTIONS",
    "AdaptiveRepeats",
    "Job",
    "Option",
    "ProbeJob",
    "ResultRow",
    "ResultsWriter",
    "RunOptions",
    "RunSettings",
    "Send",
    "Target",
    "arun",
    "best_half_width",
    "case_repeats",
    "check_generation",
    "check_reachable",
    "check_repeats",
    "check_results_path",
    "constrained_format",
    "default_results_path",
    "describe_drift",
    "effective_parameters",
    "endpoint_identity",
    "execute",
    "finite",
    "iter_rows",
    "json_ready",
    "latest_rows",
    "locked",
    "model_drift",
    "now",
    "open_target",
    "params_hash",
    "plan",
    "plan_jobs",
    "read_results",
    "repair_torn_tail",
    "repeats_value",
    "results_frame",
    "row_endpoint",
    "row_key",
    "run",
    "run_adaptive",
    "score_fields",
    "validate_row",
    "write_rows",
]
