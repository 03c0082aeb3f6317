"""One logical run from many Dask workers: :class:`DaskExecutor`, a strategy of the one execution
path (:func:`~jevalkit.runner.execute` resumes and reads; this module only decides how the
pending jobs are sent).

The driver splits the pending jobs into shards (:func:`dask_shards`) and submits one Dask task per
shard. Each task runs the one execution path (:func:`execute`) into its own part file, so a task that
Dask re-runs after its worker died resumes from that file by key. When every task is done the
parts are merged into the results file (:func:`merge_parts`). Across workers the run keeps one
concurrency (a ``distributed.Semaphore``: each task holds its share of leases and sends at most
that many requests at a time) and one budget (:class:`LedgerBudget`, kept on the scheduler).

Part files are written by the workers and merged by the driver: on several machines the results
folder must be on a shared file system (as it is on a Slurm or PBS cluster).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ..cluster import dashboard_link
from ..costs import Budget
from ..errors import ClusterError, UsageError
from ..results import (
    PartsReader,
    RunConfig,
    latest_rows,
    merge_parts,
    merge_rows,
    part_files,
    part_path,
    read_results,
    rows_frame,
)
from ._dask_local import check_workers_see_it, dask_local_server
from ._execute import Executor, Unread, execute
from ._job import Job
from ._ledger import LedgerBudget, ledger_op
from ._options import RunSettings
from ._resume import Rows
from ._send import RunContext
from ._shards import guided_shards

SHARD_LEASES = 4  # the smallest shard holds four times a task's share of the concurrency
POLL_S = 0.5
# how long a run waits for a cluster's first worker (queued batch jobs); seconds, default 600
WORKER_WAIT_ENV = "JEVALKIT_WORKER_WAIT_S"


def worker_wait_s() -> float:
    """Seconds a run waits for a cluster's first worker: ``$JEVALKIT_WORKER_WAIT_S``, else 600.

    Example:
        >>> import os
        >>> os.environ["JEVALKIT_WORKER_WAIT_S"] = "soon"
        >>> worker_wait_s()
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: JEVALKIT_WORKER_WAIT_S='soon': give a number of seconds above 0, e.g. 600
        >>> del os.environ["JEVALKIT_WORKER_WAIT_S"]; worker_wait_s()
        600.0
    """
    text = os.environ.get(WORKER_WAIT_ENV, "600")
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise UsageError(f"{WORKER_WAIT_ENV}={text!r}: give a number of seconds above 0, e.g. 600")
    return seconds


def shard_settings(settings: RunSettings) -> RunSettings:
    """What a shard task runs with: no cluster objects and no engine (it runs its shard in its
    own process), and no ``retry_errors``: the driver already took the results file's error rows
    out, and a task Dask re-runs must not send again the error rows its dead attempt wrote.

    Example:
        >>> s = shard_settings(RunSettings(workers=2, retry_errors=True, concurrency=8))
        >>> s.workers, s.retry_errors, s.concurrency
        (None, False, 8)
    """
    return replace(
        settings, scheduler=None, cluster=None, workers=None, shard=None, retry_errors=False
    )


def task_share(concurrency: int, threads: int) -> int:
    """The concurrency leases one shard task may hold: the run's concurrency split over the
    cluster's worker threads.

    Example:
        >>> task_share(32, 2), task_share(3, 4)
        (16, 1)
    """
    return max(1, math.ceil(concurrency / max(1, threads)))


def dask_shards(keys: list[tuple], threads: int, concurrency: int) -> list[list[int]]:
    """How a run on Dask splits the jobs of ``keys`` into tasks (positions in ``keys``): guided
    shards (:func:`~jevalkit.runner.guided_shards`), the smallest holding :data:`SHARD_LEASES`
    times a task's share of the concurrency, but no more than a thread's share of the jobs: a
    task holds at most its share of the concurrency, so a run of fewer tasks than threads
    would leave workers idle and send fewer requests at a time than it may. Which keys share a
    shard depends only on the set of keys, the threads and the concurrency.

    Example:
        >>> keys = [("p", 1, None, "m", "ab", None, None, None, None, r) for r in range(100)]
        >>> [len(s) for s in dask_shards(keys, threads=2, concurrency=8)]  # smallest 4 x 8/2
        [25, 19, 16, 16, 16, 8]
        >>> [len(s) for s in dask_shards(keys[:12], threads=2, concurrency=8)]  # 12 / 2
        [6, 6]
    """
    threads = max(1, threads)
    smallest = min(SHARD_LEASES * task_share(concurrency, threads), len(keys) // threads)
    return guided_shards(keys, threads, max(1, smallest))


@dataclass(frozen=True)
class ShardTask:
    """What one Dask task needs besides its jobs (no secrets: workers read keys from their own
    environment by the variable's name)."""

    model: str | None
    part: str
    settings: RunSettings
    description: str
    semaphore: Any
    share: int
    ledger: str | None
    holder: str


def run_shard(jobs: list[Job], task: ShardTask) -> dict[str, Any]:
    """Run one shard on a Dask worker into its part file (resuming it by key); return why the
    run's budget stopped it (``stopped``) and an overrun (``overrun``), each None when none, and
    whether it yielded to other tasks' requests (``yielded``). Holds at most ``task.share``
    of the run's concurrency leases."""
    from dask.distributed import get_client

    client = get_client()
    leases = 0
    try:
        task.semaphore.acquire()
        leases = 1
        while leases < task.share and task.semaphore.acquire(timeout=0):
            leases += 1
        settings = replace(task.settings, concurrency=leases, progress=False)
        limits = task.settings.new_budget()
        budget: Budget = Budget()
        if task.ledger is not None:
            budget = LedgerBudget(
                client, task.ledger, task.holder, usd=limits.usd, requests=limits.requests
            )
            budget.call("begin")
        # the driver merges the part and reads the rows: reading them back here is wasted work
        asyncio.run(
            execute(
                jobs,
                model=task.model,
                out=task.part,
                settings=settings,
                description=task.description,
                budget=budget,
                executor=Unread(),
            )
        )
        if isinstance(budget, LedgerBudget):
            return {
                "stopped": budget.run_reached,
                "overrun": budget.overrun,
                "yielded": budget.yielded,
            }
        return {"stopped": budget.reached, "overrun": budget.overrun, "yielded": False}
    finally:
        for _ in range(leases):
            task.semaphore.release()


def raise_task_error(future: Any, shard: int, path: Path) -> None:
    """Raise the error of a failed shard task: a task that killed every worker that ran it
    (``KilledWorker``) as one line naming the shard and the way on; any other as it is (the
    task's own error, raised on the driver)."""
    from dask.distributed import KilledWorker

    error = future.exception()
    if isinstance(error, KilledWorker):
        raise ClusterError(
            f"shard {shard} of the run into {path} failed on {error.allowed_failures + 1} "
            "workers (each died while running it: out of memory? see the workers' logs); the "
            "rows written so far are kept, and running the same command again resumes from them"
        )
    future.result()


class DaskExecutor(Executor):
    """The jobs spread over a Dask cluster: the driver holds the results file's lock, folds in
    the parts an interrupted run left, splits the pending jobs into guided shards
    (:func:`dask_shards`) and submits one task per shard, each sending its shard in its own
    process into its own part file; then it merges the parts (:func:`merge_rows`). One
    concurrency (a ``distributed.Semaphore``) and one budget (a ledger on the scheduler) hold
    across the workers. Open it once per run: adaptive rounds reuse its semaphore and ledger."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.name = f"jevalkit-{uuid.uuid4().hex[:12]}"
        self.semaphore: Any = None
        self.ledger: str | None = None
        self.dashboard = dashboard_link(client)
        self._rounds = 0

    def check(self, model: str | None, settings: RunSettings) -> None:
        """Refuse the embedded model on workers that do not share this machine's server (on a
        cluster here they share it: :func:`dask_local_server`)."""
        check_workers_see_it(self.client, model, settings)

    def store(self, path: Path) -> Path:
        """The results file, absolute: a worker's working folder is not the driver's."""
        return path.absolute()

    sharding = "dask"
    sends_here = False  # the workers send, with the keys in their environment

    def prepare(self, path: Path, store: Path, config: RunConfig | None) -> None:
        """Merge the parts an interrupted run left before resuming."""
        if part_files(store):
            merge_parts(store, hold_lock=False)

    async def send(self, pending: Sequence[Job], run: RunContext, *, done: int) -> Rows | None:
        """Run the pending jobs as waves of shard tasks (another wave only when a task yielded
        to others' requests under the budget); return the merged file's rows."""
        with dask_local_server(self.client, pending, run.model, run.settings) as settings:
            return await asyncio.to_thread(
                self._waves, list(pending), replace(run, settings=settings), done
            )

    def read(self, store: Path, rows: Rows | None) -> pd.DataFrame:
        """The rows the merge read, else the file."""
        return read_results(store) if rows is None else rows_frame(rows)

    def close(self) -> None:
        """Drop the ledger and the semaphore on the scheduler."""
        with contextlib.suppress(Exception):
            if self.ledger is not None:
                self.client.run_on_scheduler(ledger_op, "close", self.ledger)
            if self.semaphore is not None:
                self.semaphore.close()

    def _open(self, settings: RunSettings) -> None:
        from dask.distributed import Semaphore

        if self.semaphore is None:
            self.semaphore = Semaphore(
                max_leases=settings.concurrency,
                name=f"{self.name}-slots",
                scheduler_rpc=self.client.scheduler,
                loop=self.client.loop,
            )
        budget = settings.new_budget()
        if budget.active and self.ledger is None:
            self.ledger = f"{self.name}-budget"
            try:
                self.client.run_on_scheduler(
                    ledger_op, "open", self.ledger, limits=(budget.usd, budget.requests)
                )
            except Exception as exc:  # the scheduler cannot run our function
                self.ledger = None
                raise UsageError(
                    "a budget across Dask workers is kept on the scheduler, which could not run "
                    f"jevalkit ({type(exc).__name__}: {exc}); install jevalkit where the "
                    "scheduler runs, or drop --budget-usd/--budget-requests"
                ) from None

    def _waves(self, jobs: list[Job], run: RunContext, done: int) -> Rows | None:
        self._open(run.settings)
        path, total = run.path, done + len(jobs)
        task_run = replace(run, settings=shard_settings(run.settings))
        pending = [(job, job.key(run.asked, run.settings.label)) for job in jobs]
        merged: Rows | None = None  # the results file's rows as the last merge left them
        while pending:  # one wave; another only when a task yielded under the budget
            merged = None
            reader = PartsReader(path)  # reads the rows while the workers write them
            try:
                stopped = self._run_shards(
                    pending, task_run, done=total - len(pending), reader=reader
                )
            finally:
                if part_files(path):
                    _, merged = merge_rows(path, hold_lock=False, reader=reader)
            if stopped["stopped"] or stopped["overrun"]:
                run.budget.reached = stopped["stopped"]
                run.budget.overrun = stopped["overrun"]
                break
            if not stopped["yielded"]:
                break
            existing = merged if merged is not None else latest_rows(path).rows
            pending = [(j, k) for j, k in pending if k not in existing]
        return merged

    def _worker_threads(self) -> int:
        """The cluster's worker threads, waiting up to ``$JEVALKIT_WORKER_WAIT_S`` seconds
        (default 600) for a first worker (a cluster just scaled up, such as a dask-jobqueue one
        whose jobs are queued): a run split for no workers would give every task the whole
        concurrency."""
        threads = sum(self.client.nthreads().values())
        if threads:
            return threads
        wait = worker_wait_s()
        try:
            self.client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise UsageError(
                f"no Dask worker joined the scheduler within {wait:g} s; start workers "
                "(`dask worker ADDRESS`) or check the cluster's jobs, then run again (rows "
                "already written are kept)"
            ) from None
        return max(1, sum(self.client.nthreads().values()))

    def _run_shards(
        self, pending: list[tuple[Job, tuple]], run: RunContext, *, done: int, reader: PartsReader
    ) -> dict[str, Any]:
        from dask.distributed import wait

        settings = run.settings
        threads = self._worker_threads()
        share = task_share(settings.concurrency, threads)
        self._rounds += 1
        futures = []
        positions = dask_shards([key for _, key in pending], threads, settings.concurrency)
        for index, shard in enumerate(positions):
            shard_jobs = [pending[i][0] for i in shard]
            holder = f"{self.name}-r{self._rounds}-s{index}"
            part = part_path(run.path, index)
            if run.config is not None:
                run.config.write(part)
            task = ShardTask(
                model=run.model,
                part=str(part),
                settings=settings,
                description=run.description,
                semaphore=self.semaphore,
                share=share,
                ledger=self.ledger,
                holder=holder,
            )
            futures.append(self.client.submit(run_shard, shard_jobs, task, key=holder, pure=False))
        bar = tqdm(
            total=done + len(pending),
            initial=done,
            desc=run.description,
            unit="req",
            disable=not settings.progress,
            dynamic_ncols=True,
        )
        if settings.progress and self._rounds == 1:
            bar.write(
                f"Dask dashboard: {self.dashboard}"
                if self.dashboard
                else "Dask dashboard: none (the scheduler serves one when bokeh is installed)",
                file=sys.stderr,
            )
        try:
            while True:
                running = [f for f in futures if not f.done()]
                with contextlib.suppress(TimeoutError):
                    wait(running, timeout=POLL_S, return_when="FIRST_COMPLETED")
                reader.poll()  # parsed now, while the workers run, not after them
                if settings.progress:
                    counts = reader.counts()
                    postfix: dict[str, int | str] = {"errors": int(counts["errors"])}
                    if settings.new_budget().usd is not None or counts["usd"]:
                        postfix["spent"] = f"${counts['usd']:.4f}"
                    bar.set_postfix(postfix, refresh=False)
                    bar.update(done + int(counts["rows"]) - bar.n)
                failed = [f for f in futures if f.status == "error"]
                if failed:
                    raise_task_error(failed[0], futures.index(failed[0]), run.path)
                if all(f.done() for f in futures):
                    break
            reasons = [f.result() for f in futures]
        except BaseException:
            self.client.cancel(futures)
            raise
        finally:
            bar.close()
        return {
            "stopped": next((r["stopped"] for r in reasons if r["stopped"]), None),
            "overrun": next((r["overrun"] for r in reasons if r["overrun"]), None),
            "yielded": any(r["yielded"] for r in reasons),
        }
