"""Zip members, read safely: inspect_ai writes its ``.eval`` archives with zstd members, which
Python's ``zipfile`` cannot inflate before 3.14, and a hostile archive can inflate a few
megabytes into gigabytes. Each member is inflated (stored, deflate or zstd) up to a cap and
checked against its CRC; anything else is one line naming the archive and the member.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import zstandard

from ..errors import ImportFormatError
from ..files import open_regular

ZSTD = 93  # the zip method number of Zstandard (APPNOTE 4.4.5)
MAX_INFLATED_BYTES = 256 * 1024**2
_LOCAL_HEADER = struct.Struct("<4s22xHH")


def is_zip(path: str | Path) -> bool:
    """Whether the regular file at ``path`` is a zip archive (by its end record, as
    :func:`zipfile.is_zipfile` tells it; opened by the one reader rule, never waiting on a FIFO).

    Example:
        >>> is_zip("/dev/zero")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: /dev/zero: not a regular file (a character device); give a file
    """
    with open_regular(path, ImportFormatError) as fh:
        try:
            return zipfile.is_zipfile(fh)
        except OSError as exc:
            raise ImportFormatError(f"{path}: cannot read it ({exc.strerror})") from None


def check_archive(path: Path, *, limit: int = MAX_INFLATED_BYTES) -> list[zipfile.ZipInfo]:
    """The members of the zip archive ``path``; refused when it is damaged, encrypted, or a
    member declares more than ``limit`` bytes inflated.

    Example:
        >>> import tempfile, zipfile
        >>> p = Path(tempfile.mkdtemp()) / "a.zip"
        >>> with zipfile.ZipFile(p, "w") as z:
        ...     z.writestr("x.json", "{}")
        >>> [m.filename for m in check_archive(p)]
        ['x.json']
        >>> check_archive(p, limit=1)
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: .../a.zip: x.json inflates to 2 bytes, more than the 1 jevalkit reads (a zip bomb, or a log too large to read in memory)
    """
    try:
        with (
            open_regular(path, ImportFormatError, what="archive") as fh,
            zipfile.ZipFile(fh) as archive,
        ):
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ImportFormatError(f"{path}: not a readable zip archive ({exc})") from None
    for info in members:
        if info.flag_bits & 0x1:
            raise ImportFormatError(f"{path}: {info.filename} is encrypted")
        if info.file_size > limit:
            raise ImportFormatError(
                f"{path}: {info.filename} inflates to {info.file_size:,} bytes, more than the "
                f"{limit:,} jevalkit reads (a zip bomb, or a log too large to read in memory)"
            )
    return members


def read_zip_member(path: str | Path, name: str, *, limit: int = MAX_INFLATED_BYTES) -> bytes:
    """The member ``name`` of the zip archive ``path``, inflated, at most ``limit`` bytes.

    Raises:
        ImportFormatError: no such member, a damaged or truncated archive, an unknown
            compression method, a CRC mismatch, or more than ``limit`` bytes inflated.

    Example:
        >>> import tempfile, zipfile
        >>> p = Path(tempfile.mkdtemp()) / "a.zip"
        >>> with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        ...     z.writestr("x.json", '{"a": 1}')
        >>> read_zip_member(p, "x.json")
        b'{"a": 1}'
    """
    path = Path(path)
    members = {m.filename: m for m in check_archive(path, limit=limit)}
    info = members.get(name)
    if info is None:
        raise ImportFormatError(f"{path}: no member {name!r} in the archive")
    where = f"{path}: {name}"
    try:
        with open_regular(path, ImportFormatError, what="archive") as fh:
            fh.seek(info.header_offset)
            head = fh.read(_LOCAL_HEADER.size)
            if len(head) < _LOCAL_HEADER.size:
                raise ImportFormatError(f"{where}: the archive is truncated")
            magic, name_len, extra_len = _LOCAL_HEADER.unpack(head)
            if magic != b"PK\x03\x04":
                raise ImportFormatError(f"{where}: damaged archive (no local header)")
            fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
            raw = fh.read(info.compress_size)
    except OSError as exc:
        raise ImportFormatError(f"{where}: cannot be read ({exc})") from None
    if len(raw) < info.compress_size:
        raise ImportFormatError(f"{where}: the archive is truncated")
    data = _inflate(raw, info.compress_type, min(limit, info.file_size), where)
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise ImportFormatError(f"{where}: damaged (size or CRC does not match the archive)")
    return data


def _inflate(raw: bytes, method: int, limit: int, where: str) -> bytes:
    try:
        if method == zipfile.ZIP_STORED:
            return raw[: limit + 1]
        if method == zipfile.ZIP_DEFLATED:
            return zlib.decompressobj(-15).decompress(raw, limit + 1)
        if method == ZSTD:
            with zstandard.ZstdDecompressor().stream_reader(raw) as reader:
                chunks, size = [], 0
                while size <= limit:
                    chunk = reader.read(min(1 << 20, limit + 1 - size))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                return b"".join(chunks)
    except (zlib.error, zstandard.ZstdError) as exc:
        raise ImportFormatError(f"{where}: damaged compressed data ({exc})") from None
    raise ImportFormatError(
        f"{where}: compression method {method} is not one jevalkit reads (stored, deflate, zstd)"
    )
