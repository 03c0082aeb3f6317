"""One rule for every file jevalkit reads and writes (issue 53).

Reading (:func:`open_regular`, :func:`read_file`, :func:`read_text`): a regular file only,
opened without waiting (a FIFO opened to read waits for a writer forever; a device such as
``/dev/zero`` never ends), at most a stated number of bytes when it is read whole, UTF-8 when
it is text; a folder, a FIFO, a device, a socket, a name longer than the system allows, a missing
file or one that cannot be read (``/proc/self/mem``: EIO) is one line naming the file.

Writing (:func:`check_output`, :func:`write_file`): never into a folder, a device, a FIFO or a
socket; a symlink at the target is replaced by the new file, never written through (a link
planted at an output's name cannot make jevalkit overwrite what it points to); the content goes
into a new temporary file in the target's folder, is flushed to disk, then renamed over the
target, so a reader sees the old file or the new one, never part of one, and a crash or a full
disk leaves the old file as it was. A missing parent folder is created; a parent that is a file,
a full disk, a read-only file system or a name too long are one line naming the file.

The one exception to "replace a symlink": a results file, which runs append to through the link
(:func:`open` in append mode follows it) and lock by the file it names, is rewritten where the
link points (``follow_link=True``), so the link and the appends keep naming one file.

Every error is raised as the caller's exception class (``error``), so a results file fails as a
:class:`~jevalkit.errors.ResultsError` and a cascade file as a
:class:`~jevalkit.errors.StatsError`, each one line.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_file(folder / "a.txt", "hello", ValueError).read_text()
    'hello'
    >>> read_text(folder / "a.txt", ValueError, max_bytes=100)
    'hello'
    >>> read_file("/dev/zero", ValueError, max_bytes=10)
    Traceback (most recent call last):
    ...
    ValueError: /dev/zero: not a regular file (a character device); give a file
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "check_name",
    "check_output",
    "kind_of",
    "open_regular",
    "read_file",
    "read_stream",
    "read_text",
    "shown",
    "write_file",
]

MAX_NAME_BYTES = 255  # one name in a path (NAME_MAX on Linux, macOS and Windows alike)
MAX_PATH_BYTES = 4095  # a whole path (PATH_MAX less its terminating NUL)
_SHOWN = 120  # characters of a path shown in a message (an over-long name is cut)

_Error = Callable[[str], Exception]


def _a(what: str) -> str:
    """``what`` with its article: ``a file``, ``an item model``."""
    return ("an " if what[:1] in "aeiou" else "a ") + what


def shown(path: str | Path) -> str:
    """``path`` as a message shows it: whole, or its first and last characters when it is
    longer than 120 (an over-long name would fill the terminal).

    Example:
        >>> shown("runs/" + "x" * 300 + ".jsonl")[:12], len(shown("x" * 300))
        ('runs/xxxxxxx', 120)
    """
    text = str(path)
    if len(text) <= _SHOWN:
        return text
    return text[: _SHOWN // 2 - 1] + "..." + text[-(_SHOWN // 2 - 2) :]


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words.

    Example:
        >>> import os
        >>> kind_of(os.stat("/dev/null").st_mode)
        'a character device'
    """
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def check_name(path: str | Path, error: _Error, *, what: str = "file") -> Path:
    """``path`` as a :class:`~pathlib.Path`, refusing what no file system takes: an empty
    name, a NUL character, a name longer than 255 bytes or a path longer than 4,095 (the system
    would say "File name too long" from deep inside whatever touched it first).

    Example:
        >>> check_name("runs/" + "x" * 300, ValueError)
        Traceback (most recent call last):
        ...
        ValueError: runs/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: a name in this path is 300 bytes long, over the 255 a file system allows; choose a shorter name
    """
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise error(f"{what} name {text!r}: empty; give a path")
    if "\0" in text:
        raise error(f"{shown(text)!r}: a NUL character cannot be in a file name; fix the path")
    try:
        raw = os.fsencode(text)
    except UnicodeError:
        raise error(f"{shown(text)!r}: not a name this system can encode; rename it") from None
    longest = max((len(part) for part in raw.split(b"/")), default=0)
    if longest > MAX_NAME_BYTES:
        raise error(
            f"{shown(text)}: a name in this path is {longest} bytes long, over the "
            f"{MAX_NAME_BYTES} a file system allows; choose a shorter name"
        )
    if len(raw) > MAX_PATH_BYTES:
        raise error(
            f"{shown(text)}: the path is {len(raw)} bytes long, over the {MAX_PATH_BYTES} a "
            "system allows; choose a shorter path"
        )
    return Path(text)


def _oserror(path: Path, exc: OSError, error: _Error, *, doing: str) -> Exception:
    """The one line for an OSError met while ``doing`` something with ``path``."""
    where = shown(path)
    if exc.errno == errno.ENAMETOOLONG:
        return error(f"{where}: the name is too long for this file system; choose a shorter one")
    if exc.errno == errno.ENOTDIR:
        return error(f"{where}: a parent of this path is a file, not a folder; fix the path")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return error(
            f"{where}: cannot {doing}: the disk is full (nothing was written; an earlier file "
            "there is kept): free some space and run the command again"
        )
    if exc.errno == errno.ELOOP:
        return error(f"{where}: a loop of symlinks; fix the path")
    kept = (
        "; nothing was written (an earlier file there is kept)" if doing.startswith("write") else ""
    )
    return error(f"{where}: cannot {doing} ({exc.strerror or type(exc).__name__}){kept}")


def _open_without_waiting(path: Path, error: _Error, what: str) -> int:
    """A descriptor of ``path`` opened to read without blocking (a FIFO's open never waits)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise error(f"{shown(path)}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{shown(path)}: is a folder, not {_a(what)}") from None
    except OSError as exc:
        raise _oserror(path, exc, error, doing="read it") from None


def open_regular(path: str | Path, error: _Error, *, what: str = "file") -> BinaryIO:
    """The regular file at ``path`` opened to read (binary), never waiting: opened without
    blocking and checked on the open descriptor (no race between a check and the open), so a
    FIFO, a device, a folder or a socket is refused at once, one line naming it.

    Example:
        >>> open_regular("/dev/null", ValueError)
        Traceback (most recent call last):
        ...
        ValueError: /dev/null: not a regular file (a character device); give a file
    """
    path = check_name(path, error, what=what)
    fd = _open_without_waiting(path, error, what)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{shown(path)}: is a folder, not {_a(what)}")
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{shown(path)}: not a regular file ({kind_of(info.st_mode)}); give {_a(what)}"
            )
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_file(path: str | Path, error: _Error, *, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` (a larger file, or one
    that grows past it while read, is refused); anything else is one line (see
    :func:`open_regular`), and so is a read the system refuses (``/proc/self/mem``: EIO).

    Example:
        >>> read_file("/proc/self/mem", ValueError, max_bytes=10)
        Traceback (most recent call last):
        ...
        ValueError: /proc/self/mem: cannot read it (Input/output error)
    """
    too_large = f"{shown(path)}: larger than {max_bytes / 2**20:g} MB; not a jevalkit {what}"
    with open_regular(path, error, what=what) as fh:
        if os.fstat(fh.fileno()).st_size > max_bytes:
            raise error(too_large)
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise _oserror(Path(path), exc, error, doing="read it") from None
    if len(data) > max_bytes:
        raise error(too_large)
    return data


def read_stream(path: str | Path, error: _Error, *, max_bytes: int, what: str = "file") -> bytes:
    """At most ``max_bytes + 1`` bytes of a file or a pipe (``jevalkit score --file <(cmd)``
    reads a process substitution as it reads stdin), for an input a user hands over as a
    stream; the caller refuses what is longer than ``max_bytes`` (it knows what the input is).
    A pipe is read only while something writes to it: a FIFO nobody has open for writing is one
    line, never a wait; a folder or an over-long name is one line too.

    Example:
        >>> len(read_stream("/dev/zero", ValueError, max_bytes=10))
        11
    """
    path = check_name(path, error, what=what)
    fd = _open_without_waiting(path, error, what)
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise error(f"{shown(path)}: is a folder, not {_a(what)}")
    with os.fdopen(fd, "rb", buffering=0) as fh:
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                # without a writer a non-blocking read ends at once (EOF); with one that has not
                # written yet it would block: then wait for its output
                try:
                    first = fh.read(max_bytes + 1)
                except BlockingIOError:
                    first = None
                if first == b"":
                    raise error(
                        f"{shown(path)}: a FIFO nothing writes to; pipe the output in "
                        "(--file <(command)) or give a file"
                    )
            else:
                first = None
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            chunks, size = ([first], len(first)) if first else ([], 0)
            while size <= max_bytes and (chunk := fh.read(max_bytes + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
            return b"".join(chunks)
        except OSError as exc:
            raise _oserror(path, exc, error, doing="read it") from None


def read_text(path: str | Path, error: _Error, *, max_bytes: int, what: str = "file") -> str:
    """:func:`read_file` decoded as UTF-8 (a byte-order mark skipped); bytes that are not UTF-8
    are one line naming the byte.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "x.txt"
        >>> _ = p.write_bytes(b"caf\\xe9")
        >>> read_text(p, ValueError, max_bytes=100)
        Traceback (most recent call last):
        ...
        ValueError: .../x.txt: not UTF-8 text (byte 3); save it as UTF-8
    """
    raw = read_file(path, error, max_bytes=max_bytes, what=what)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{shown(path)}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def check_output(
    path: str | Path, error: _Error, *, what: str = "file", follow_link: bool = False
) -> Path:
    """Refuse, before any work is done, a path an output cannot be written to: a folder, a
    device, a FIFO or a socket there (or, with ``follow_link``, where a symlink there points), a
    parent that is a file, an over-long name. A missing file (and missing parent folders) is
    fine: :func:`write_file` creates them. Returns the path.

    Example:
        >>> check_output("/dev/full", ValueError, what="cascade file")
        Traceback (most recent call last):
        ...
        ValueError: /dev/full: not a regular file (a character device); a cascade file is written to a regular file: choose another path
    """
    path = check_name(path, error, what=what)
    for parent in path.absolute().parents:  # the nearest that exists must be a folder
        try:
            if os.path.lexists(parent):
                if not parent.is_dir():
                    raise error(
                        f"{shown(path)}: {shown(parent)} is a file, not a folder; choose "
                        "another path"
                    )
                break
        except OSError as exc:
            raise _oserror(path, exc, error, doing=f"write the {what}") from None
    try:
        info = path.stat() if follow_link else path.lstat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise _oserror(path, exc, error, doing=f"write the {what}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise error(f"{shown(path)}: is a folder; give a file name for the {what}")
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise error(
            f"{shown(path)}: not a regular file ({kind_of(info.st_mode)}); {_a(what)} is "
            "written to a regular file: choose another path"
        )
    return path


def write_file(
    path: str | Path,
    content: bytes | str | Iterable[bytes],
    error: _Error,
    *,
    what: str = "file",
    follow_link: bool = False,
    mode: int = 0o644,
) -> Path:
    """Write ``content`` (bytes, text as UTF-8, or chunks of bytes) to ``path`` as the module
    says: checked (:func:`check_output`), into a new temporary file beside the target, flushed
    to disk, renamed over it; a symlink at ``path`` is replaced, unless ``follow_link`` (a
    results file: written where it points). Returns ``path`` as given.

    Raises:
        ``error``: one line naming the file (the temporary file is removed; an earlier file at
        ``path`` is kept as it was).

    Example:
        >>> import os, tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "precious.txt").write_text("keep")
        >>> os.symlink(folder / "precious.txt", folder / "out.txt")
        >>> _ = write_file(folder / "out.txt", b"new", ValueError)
        >>> (folder / "precious.txt").read_text(), (folder / "out.txt").is_symlink()
        ('keep', False)
    """
    given = check_output(path, error, what=what, follow_link=follow_link)
    target = Path(os.path.realpath(given)) if follow_link else given
    if isinstance(content, str):
        content = content.encode("utf-8")
    chunks = [content] if isinstance(content, bytes | bytearray) else content
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # created new and exclusive (never a link planted at its name), its name short enough
        # beside any target name the file system takes
        fd, name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name[:64]}.", suffix=".tmp"
        )
        tmp = Path(name)
        os.fchmod(fd, mode)  # as a plain open() would make it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _oserror(given, exc, error, doing=f"write the {what}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return given
