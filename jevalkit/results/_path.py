"""Where results can live: a regular file (never a folder, a device, a FIFO or a socket)."""

from __future__ import annotations

import stat
from pathlib import Path

from ..errors import ResultsError


def check_results_path(path: str | Path, *, writing: bool = False) -> Path:
    """Refuse a path that cannot hold results: a directory, a device, a FIFO, a socket, or (when
    writing) a path whose parent is a file.

    Example:
        >>> check_results_path("/dev/zero")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: /dev/zero: not a regular file (a character device); results are read from and written to regular files
    """
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except NotADirectoryError:
        raise ResultsError(f"{path}: a parent of this path is a file, not a folder") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot use this path ({exc.strerror})") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = next(
            (
                name
                for test, name in (
                    (stat.S_ISDIR, "a folder"),
                    (stat.S_ISCHR, "a character device"),
                    (stat.S_ISBLK, "a block device"),
                    (stat.S_ISFIFO, "a FIFO"),
                    (stat.S_ISSOCK, "a socket"),
                )
                if test(info.st_mode)
            ),
            "not a regular file",
        )
        raise ResultsError(
            f"{path}: not a regular file ({kind}); results are read from and written to regular files"
        )
    if writing:
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ResultsError(
                        f"{path}: {parent} is a file, not a folder; choose another --out"
                    )
                break
    return path
