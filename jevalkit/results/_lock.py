"""The results file's lock: one run writes a results file at a time.

A run holds an advisory lock on it (a hidden ``.<name>.lock`` beside it) for as long as it reads
and writes, so two runs on one file cannot both send every request and duplicate every row.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import ResultsError


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the advisory lock of the results file ``path`` (a second run refuses at once).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> with locked(p):
        ...     with locked(p):
        ...         pass
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: ...r.jsonl is being written by another run; wait for it to finish, or write to another file (--out)
    """
    # named after the file itself, not the name it was given: a symlink and its target, or
    # ``a/../a/r.jsonl``, are one file and share one lock
    real = Path(os.path.realpath(path))
    lock_path = real.with_name(f".{real.name}.lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot lock the results file ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(
                f"{path} is being written by another run; wait for it to finish, or write to "
                "another file (--out)"
            ) from None
        yield
    finally:
        os.close(fd)
