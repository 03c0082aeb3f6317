"""Where results can live: a regular file (never a folder, a device, a FIFO or a socket), by
the one rule for files (:mod:`jevalkit.files`)."""

from __future__ import annotations

import stat
from pathlib import Path

from ..errors import ResultsError
from ..files import check_name, check_output, kind_of, shown


def check_results_path(path: str | Path, *, writing: bool = False) -> Path:
    """Refuse a path that cannot hold results: a directory, a device, a FIFO, a socket, an
    over-long name, or (when writing) a path whose parent is a file.

    Example:
        >>> check_results_path("/dev/zero")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: /dev/zero: not a regular file (a character device); results are read from and written to regular files
    """
    path = check_name(path, ResultsError, what="results file")
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except NotADirectoryError:
        raise ResultsError(
            f"{shown(path)}: a parent of this path is a file, not a folder"
        ) from None
    except OSError as exc:
        raise ResultsError(f"{shown(path)}: cannot use this path ({exc.strerror})") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ResultsError(
            f"{shown(path)}: not a regular file ({kind_of(info.st_mode)}); results are read from "
            "and written to regular files"
        )
    if writing:
        check_output(path, ResultsError, what="results file", follow_link=True)
    return path
