"""The runner: executes jobs (probe requests, judgments) against any OpenAI-compatible endpoint
and keeps every answer in append-only, resumable results.

Probes and judges plan :class:`Job` objects; :func:`execute` is the one execution path for both.

Example:
    >>> from jevalkit.runner import COLUMNS
    >>> COLUMNS[:4]
    ['run_id', 'kind', 'probe', 'version']
"""

from ._adaptive import ADAPTIVE_COLUMNS, AdaptiveRepeats
from ._columns import COLUMNS, KEY_COLUMNS, ResultRow, json_ready, params_hash, row_key
from ._distributed import check_cluster_options, dask_client, dask_shards, scaled_execute
from ._drift import model_drift
from ._dry_run import PLAN_COLUMNS, plan
from ._execute import execute
from ._job import JOB_FIELDS, Job, Send
from ._merge import MERGE_COLUMNS, PartsReader, merge_parts, merge_rows
from ._options import RUN_OPTIONS, Option, RunOptions, RunSettings
from ._plan import default_results_path, plan_jobs
from ._rounds import run_adaptive
from ._run import arun, run
from ._shards import guided_shards, part_files, parts_dir, shard_of
from ._store import (
    DTYPES,
    check_results_path,
    iter_rows,
    locked,
    read_results,
    repair_torn_tail,
    system_of,
    validate_row,
    write_rows,
)

__all__ = [
    "ADAPTIVE_COLUMNS",
    "COLUMNS",
    "DTYPES",
    "JOB_FIELDS",
    "KEY_COLUMNS",
    "MERGE_COLUMNS",
    "PLAN_COLUMNS",
    "RUN_OPTIONS",
    "AdaptiveRepeats",
    "Job",
    "Option",
    "PartsReader",
    "ResultRow",
    "RunOptions",
    "RunSettings",
    "Send",
    "arun",
    "check_cluster_options",
    "check_results_path",
    "dask_client",
    "dask_shards",
    "default_results_path",
    "execute",
    "guided_shards",
    "iter_rows",
    "json_ready",
    "locked",
    "merge_parts",
    "merge_rows",
    "model_drift",
    "params_hash",
    "part_files",
    "parts_dir",
    "plan",
    "plan_jobs",
    "read_results",
    "repair_torn_tail",
    "row_key",
    "run",
    "run_adaptive",
    "scaled_execute",
    "shard_of",
    "system_of",
    "validate_row",
    "write_rows",
]
