"""The runner: executes jobs (probe requests, judgments) against any OpenAI-compatible endpoint
and keeps every answer in append-only, resumable results.

Probes and judges plan :class:`Job` objects; :func:`execute` is the one execution path for both.
A run returns a :class:`RunResult`: its rows and the facts of the run (why it stopped, the
adaptive repeats' interval, an active plan's estimate), which every statistic takes as rows.

The results file it writes is the results layer's (:mod:`jevalkit.results`).

Example:
    >>> from jevalkit.runner import RUN_OPTIONS
    >>> RUN_OPTIONS["concurrency"].default
    8
"""

from ._active_cases import ACTIVE_COLUMNS
from ._adaptive import ADAPTIVE_COLUMNS, AdaptiveRepeats
from ._dask import DaskExecutor, dask_shards
from ._drift import model_drift
from ._dry_run import PLAN_COLUMNS, plan
from ._execute import Executor, execute
from ._executors import open_executor
from ._job import JOB_FIELDS, Job, Send
from ._options import RUN_OPTIONS, Option, ProbeOptions, RunOptions, RunSettings, option
from ._plan import ProbeChoices, default_results_path, jobs_of, probes_of
from ._rounds import run_adaptive
from ._run import arun, run
from ._run_result import ActiveRun, RunResult
from ._shards import ShardExecutor, guided_shards, shard_of

__all__ = [
    "ACTIVE_COLUMNS",
    "ADAPTIVE_COLUMNS",
    "JOB_FIELDS",
    "PLAN_COLUMNS",
    "RUN_OPTIONS",
    "ActiveRun",
    "AdaptiveRepeats",
    "DaskExecutor",
    "Executor",
    "Job",
    "Option",
    "ProbeChoices",
    "ProbeOptions",
    "RunOptions",
    "RunResult",
    "RunSettings",
    "Send",
    "ShardExecutor",
    "arun",
    "dask_shards",
    "default_results_path",
    "execute",
    "guided_shards",
    "jobs_of",
    "model_drift",
    "open_executor",
    "option",
    "plan",
    "probes_of",
    "run",
    "run_adaptive",
    "shard_of",
]
