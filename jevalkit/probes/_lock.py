"""Content hashes of published probe versions (``probes.lock``).

A published version is immutable: its sha256 over a canonical JSON form of the file's content is
recorded once, and a file that no longer matches it is refused. Changing a probe means publishing
the next version.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import ProbeError

LOCK_NAME = "probes.lock"
_HEADER = (
    "# jevalkit probe lock: one published probe version per line, `id@version sha256:<hex>`.\n"
    "# Published versions are immutable. Never edit a line: publish the next version instead\n"
    "# (copy vN.yaml to vN+1.yaml, change it, run `jevalkit probes lock`).\n"
)


def content_hash(raw: Any) -> str:
    """sha256 of the canonical JSON form (sorted keys, no spaces, UTF-8) of a probe's content.

    Formatting, comments and key order in the YAML file do not change it; any change of content does.

    Example:
        >>> content_hash({"b": 1, "a": [1, 2]}) == content_hash({"a": [1, 2], "b": 1})
        True
        >>> content_hash({"a": 1})[:12]
        '015abd7f5cc5'
    """
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def read_lock(path: Path) -> dict[str, str]:
    """Read ``probes.lock`` into ``{"id@version": hexdigest}`` (missing file: empty).

    Example:
        >>> from jevalkit._paths import probes_dir
        >>> "schema-ten-records@2" in read_lock(probes_dir() / LOCK_NAME)
        True
    """
    if not path.exists():
        return {}
    entries: dict[str, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].startswith("sha256:"):
            raise ProbeError(f"{path}:{lineno}: expected `id@version sha256:<hex>`, got {line!r}")
        entries[parts[0]] = parts[1].removeprefix("sha256:")
    return entries


def write_lock(path: Path, entries: dict[str, str]) -> None:
    """Write ``entries`` to ``path`` atomically (sorted, one per line)."""
    body = _HEADER + "".join(
        f"{name} sha256:{digest}\n" for name, digest in sorted(entries.items())
    )
    tmp = path.with_suffix(".lock.tmp")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, path)


def verify(name: str, digest: str, lock: dict[str, str], source: Path | str) -> bool:
    """Return whether ``name`` is published; raise if its content differs from the recorded hash.

    Example:
        >>> verify("p@1", "aa", {"p@1": "aa"}, "p/v1.yaml")
        True
        >>> verify("p@1", "bb", {"p@1": "aa"}, "p/v1.yaml")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: p/v1.yaml: content changed since p@1 was published (sha256 aa, now bb); published versions are immutable: restore the file and publish the change as the next version
    """
    recorded = lock.get(name)
    if recorded is None:
        return False
    if recorded != digest:
        raise ProbeError(
            f"{source}: content changed since {name} was published (sha256 {recorded[:12]}, "
            f"now {digest[:12]}); published versions are immutable: restore the file and "
            "publish the change as the next version"
        )
    return True
