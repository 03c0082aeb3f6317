"""Where results can live: a regular file (never a folder, a device, a FIFO or a socket), by
the one rule for files (:mod:`jevalkit.files`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..errors import ResultsError
from ..files import check_name, check_output, kind_of, open_regular, shown

TAIL_BLOCK = 65536  # the last line is looked for backwards, this many bytes at a time


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
        if info is not None and info.st_size:
            check_tail(path)
    return path


def last_line(fh: BinaryIO) -> tuple[int, bytes]:
    """Where the last newline of the open file ``fh`` ends, and the bytes after it (empty when
    the file ends in a newline): a complete row missing its newline, or a torn write.

    Example:
        >>> import io
        >>> last_line(io.BytesIO(b'{"a": 1}\\n{"a": '))
        (9, b'{"a": ')
    """
    size = fh.seek(0, os.SEEK_END)
    pos, keep = size, 0
    while pos > 0:
        start = max(0, pos - TAIL_BLOCK)
        fh.seek(start)
        newline = fh.read(pos - start).rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        pos = start
    fh.seek(keep)
    return keep, fh.read()


def check_tail(path: Path) -> None:
    """Refuse a file whose last line (after its last newline) is not the start of a row: a
    crash cuts a row short (``{"run_id": ...``, which a writer mends by cutting it), but any
    other text means this is not a results file, and mending it would destroy it."""
    with open_regular(path, ResultsError, what="results file") as fh:
        _, tail = last_line(fh)
    if tail.strip() and not tail.lstrip(b"\xef\xbb\xbf \t").startswith(b"{"):
        raise ResultsError(
            f"{shown(path)}: its last line is not a results row; it is not a results file: "
            "choose another --out"
        )
