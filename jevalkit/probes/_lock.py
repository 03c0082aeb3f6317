"""Content hashes of published probe versions (``probes.lock``).

A published version is immutable: its sha256 over a canonical JSON form of the file's content is
recorded once, and a file that no longer matches it is refused. Changing a probe means publishing
the next version.
"""

from __future__ import annotations

from pathlib import Path

from .. import datafiles
from ..errors import ProbeError
from ..jsontext import content_hash

LOCK_NAME = "probes.lock"

__all__ = ["LOCK_NAME", "content_hash", "read_lock", "verify", "write_lock"]


def read_lock(path: Path) -> dict[str, str]:
    """Read ``probes.lock`` into ``{"id@version": hexdigest}`` (missing file: empty).

    Example:
        >>> import jevalkit
        >>> bundled = jevalkit.load_probe("schema-ten-records").path.parents[1]
        >>> "schema-ten-records@2" in read_lock(bundled / LOCK_NAME)
        True
    """
    return datafiles.read_lock(path, ProbeError)


def write_lock(path: Path, entries: dict[str, str]) -> None:
    """Write ``entries`` to ``path`` atomically (sorted, one per line)."""
    datafiles.write_lock(path, entries, what="probe", command="probes", error=ProbeError)


def verify(name: str, digest: str, lock: dict[str, str], source: Path | str) -> bool:
    """Return whether ``name`` is published; raise :class:`ProbeError` if its content differs
    from the recorded hash."""
    return datafiles.verify_locked(name, digest, lock, source, ProbeError)
