"""One logical run from many Dask workers.

The driver plans the jobs, skips the keys the results file already holds, splits the rest into
shards (:func:`dask_shards`) and submits one Dask task per shard.
Each task runs the one execution path (:func:`execute`) into its own part file, so a task that
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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ..costs import Budget
from ..errors import UsageError
from ._dask_local import dask_local_server
from ._drift import warn_of_drift
from ._execute import (
    _check_same_content,
    _check_same_endpoint,
    execute,
    execute_unread,
    resume_rows,
    rows_of,
)
from ._job import Job
from ._ledger import LedgerBudget, ledger_op
from ._merge import PartsReader, merge_parts, merge_rows
from ._options import RunSettings
from ._shards import guided_shards, parse_shard, part_files, part_path, shard_of
from ._store import (
    check_results_path,
    latest_rows,
    locked,
    read_results,
    results_frame,
    rows_frame,
)
from ._target import endpoint_identity

SCHEDULER_TIMEOUT_S = 10
SHARD_LEASES = 4  # the smallest shard holds four times a task's share of the concurrency
POLL_S = 0.5
# how long a run waits for a cluster's first worker (queued batch jobs); seconds, default 600
WORKER_WAIT_ENV = "JEVALKIT_WORKER_WAIT_S"
LOCAL_WORKERS_PER_CPU = 4
# Dask's statistical profiler samples every worker thread's stack every 10 ms: on a shard's deep
# asyncio stacks that cost about 15% of the workers' CPU (bench_distributed). A LocalCluster of
# our own samples every 100 ms at most (the dashboard's Profile page keeps working).
PROFILE_INTERVAL = "distributed.worker.profile.interval"
LOCAL_PROFILE_INTERVAL_S = 0.1

Execute = Callable[..., Awaitable[pd.DataFrame]]


@contextlib.contextmanager
def dask_client(
    *, scheduler: str | None = None, cluster: Any = None, workers: int | None = None
) -> Iterator[Any]:
    """A ``distributed.Client``: on ``cluster`` (a Client, or any cluster object such as a
    ``LocalCluster`` or a dask-jobqueue ``SLURMCluster``), on the scheduler at ``scheduler``
    (``tcp://host:port``), or on a ``LocalCluster`` of ``workers`` processes whose ports all
    bind 127.0.0.1. Closes what it opened.

    Example:
        >>> with dask_client(workers=0):
        ...     pass
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: workers must be a whole number of at least 1, got 0
    """
    import dask
    from dask.distributed import Client, LocalCluster

    check_cluster_options(scheduler=scheduler, cluster=cluster, workers=workers)
    if isinstance(cluster, Client):
        yield cluster
        return
    local = None
    if scheduler is None and cluster is None:
        with dask.config.set({PROFILE_INTERVAL: local_profile_interval()}):
            local = LocalCluster(
                n_workers=workers or 2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
            )
    try:
        client = Client(scheduler or cluster or local, timeout=f"{SCHEDULER_TIMEOUT_S}s")
    except (OSError, TimeoutError, ValueError) as exc:
        if local is not None:
            local.close()
        raise UsageError(
            f"cannot reach the Dask scheduler {scheduler or 'LocalCluster'} within "
            f"{SCHEDULER_TIMEOUT_S} s ({type(exc).__name__}); check the address"
        ) from None
    try:
        yield client
    finally:
        client.close()
        if local is not None:
            local.close()


def local_profile_interval() -> str:
    """The profiler interval of a LocalCluster :func:`dask_client` starts: the configured one,
    but at least :data:`LOCAL_PROFILE_INTERVAL_S`.

    Example:
        >>> import dask
        >>> with dask.config.set({PROFILE_INTERVAL: "10ms"}):
        ...     local_profile_interval()
        '100ms'
        >>> with dask.config.set({PROFILE_INTERVAL: "1s"}):
        ...     local_profile_interval()
        '1000ms'
    """
    import dask
    from dask.utils import parse_timedelta

    seconds = parse_timedelta(dask.config.get(PROFILE_INTERVAL), default="ms")
    return f"{round(max(seconds, LOCAL_PROFILE_INTERVAL_S) * 1000)}ms"


def check_cluster_options(
    *, scheduler: str | None = None, cluster: Any = None, workers: int | None = None
) -> None:
    """Refuse cluster options that contradict each other or are out of range.

    Example:
        >>> check_cluster_options(scheduler="tcp://127.0.0.1:8786", workers=2)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: give one of scheduler=, cluster= or workers=, not several
    """
    if sum(x is not None for x in (scheduler, cluster, workers)) > 1:
        raise UsageError("give one of scheduler=, cluster= or workers=, not several")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise UsageError(
            f"--scheduler must be an address such as tcp://host:8786, got {scheduler!r}"
        )
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise UsageError(f"workers must be a whole number of at least 1, got {workers!r}")
    if workers is not None and workers > max_local_workers():
        raise UsageError(
            f"workers={workers} would start {workers} worker processes on this machine "
            f"({os.cpu_count() or 1} CPUs); use at most {max_local_workers()}, or run a larger "
            "cluster and pass its address with --scheduler"
        )


def max_local_workers() -> int:
    """The most worker processes a LocalCluster may start here: a few per CPU (each worker
    already sends many requests at once, so more processes only cost memory).

    Example:
        >>> max_local_workers() >= 8
        True
    """
    return max(8, LOCAL_WORKERS_PER_CPU * (os.cpu_count() or 1))


def _has_dashboard() -> bool:
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return False
    return True


def dashboard_link(client: Any) -> str | None:
    """The Dask dashboard's address, or None when the scheduler serves none (it needs bokeh)."""
    with contextlib.suppress(Exception):
        if _has_dashboard() and "dashboard" in client.scheduler_info().get("services", {}):
            return client.dashboard_link
    return None


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
            execute_unread(
                jobs,
                model=task.model,
                out=task.part,
                settings=settings,
                description=task.description,
                budget=budget,
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


class DaskSession:
    """A run on a Dask cluster: its client, its concurrency semaphore and its budget ledger.
    :meth:`execute` has the signature of :func:`jevalkit.runner.execute`."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.name = f"jevalkit-{uuid.uuid4().hex[:12]}"
        self.semaphore: Any = None
        self.ledger: str | None = None
        self.dashboard = dashboard_link(client)
        self._rounds = 0

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

    def close(self) -> None:
        """Drop the ledger and the semaphore on the scheduler."""
        with contextlib.suppress(Exception):
            if self.ledger is not None:
                self.client.run_on_scheduler(ledger_op, "close", self.ledger)
            if self.semaphore is not None:
                self.semaphore.close()

    async def execute(
        self,
        jobs: Sequence[Job],
        *,
        model: str | None,
        out: str | Path,
        settings: RunSettings | None = None,
        description: str = "requests",
        budget: Budget | None = None,
    ) -> pd.DataFrame:
        """Execute ``jobs`` on the cluster and return their rows, as :func:`execute` does."""
        settings = settings or RunSettings()
        with dask_local_server(self.client, jobs, model, settings) as settings:
            df = await asyncio.to_thread(
                self._drive, list(jobs), model, Path(out), settings, description
            )
        if budget is not None and df.attrs.get("stopped"):
            budget.reached = df.attrs["stopped"]
            budget.overrun = df.attrs.pop("overrun")
        df.attrs.pop("overrun", None)
        return df

    def _drive(
        self,
        jobs: list[Job],
        model: str | None,
        out: Path,
        settings: RunSettings,
        description: str,
    ) -> pd.DataFrame:
        base_url, label = settings.base_url, settings.label
        # absolute: a worker's working folder is not the driver's
        path = check_results_path(Path(out).absolute(), writing=True)
        asked = model or "deterministic"
        if model is None and any(job.needs_model for job in jobs):
            raise UsageError("these jobs ask a model: give model= (e.g. 'local')")
        endpoint = endpoint_identity(model, base_url, api_key_env=settings.api_key_env)
        keys = [job.key(asked, label) for job in jobs]
        self._open(settings)
        stopped: dict[str, Any] = {"stopped": None, "overrun": None}
        # the results file's rows as the last merge left them (None: no merge since)
        merged: dict[tuple, dict] | None = None
        with locked(path):
            if part_files(path):  # an interrupted run left parts: fold them in first
                merge_parts(path, hold_lock=False)
            existing = resume_rows(path, jobs, keys, endpoint, retry_errors=settings.retry_errors)
            pending = [(j, k) for j, k in zip(jobs, keys, strict=True) if k not in existing]
            while pending:  # one wave; another only when a task yielded under the budget
                merged = None
                reader = PartsReader(path)  # reads the rows while the workers write them
                try:
                    stopped = self._run_shards(
                        pending,
                        path,
                        model,
                        shard_settings(settings),
                        description,
                        done=len(jobs) - len(pending),
                        reader=reader,
                    )
                finally:
                    if part_files(path):
                        _, merged = merge_rows(path, hold_lock=False, reader=reader)
                if stopped["stopped"] or stopped["overrun"] or not stopped["yielded"]:
                    break
                existing = merged if merged is not None else latest_rows(path)[0]
                pending = [(j, k) for j, k in pending if k not in existing]
            # the merge read every row already: build the frame from them, not from the file
            results = read_results(path) if merged is None else rows_frame(merged)
        warn_of_drift(results)  # as execute warns: here, not into a worker's log
        mine = rows_of(results, keys).reset_index(drop=True)
        mine.attrs["stopped"] = stopped["stopped"]
        mine.attrs["budget_overrun"] = stopped["overrun"] is not None
        mine.attrs["overrun"] = stopped["overrun"]
        mine.attrs["dashboard"] = self.dashboard
        return mine

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
        self,
        pending: list[tuple[Job, tuple]],
        path: Path,
        model: str | None,
        settings: RunSettings,
        description: str,
        *,
        done: int,
        reader: PartsReader,
    ) -> dict[str, Any]:
        from dask.distributed import wait

        threads = self._worker_threads()
        share = task_share(settings.concurrency, threads)
        self._rounds += 1
        futures = []
        positions = dask_shards([key for _, key in pending], threads, settings.concurrency)
        for index, shard in enumerate(positions):
            shard_jobs = [pending[i][0] for i in shard]
            holder = f"{self.name}-r{self._rounds}-s{index}"
            task = ShardTask(
                model=model,
                part=str(part_path(path, index)),
                settings=settings,
                description=description,
                semaphore=self.semaphore,
                share=share,
                ledger=self.ledger,
                holder=holder,
            )
            futures.append(self.client.submit(run_shard, shard_jobs, task, key=holder, pure=False))
        bar = tqdm(
            total=done + len(pending),
            initial=done,
            desc=description,
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
                    postfix = {"errors": int(counts["errors"])}
                    if settings.new_budget().usd is not None or counts["usd"]:
                        postfix["spent"] = f"${counts['usd']:.4f}"
                    bar.set_postfix(postfix, refresh=False)
                    bar.update(done + int(counts["rows"]) - bar.n)
                failed = [f for f in futures if f.status == "error"]
                if failed:
                    failed[0].result()  # raises the task's own error
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


async def execute_shard(
    jobs: Sequence[Job],
    *,
    shard: tuple[int, int],
    model: str | None,
    out: str | Path,
    settings: RunSettings | None = None,
    description: str = "requests",
    budget: Budget | None = None,
) -> pd.DataFrame:
    """Run shard ``shard = (i, N)`` of ``jobs`` into ``<out>.parts/<i>.jsonl`` (no engine: for
    Slurm job arrays and Kubernetes indexed jobs); merge the parts with :func:`merge_parts`.
    Keys already in the results file or in another part are skipped (an error row of the results
    file is sent again with ``retry_errors``)."""
    index, count = shard
    settings = settings or RunSettings()
    path = check_results_path(out, writing=True)
    asked = model or "deterministic"
    keys = [job.key(asked, settings.label) for job in jobs]
    done: dict[tuple, dict] = {}
    mine_part = part_path(path, index)
    for source in [path, *part_files(path)]:
        if source != mine_part and source.exists():
            rows, _ = latest_rows(source)
            if source == path and settings.retry_errors:
                rows = {k: v for k, v in rows.items() if not v.get("error")}
            done.update(rows)
    endpoint = endpoint_identity(model, settings.base_url, api_key_env=settings.api_key_env)
    _check_same_endpoint(path, done, set(keys), endpoint)
    _check_same_content(path, done, list(jobs), keys)
    mine = [
        job
        for job, key in zip(jobs, keys, strict=True)
        if shard_of(key, count) == index and key not in done
    ]
    if not mine and not mine_part.exists():
        return results_frame([])  # every key of this shard is done already
    return await execute(
        mine,
        model=model,
        out=mine_part,
        settings=settings,
        description=f"{description} (shard {index}/{count})",
        budget=budget,
    )


@contextlib.asynccontextmanager
async def scaled_execute(settings: RunSettings | None = None) -> AsyncIterator[Execute]:
    """The execution path ``settings`` ask for, with the signature of :func:`execute`: on a Dask
    cluster (``scheduler``, ``cluster`` or ``workers``), one shard (``shard="i/N"``), or in this
    process (none of them).

    Example:
        >>> import asyncio
        >>> async def which():
        ...     async with scaled_execute(RunSettings()) as run_jobs:
        ...         return run_jobs.__name__
        >>> asyncio.run(which())
        'execute'
    """
    s = settings or RunSettings()
    engines = sum(x is not None for x in (s.scheduler, s.cluster, s.workers))
    if s.shard is not None and engines:
        raise UsageError(
            "--shard runs one shard without Dask; drop --scheduler/--workers, or drop --shard "
            "and let Dask shard the run"
        )
    if s.shard is not None:
        if s.repeats == "auto" or s.adaptive is not None:
            raise UsageError(
                "--repeats auto decides each round on all of its rows: run it on Dask "
                "(--scheduler or --workers), not as --shard"
            )
        yield partial(execute_shard, shard=parse_shard(s.shard))
        return
    if not engines:
        yield execute
        return
    stack = contextlib.ExitStack()
    client = await asyncio.to_thread(
        stack.enter_context,
        dask_client(scheduler=s.scheduler, cluster=s.cluster, workers=s.workers),
    )
    session = DaskSession(client)
    try:
        yield session.execute
    finally:
        await asyncio.to_thread(session.close)
        await asyncio.to_thread(stack.close)
