"""Run a coroutine from synchronous code, including inside Jupyter's running event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` when no loop is running; otherwise (a notebook) run it on a worker thread
    with its own loop, so nobody needs nest_asyncio.

    Example:
        >>> async def two():
        ...     return 2
        >>> run_sync(two())
        2
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="jevalkit") as pool:
        return pool.submit(asyncio.run, coroutine).result()
