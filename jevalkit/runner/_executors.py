"""Which executor a run's settings ask for: on a Dask cluster (``scheduler``, ``cluster`` or
``workers``), one shard (``shard="i/N"``), or in this process (none of them)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from ..cluster import dask_client
from ..errors import UsageError
from ._dask import DaskExecutor
from ._execute import Executor
from ._options import RunSettings
from ._shards import ShardExecutor, parse_shard


@contextlib.asynccontextmanager
async def open_executor(settings: RunSettings | None = None) -> AsyncIterator[Executor]:
    """The :class:`Executor` ``settings`` ask for, open for the whole run (a Dask client is
    connected once and closed at the end, however many rounds the run takes).

    Example:
        >>> import asyncio
        >>> async def which(**options):
        ...     async with open_executor(RunSettings(**options)) as executor:
        ...         return type(executor).__name__
        >>> asyncio.run(which()), asyncio.run(which(shard="1/3"))
        ('Executor', 'ShardExecutor')
    """
    s = settings or RunSettings()
    engines = sum(x is not None for x in (s.scheduler, s.cluster, s.workers))
    if s.shard is not None and engines:
        raise UsageError(
            "--shard runs one shard without Dask; drop --scheduler/--workers, or drop --shard "
            "and let Dask shard the run"
        )
    if s.shard is not None:
        if s.design is not None:
            raise UsageError(
                f"{s.design.name}: a design decides each wave from all of its rows; run it in "
                "one process or on Dask (--scheduler or --workers), not as --shard"
            )
        yield ShardExecutor(*parse_shard(s.shard))
        return
    if not engines:
        yield Executor()
        return
    stack = contextlib.ExitStack()
    client = await asyncio.to_thread(
        stack.enter_context,
        dask_client(scheduler=s.scheduler, cluster=s.cluster, workers=s.workers),
    )
    executor = DaskExecutor(client)
    try:
        yield executor
    finally:
        await asyncio.to_thread(executor.close)
        await asyncio.to_thread(stack.close)
