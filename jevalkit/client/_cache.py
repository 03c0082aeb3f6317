"""An on-disk, content-addressed response cache with atomic writes and corruption detection.

Each entry is one JSON file named by the sha256 of its key. The file stores the key and a sha256 of
the response it holds; an entry whose checksum or key does not match (a torn write, a disk error, a
hand edit) is treated as missing and fetched again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..jsontext import content_hash


def default_cache_dir() -> Path:
    """``$JEVALKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/jevalkit`` (``~/.cache/jevalkit``).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"JEVALKIT_CACHE_DIR": "/tmp/jk-cache"}):
        ...     print(default_cache_dir())
        /tmp/jk-cache
    """
    override = os.environ.get("JEVALKIT_CACHE_DIR")
    if override:
        return Path(override)
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "jevalkit"


def cache_key(**parts: Any) -> str:
    """A sha256 over the canonical JSON of everything that determines a response.

    Example:
        >>> cache_key(model="m", repeat=0) == cache_key(repeat=0, model="m")
        True
        >>> cache_key(model="m", repeat=0) == cache_key(model="m", repeat=1)
        False
    """
    return content_hash(parts)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses by key, one file per entry under ``root/<2 hex>/<key>.json``.

    Example:
        >>> import tempfile
        >>> cache = ResponseCache(tempfile.mkdtemp())
        >>> key = cache_key(model="m", repeat=0)
        >>> cache.put(key, {"choices": []})
        >>> cache.get(key)
        {'choices': []}
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None when missing or corrupt (a corrupt file is removed)."""
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry["key"] == key and entry["sha256"] == _digest(entry["response"]):
                return entry["response"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        path.unlink(missing_ok=True)
        return None

    def put(self, key: str, response: dict[str, Any]) -> None:
        """Store ``response`` atomically (write a temporary file, then rename over)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"key": key, "sha256": _digest(response), "response": response}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh)  # ASCII: a lone surrogate in a response stays writable
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
