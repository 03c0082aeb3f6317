"""The one execution path: run a list of jobs against a model into a results file.

Probes and judges plan jobs (:class:`~jevalkit.runner.Job`); :func:`execute` does everything
else, once, for both and for every way of running: the model and price checks, the endpoint, the
lock of the file it writes, the resume rule (:mod:`._resume`), sending what is pending, reading
the rows back, the drift warning and the budget's verdict. *Where* the pending jobs go is an
:class:`Executor`, a strategy over that one path: this class sends them in this process,
:class:`~jevalkit.runner.ShardExecutor` sends one shard of them into its part file (``--shard``),
and a Dask executor spreads them over a cluster's workers (each task sending its shard in its
own process, through this same path).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..costs import Budget
from ..errors import UsageError
from ..results import RunConfig, check_results_path, locked, read_results, results_frame
from ._drift import warn_of_drift
from ._job import Job
from ._options import RunSettings
from ._resume import Rows, resume_rows, rows_beside, rows_of
from ._run_result import RunResult
from ._send import RunContext, send_jobs
from ._target import check_key_variable, endpoint_identity


class Executor:
    """Where the pending jobs of :func:`execute` go: this class sends them in this process into
    the results file. A strategy overrides the steps that differ (the file it writes, the files
    it only reads, the jobs it takes, how it sends); :func:`execute` keeps everything else.

    Example:
        >>> Executor().store(Path("r.jsonl")), Executor().takes(("p", 1)), Executor().beside(Path("r.jsonl"))
        (PosixPath('r.jsonl'), True, [])
    """

    def check(self, model: str | None, settings: RunSettings) -> None:
        """Refuse, before anything starts, what this executor cannot run."""

    def store(self, path: Path) -> Path:
        """The file this executor appends to, and locks, for the results file ``path``."""
        return path

    def beside(self, path: Path) -> list[Path]:
        """Files whose rows count as done but that this executor never writes."""
        return []

    def takes(self, key: tuple) -> bool:
        """Whether the job of row key ``key`` is this executor's to send."""
        return True

    def describe(self, description: str) -> str:
        """The progress bar's label."""
        return description

    sharding = "none"  # how the run is split, as its parts' configuration records it
    shards = 0  # the shards the jobs hash into (``--shard i/N``: N); 0 when not split by hash
    sends_here = True  # this process sends the requests (with the keys in its environment)
    dashboard: str | None = None  # where the run can be watched (the run result's dashboard)

    def prepare(self, path: Path, store: Path, config: RunConfig | None) -> None:
        """Holding ``store``'s lock, before the resume rule reads it (``path``: the results
        file; ``config``: the run's configuration, as its parts record it, for an executor
        that splits the run: one whose ``sharding`` is not ``"none"``)."""

    async def send(self, pending: Sequence[Job], run: RunContext, *, done: int) -> Rows | None:
        """Send ``pending`` and write their rows into ``run.path``; return the rows of
        ``run.path`` by key when they are at hand (else None: they are read from the file). A
        budget reached is recorded in ``run.budget``."""
        await send_jobs(pending, run, done=done)
        return None

    def read(self, store: Path, rows: Rows | None) -> pd.DataFrame:
        """The rows of ``store`` after sending (``rows``: as :meth:`send` returned them)."""
        return read_results(store) if store.exists() else results_frame([])


class Unread(Executor):
    """Sends in this process and reads nothing back: for a caller that reads the file itself (a
    Dask task, whose part file the driver merges and reads)."""

    def read(self, store: Path, rows: Rows | None) -> pd.DataFrame:
        """An empty frame: the caller reads the rows."""
        return results_frame([])


async def execute(
    jobs: Sequence[Job],
    *,
    model: str | None,
    out: str | Path,
    settings: RunSettings | None = None,
    description: str = "requests",
    budget: Budget | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Execute ``jobs`` against ``model`` and return their rows (one per job) and the facts of
    the run (:class:`RunResult`).

    Rows already done are kept and their jobs skipped (resume); with ``settings.retry_errors``
    error rows are sent again and replaced. ``model`` None runs only deterministic jobs (nothing
    is sent). The label, endpoint and how requests are sent come from ``settings``
    (:class:`RunSettings`; ``settings.out`` is not used: ``out`` is the resolved path).
    ``executor`` says where the jobs go (default: this process; see :class:`Executor`). With a
    budget (``budget``, else one made from ``settings``) the run stops starting requests when it
    is reached: the rows of the jobs done are returned, the result's ``stopped`` says why, and
    re-running resumes.

    Raises:
        ResultsError: ``out`` is not a regular file, is locked by another run, was written for
            another endpoint or from other content, or the disk refused a write (rows written
            before are kept).
        UsageError: a setting is out of range, or the executor cannot run these jobs.
    """
    settings = settings or RunSettings()
    executor = executor or Executor()
    budget = budget if budget is not None else settings.new_budget()
    path = check_results_path(out, writing=True)
    asked = model or "deterministic"
    if model is None and any(job.needs_model for job in jobs):
        raise UsageError("these jobs ask a model: give model= (e.g. 'local')")
    executor.check(model, settings)
    price = settings.price(asked) if model is not None else None
    if budget.usd is not None:
        settings.require_price(asked)
    endpoint = endpoint_identity(model, settings.base_url, api_key_env=settings.api_key_env)
    if model is not None and executor.sends_here and any(job.needs_model for job in jobs):
        check_key_variable(settings.api_key_env)  # on Dask, each worker's task checks its own
    keys = [job.key(asked, settings.label) for job in jobs]
    store = check_results_path(executor.store(path), writing=True)
    config = None  # recorded beside the part files of a split run only
    if executor.sharding != "none":
        config = RunConfig.of(
            asked,
            endpoint,
            settings.label,
            executor.sharding,
            shards=executor.shards,
            jobs=(
                (j.probe, j.version, j.probe_hash, j.params_hash, k)
                for j, k in zip(jobs, keys, strict=True)
            ),
        )
    mine = [(job, key) for job, key in zip(jobs, keys, strict=True) if executor.takes(key)]
    mine_jobs, mine_keys = [job for job, _ in mine], [key for _, key in mine]
    beside = rows_beside(executor.beside(path), mine_keys, retry_errors=settings.retry_errors)

    def resume() -> Rows:
        return resume_rows(
            store,
            mine_jobs,
            mine_keys,
            endpoint,
            retry_errors=settings.retry_errors,
            beside=beside,
        )

    if not store.exists() and all(key in beside for key in mine_keys):
        resume()  # checks the rows it skips; nothing to send or write: no file is made
        results = results_frame([])
    else:
        with locked(store):
            executor.prepare(path, store, config)
            done = resume()
            pending = [job for job, key in mine if key not in done]
            rows = None
            if pending:
                run = RunContext(
                    model=model,
                    asked=asked,
                    path=store,
                    settings=settings,
                    description=executor.describe(description),
                    price=price,
                    budget=budget,
                    config=config,
                )
                rows = await executor.send(pending, run, done=len(mine) - len(pending))
            results = executor.read(store, rows)
    warn_of_drift(results)
    return RunResult(
        rows_of(results, keys).reset_index(drop=True),
        stopped=budget.reached,
        budget_overrun=budget.overrun is not None,
        dashboard=executor.dashboard,
    )
