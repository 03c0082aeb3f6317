"""How many CPU threads and parallel slots the embedded server gets, from how busy the machine is
when it starts.

llama.cpp's threads meet at a barrier after every step of a token, so a thread the kernel takes
away stalls all of them: measured on this 2-core machine (Gemma 3 270M, 64-token answers), with
the CPUs idle two threads gave 80 tokens/s and one 60; beside 8 busy processes two threads gave
1.2 tokens/s and one 13.8; beside 16, 0.5 and 10.0. Slots do not help a saturated CPU either (one
thread beside 16 busy processes: 10.0 tokens/s for one request, 7.5 in all for four at once), and
four requests sharing a slow server each take four times as long. So a server started on a busy
machine gets one thread and one slot; an idle machine gets every thread and slot it has room for.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

__all__ = ["busy_cpus", "capacity", "usable_cpus"]

MAX_THREADS = 2
MAX_SLOTS = 4
SAMPLES, SAMPLE_GAP_S = 5, 0.05


def usable_cpus() -> int:
    """The CPUs this process may run on.

    Example:
        >>> usable_cpus() >= 1
        True
    """
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy_cpus() -> float:
    """How many CPUs other work keeps busy now: the larger of the 1-minute load average and the
    median of a few readings of the run queue (``/proc/loadavg``; this process not counted), so
    that work started seconds ago counts before the average catches up.

    Example:
        >>> busy_cpus() >= 0
        True
    """
    try:
        average = os.getloadavg()[0]
    except OSError:
        average = 0.0
    readings = []
    for i in range(SAMPLES):
        try:
            running = Path("/proc/loadavg").read_text().split()[3].split("/")[0]
            readings.append(max(0, int(running) - 1))
        except (OSError, IndexError, ValueError):
            break
        if i + 1 < SAMPLES:
            time.sleep(SAMPLE_GAP_S)
    return max(average, statistics.median(readings) if readings else 0.0)


def capacity(
    busy: float | None = None, cpus: int | None = None, *, max_threads: int = MAX_THREADS
) -> tuple[int, int]:
    """(threads, slots) for a server started now: a thread per idle CPU (at most
    ``max_threads``, at least one), and :data:`MAX_SLOTS` slots when it gets more than one
    thread, else one.

    Example:
        >>> capacity(busy=0.1, cpus=2), capacity(busy=0.8, cpus=2), capacity(busy=15.0, cpus=2)
        ((2, 4), (1, 1), (1, 1))
    """
    busy = busy_cpus() if busy is None else busy
    cpus = usable_cpus() if cpus is None else cpus
    threads = max(1, min(max_threads, round(cpus - busy)))
    return threads, (MAX_SLOTS if threads > 1 else 1)
