"""The parts of a sharded run: part files beside the results file
(``<results>.parts/<shard>.jsonl``), each written by one shard, and a reader of their rows while
the shards write them."""

from __future__ import annotations

import contextlib
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ResultsError
from ._path import check_results_path
from ._read import lines_in, read_bytes

Line = tuple[int, bytes, dict[str, Any]]  # (line number, the line's bytes, the row)
COUNTS = ("rows", "errors", "usd")  # what PartsReader counts for the progress bar


def parts_dir(results: str | Path) -> Path:
    """The folder holding the part files of ``results``.

    Example:
        >>> parts_dir("runs/r.jsonl")
        PosixPath('runs/r.jsonl.parts')
    """
    results = Path(results)
    return results.with_name(results.name + ".parts")


def part_path(results: str | Path, shard: int) -> Path:
    """The part file of one shard of ``results``.

    Example:
        >>> part_path("runs/r.jsonl", 3)
        PosixPath('runs/r.jsonl.parts/3.jsonl')
    """
    return parts_dir(results) / f"{shard}.jsonl"


def part_files(results: str | Path) -> list[Path]:
    """The part files beside ``results``, in shard order (empty when there are none); a parts
    folder or a part file that is a symbolic link is refused (the merge deletes what it merged).

    Example:
        >>> import tempfile, pathlib
        >>> results = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> parts_dir(results).mkdir()
        >>> for name in ("10.jsonl", "2.jsonl", "notes.txt"):
        ...     _ = (parts_dir(results) / name).write_text("")
        >>> [p.name for p in part_files(results)]
        ['2.jsonl', '10.jsonl']
    """
    folder = parts_dir(results)
    if folder.is_symlink():
        raise ResultsError(
            f"{folder} is a symbolic link (to {os.readlink(folder)}): part files are written and "
            "deleted in it, so it must be a folder of its own; replace the link with a folder"
        )
    if not folder.is_dir():
        return []
    found = [p for p in folder.glob("*.jsonl") if p.stem.isdigit()]
    for part in found:
        if part.is_symlink():
            raise ResultsError(
                f"{part} is a symbolic link (to {os.readlink(part)}): a part file is read and "
                "deleted by the merge, so it must be the shard's own file; remove the link"
            )
    return sorted(found, key=lambda p: int(p.stem))


@dataclass
class _Part:
    """What :class:`PartsReader` read of one part: its inode, its first ``size`` bytes (kept as
    their CRC-32, not a copy) holding ``n_lines`` lines, their rows, and the progress counts.
    The CRC detects a part changed under the reader (by accident; the part files are the run's
    own), at a fifth of a cryptographic digest's cost on the run's hundreds of megabytes."""

    inode: int
    size: int = 0
    crc: int = 0
    n_lines: int = 0
    lines: list[Line] = field(default_factory=list)
    counts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0.0))
    broken: bool = False  # a line that is not a row: left to the merge, which names it


class PartsReader:
    """The rows of a run's part files, read while the workers write them (each line parsed once,
    a line only once it ends in a newline): :meth:`counts` for the progress bar, and
    :func:`merge_rows` takes them instead of parsing the parts again, after checking that each
    part still begins with the very bytes they were read from (else it reads the part anew).

    Example:
        >>> import tempfile, pathlib
        >>> results = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> reader = PartsReader(results); reader.poll(); reader.counts()
        {'rows': 0, 'errors': 0, 'usd': 0}
    """

    def __init__(self, results: Path) -> None:
        self.results = results
        self._parts: dict[Path, _Part] = {}

    def poll(self) -> None:
        """Read what the workers appended to each part since the last poll."""
        for part in part_files(self.results):
            with contextlib.suppress(OSError, ResultsError):
                self._read(part)

    def counts(self) -> dict[str, float]:
        """``{"rows", "errors", "usd"}`` over the rows read so far."""
        return {k: sum(p.counts[k] for p in self._parts.values()) for k in COUNTS}

    def _read(self, part: Path) -> None:
        info = part.stat()
        state = self._parts.get(part)
        if state is None or state.inode != info.st_ino or info.st_size < state.size:
            state = self._parts[part] = _Part(info.st_ino)  # new, replaced or cut: anew
        if state.broken:
            return
        data = read_bytes(part, state.size)
        chunk = data[: data.rfind(b"\n") + 1]
        if not chunk:
            return
        try:
            new = list(lines_in(chunk, part, first=state.n_lines + 1, final=False))
        except ResultsError:
            state.broken = True
            return
        state.crc = zlib.crc32(chunk, state.crc)
        state.size += len(chunk)
        state.n_lines += chunk.count(b"\n")
        state.lines.extend(new)
        for _, _, row in new:
            state.counts["rows"] += 1
            state.counts["errors"] += bool(row.get("error"))
            cost = row.get("cost_usd")
            state.counts["usd"] += cost if isinstance(cost, int | float) else 0.0

    def lines(self, part: Path) -> list[Line]:
        """Every row of ``part`` now, as :func:`iter_lines` reads them: those read before (when
        the part still begins with their bytes) and the rest, parsed now."""
        data = read_bytes(check_results_path(part))
        state = self._parts.get(part) or _Part(0)
        size = state.size
        if size and zlib.crc32(memoryview(data)[:size]) != state.crc:
            return list(lines_in(data, part))  # changed since it was read: read it anew
        return [*state.lines, *lines_in(data[size:], part, first=state.n_lines + 1)]
