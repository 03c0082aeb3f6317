"""``--model local`` on Dask: the one embedded server of this machine, shared by every worker
that runs here (a ``--workers`` LocalCluster), instead of one server per task.

The driver starts the server (or joins the one running) and holds a lease on it for the whole
run; every task's own ``local`` target then finds that server through the state file and leases
it too. A cluster whose workers do not see that server (other machines, or another
``$JEVALKIT_STATE_DIR``) is refused in one line naming the commands that work there. The run's
concurrency is capped at the server's slots (one for seeded jobs, whose text batching changes),
so the tasks together never queue requests behind its slots.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeGuard

from ..errors import UsageError
from ..local import (
    DEFAULT_PORT,
    KEY_VARIABLE,
    MODEL_NAME,
    is_local_model,
    local_endpoint,
    running_pid,
    state_file,
)
from ._job import Job
from ._options import RunSettings

REMOTE_WORKERS = (
    "--model local on Dask shares this machine's embedded model, and these Dask workers do not "
    "see it (they run on other machines, or with another JEVALKIT_STATE_DIR): start it where "
    f"each worker runs (`{KEY_VARIABLE}=<a key> jevalkit local serve --port {DEFAULT_PORT}`) and "
    f"pass --model {MODEL_NAME} --base-url http://127.0.0.1:{DEFAULT_PORT}/v1 --api-key-env "
    f"{KEY_VARIABLE}, or use --workers N (a cluster on this machine), or run without "
    "--scheduler"
)


def uses_local_server(model: str | None, settings: RunSettings) -> TypeGuard[str]:
    """Whether a run of ``model`` with ``settings`` asks for this machine's embedded server."""
    return model is not None and is_local_model(model) and settings.base_url is None


def check_workers_see_it(client: Any, model: str | None, settings: RunSettings) -> None:
    """Refuse, before anything starts, a run of the embedded model on workers that would each
    start a server of their own (another ``$JEVALKIT_STATE_DIR``, or another machine).

    Raises:
        UsageError: the cluster's workers do not share this machine's state folder.
    """
    if not uses_local_server(model, settings):
        return
    theirs = client.run(state_file) if client.nthreads() else {}
    if not theirs or any(Path(path) != state_file() for path in theirs.values()):
        raise UsageError(REMOTE_WORKERS)


@contextlib.contextmanager
def dask_local_server(
    client: Any, jobs: Sequence[Job], model: str | None, settings: RunSettings
) -> Iterator[RunSettings]:
    """The settings to run ``jobs`` with on ``client``'s cluster: unchanged unless ``model`` is
    the embedded model; then, for as long as the run lasts, the one local server is up and the
    concurrency capped at its slots.

    Raises:
        UsageError: the cluster's workers do not share this machine's server.
    """
    if not uses_local_server(model, settings):
        yield settings
        return
    # workers with another state folder would each start a server of their own: refused
    # before this one starts anything; then every worker must see the server it runs
    check_workers_see_it(client, model, settings)
    with local_endpoint(model) as server:
        if any(pid != server.pid for pid in client.run(running_pid, model).values()):
            raise UsageError(REMOTE_WORKERS)
        slots = 1 if any(job.seeded for job in jobs) else server.slots
        yield replace(settings, concurrency=min(settings.concurrency, slots))
