"""Dask clients for jevalkit's work on a cluster (runs, batches of reports): on a cluster object,
a scheduler's address, or a LocalCluster whose ports all bind 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import warnings
from collections.abc import Iterator
from typing import Any

from ._sync import run_sync
from .errors import UsageError

__all__ = [
    "HANDSHAKE_S",
    "LOCAL_PROFILE_INTERVAL_S",
    "LOCAL_WORKERS_PER_CPU",
    "PROFILE_INTERVAL",
    "SCHEDULER_TIMEOUT_S",
    "TRANSPORT_FIXES",
    "check_cluster_options",
    "check_scheduler",
    "dashboard_link",
    "dask_client",
    "local_profile_interval",
    "max_local_workers",
]

SCHEDULER_TIMEOUT_S = 10
HANDSHAKE_S = SCHEDULER_TIMEOUT_S + 1  # the connection's 10 s, then a second for the handshake
LOCAL_WORKERS_PER_CPU = 4
# Dask's statistical profiler samples every worker thread's stack every 10 ms: on a shard's deep
# asyncio stacks that cost about 15% of the workers' CPU (bench_distributed). A LocalCluster of
# our own samples every 100 ms at most (the dashboard's Profile page keeps working).
PROFILE_INTERVAL = "distributed.worker.profile.interval"
LOCAL_PROFILE_INTERVAL_S = 0.1


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
        # Dask's housekeeping warnings (a lease released after it timed out on a busy machine,
        # "worker process still alive after 4 s, killing" at close, a dashboard port taken)
        # are nothing a user of this cluster can act on: only its errors are shown.
        with (
            dask.config.set({PROFILE_INTERVAL: local_profile_interval()}),
            warnings.catch_warnings(),
        ):
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            local = LocalCluster(
                n_workers=workers or 2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.ERROR,
            )
    if scheduler is not None:
        check_scheduler(scheduler)
    try:
        client = Client(scheduler or cluster or local, timeout=f"{SCHEDULER_TIMEOUT_S}s")
    except Exception as exc:  # what Dask raises for an address it cannot use varies by transport
        if local is not None:
            local.close()
        where = scheduler or ("the cluster" if cluster is not None else "the LocalCluster")
        raise UsageError(
            f"cannot use the Dask scheduler {where}: it did not accept a client within "
            f"{SCHEDULER_TIMEOUT_S} s ({_first_line(exc)}); check the address: a scheduler "
            "listens on tcp://host:8786 by default, a worker's address is not one"
        ) from None
    try:
        yield client
    finally:
        client.close()
        if local is not None:
            local.close()


def check_scheduler(address: str) -> None:
    """Refuse, in one line and within :data:`SCHEDULER_TIMEOUT_S` seconds, an address where no
    Dask scheduler can answer: nothing listening, something that does not speak Dask's protocol
    (an HTTP server accepts the connection and never sends Dask's handshake, which Dask itself
    waits for without a limit), or a transport this machine cannot use (``tls://`` without
    Dask's TLS configuration, ``ucx://`` without UCX).

    Example:
        >>> check_scheduler("ucx://127.0.0.1:8786")
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: ucx://127.0.0.1:8786: ucx:// needs UCX support on this machine (the distributed-ucxx package); install it, or give the scheduler's tcp:// address
    """
    from distributed.comm.core import connect

    async def handshake() -> None:
        comm = await connect(address, timeout=SCHEDULER_TIMEOUT_S)
        await comm.close()

    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    try:
        run_sync(asyncio.wait_for(handshake(), HANDSHAKE_S))
    except TimeoutError:
        raise UsageError(
            f"{address}: something accepted the connection but sent no Dask handshake within "
            f"{HANDSHAKE_S} s: it is not a Dask scheduler; check the address and port "
            "(a scheduler listens on 8786 by default)"
        ) from None
    except OSError as exc:
        raise UsageError(
            f"cannot reach the Dask scheduler {address} within {SCHEDULER_TIMEOUT_S} s "
            f"({_first_line(exc)}); check the address"
        ) from None
    except Exception as exc:  # a transport Dask cannot use here raises TypeError, ValueError, ...
        fix = TRANSPORT_FIXES.get(scheme)
        if fix is None:
            fix = f"Dask cannot use it ({_first_line(exc)}); give the scheduler's tcp:// address"
        raise UsageError(f"{address}: {fix}") from None


TRANSPORT_FIXES = {
    "tls": (
        "tls:// needs Dask's TLS configuration on this machine (distributed.comm.tls.ca-file, "
        "distributed.comm.tls.client.cert and .key); set it, or pass a Client made with a "
        "distributed.security.Security as cluster="
    ),
    "ucx": (
        "ucx:// needs UCX support on this machine (the distributed-ucxx package); install it, "
        "or give the scheduler's tcp:// address"
    ),
}


def _first_line(exc: BaseException) -> str:
    """``Type: the first line of the message`` (at most 200 characters)."""
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
