"""A run killed with SIGKILL mid-run, for the resume tests: the loopback server answers the first
``first`` requests and holds every later one until the kill, so exactly ``first`` rows are written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def kill_after(
    server,
    answer: Callable,
    first: int,
    script: str,
    out: Path,
    *args: str,
    written: Callable[[], int] | None = None,
) -> None:
    """Run ``script`` (``python -c``, argv: the server's base URL, ``out``, ``args``) against
    ``server`` answering with ``answer``; SIGKILL it once ``first`` rows are written (in
    ``out``, or as ``written`` counts them: a design that writes several files) and a later
    request is held; then let the server answer with ``answer`` again."""
    answered, gate, lock = [0], threading.Event(), threading.Lock()

    def reply(body):
        with lock:
            answered[0] += 1
            mine = answered[0]
        if mine > first:
            gate.wait(120)
        return answer(body)

    server.reply = reply
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, server.base_url, str(out), *args], env=env
    )
    try:
        for _ in range(2400):
            if written is not None:
                rows = written()
            else:
                rows = out.read_bytes().count(b"\n") if out.exists() else 0
            if (rows >= first and answered[0] > first) or proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        gate.set()
        server.reply = answer
