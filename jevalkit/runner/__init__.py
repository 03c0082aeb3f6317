"""The runner: executes jobs (probe requests, judgments) against any OpenAI-compatible endpoint
and keeps every answer in append-only, resumable results.

Probes and judges plan :class:`Job` objects; :func:`execute` is the one execution path for both.
Everything that decides what to send next from the answers so far is a design
(:class:`jevalkit.results.Design`); :func:`run_design` is the one loop that runs any of them.
A run returns a :class:`RunResult`: its rows and the facts of the run (why it stopped, a
design's outcome), which every statistic takes as rows.

The results file it writes is the results layer's (:mod:`jevalkit.results`).

Example:
    >>> from jevalkit.runner import RUN_OPTIONS
    >>> RUN_OPTIONS["concurrency"].default
    8
"""

from ..results import shard_of
from ._arms import results_path_for
from ._dask import DaskExecutor, dask_shards
from ._design_run import Source, candidates_of, run_design
from ._drift import model_drift
from ._dry_run import PLAN_COLUMNS, plan
from ._execute import Executor, execute
from ._executors import open_executor
from ._job import JOB_FIELDS, Job, Send
from ._judge import ajudge, judge, judge_models
from ._judge_ask import judge_case, judge_request
from ._judge_jobs import (
    JudgeJob,
    PairwiseJob,
    ToolCallJob,
    plan_judge_jobs,
    plan_pairwise_jobs,
)
from ._options import RUN_OPTIONS, Option, ProbeOptions, RunOptions, RunSettings, option
from ._plan import ProbeChoices, default_results_path, jobs_of, probes_of
from ._run import arun, run
from ._run_result import RunResult
from ._shards import ShardExecutor, guided_shards

__all__ = [
    "JOB_FIELDS",
    "PLAN_COLUMNS",
    "RUN_OPTIONS",
    "DaskExecutor",
    "Executor",
    "Job",
    "JudgeJob",
    "Option",
    "PairwiseJob",
    "ProbeChoices",
    "ProbeOptions",
    "RunOptions",
    "RunResult",
    "RunSettings",
    "Send",
    "ShardExecutor",
    "Source",
    "ToolCallJob",
    "ajudge",
    "arun",
    "candidates_of",
    "dask_shards",
    "default_results_path",
    "execute",
    "guided_shards",
    "jobs_of",
    "judge",
    "judge_case",
    "judge_models",
    "judge_request",
    "model_drift",
    "open_executor",
    "option",
    "plan",
    "plan_judge_jobs",
    "plan_pairwise_jobs",
    "probes_of",
    "results_path_for",
    "run",
    "run_design",
    "shard_of",
]
