"""The run options the loopback tests share: the test server, a results file, no progress bar,
no cache, two requests in flight."""

from __future__ import annotations


def options(server, out, **more) -> dict:
    """The keywords of a run against ``server`` into ``out`` (``more`` added or overriding)."""
    return {
        "base_url": server.base_url,
        "out": out,
        "progress": False,
        "cache": False,
        "concurrency": 2,
        **more,
    }
