"""A folder of inspect_ai logs, shards included: each merged log or its shards, never both.

inspect_ai writes a sharded eval's per-worker logs to ``<name>.shards/<k>/`` beside the merged
log ``<name>.eval`` that ``inspect log merge-shards`` writes from them; a shard directory may
hold several attempts of its shard (a retry, a ``-recovered`` copy), of which the last is the
current one. The same samples are in a merged log and in its shards, so reading both would
count every sample twice. The rule, which inspect_ai's own listing follows too (a finished
merged log hides the shards it covers):

- a merged log whose status is ``success`` and whose ledger (``eval.shards``) names the current
  attempt of every shard is read, and its shards are not;
- otherwise (no merged log, one not finished, or one a later attempt outdates) the current
  attempt of each shard is read, and the merged log is not (a warning names it when it exists);
- of a shard's attempts only the current one is read; every other log is read as it is.

A merged log is told by its ledger, not its name: one saved under another name (``cp``, a
download) is still the merge of the shards its ledger names. Two merged logs of the same shards
are refused in one line naming both (reading both would count every sample twice).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..errors import ImportFormatError
from ._zip import read_zip_member

SHARDS_SUFFIX = ".shards"
RECOVERED = "-recovered"


@dataclass(frozen=True)
class FolderLogs:
    """What a folder of logs reads: ``logs`` in order, and what it leaves out with why."""

    logs: tuple[Path, ...]
    left_out: tuple[tuple[Path, str], ...]


def _attempt_key(path: Path) -> tuple[str, bool, float]:
    # inspect_ai's order: the {created} timestamp the name starts with, then a -recovered copy
    # after its original, then the modification time
    stem = path.name.removesuffix(".eval")
    return stem.split("_", 1)[0], stem.endswith(RECOVERED), path.stat().st_mtime


def _header(path: Path) -> dict:
    try:
        header = json.loads(read_zip_member(path, "header.json"))
    except (ValueError, RecursionError) as exc:
        raise ImportFormatError(f"{path}: header.json: not JSON ({str(exc)[:120]})") from None
    if not isinstance(header, dict):
        raise ImportFormatError(f"{path}: header.json: not an object")
    return header


def _ledger(path: Path) -> set[str]:
    """The shard log names a merged log's ledger (``eval.shards``) records; empty for another
    log (or one whose header is unreadable: reading it says why)."""
    try:
        header = _header(path)
    except (ImportFormatError, OSError, KeyError, ValueError):
        return set()
    spec = s if isinstance(s := header.get("eval"), dict) else {}
    shards = s if isinstance(s := spec.get("shards"), dict) else {}
    ledger = s if isinstance(s := shards.get("ledger"), list) else []
    return {str(e.get("log")) for e in ledger if isinstance(e, dict) and e.get("log")}


def _merged_log(
    shards_dir: Path, by_shard: dict[str, list[Path]], plain: list[Path]
) -> Path | None:
    """The merged log of the shards in ``shards_dir``: a log whose ledger names one of their
    logs (whatever its file name), else ``<name>-recovered.eval`` or ``<name>.eval`` beside the
    shards. Two logs whose ledgers name these shards are the same run: refused."""
    names = {p.name for paths in by_shard.values() for p in paths}
    claims = [p for p in plain if _ledger(p) & names]
    if len(claims) > 1:
        raise ImportFormatError(
            f"{' and '.join(str(p) for p in claims)} are the same run (each merges the shards "
            f"in {shards_dir}): keep one of them, or give the log files to read"
        )
    if claims:
        return claims[0]
    base = shards_dir.name.removesuffix(SHARDS_SUFFIX)
    candidates = [
        shards_dir.parent / f"{base}{RECOVERED}.eval",
        shards_dir.parent / f"{base}.eval",
    ]
    return next((c for c in candidates if c in plain), None)


def _covers(merged: Path, current: dict[str, Path]) -> str | None:
    """None when ``merged`` is a finished merge of exactly these current attempts, else why not."""
    header = _header(merged)
    spec = s if isinstance(s := header.get("eval"), dict) else {}
    shards = s if isinstance(s := spec.get("shards"), dict) else None
    if header.get("status") != "success":
        return f"its status is {header.get('status')!r}, not 'success'"
    if shards is None or not isinstance(shards.get("ledger"), list):
        return "it records no shards (eval.shards), so it is not their merge"
    ledger = {str(e.get("shard")): e.get("log") for e in shards["ledger"] if isinstance(e, dict)}
    for k, attempt in sorted(current.items()):
        if ledger.get(k) != attempt.name:
            return f"shard {k}'s current attempt {attempt.name} is not the one it merged"
    return None


def folder_logs(folder: Path) -> FolderLogs:
    """The inspect_ai ``.eval`` logs under ``folder`` to read (see the module docstring).

    Raises:
        ImportFormatError: the folder holds no ``.eval`` log, or two merged logs of the same
            shards (the same run).

    Example:
        >>> import pathlib, tempfile
        >>> folder_logs(pathlib.Path(tempfile.mkdtemp()))
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: ...: no inspect_ai .eval logs in this folder (a folder is read as inspect_ai logs, shards included); give the log files instead
    """
    found = sorted(
        p
        for p in folder.rglob("*.eval")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    if not found:
        raise ImportFormatError(
            f"{folder}: no inspect_ai .eval logs in this folder (a folder is read as inspect_ai "
            "logs, shards included); give the log files instead"
        )
    sets: dict[Path, dict[str, list[Path]]] = {}
    plain: list[Path] = []
    for path in found:
        companion = path.parent.parent
        if companion.name.endswith(SHARDS_SUFFIX) and companion.name != SHARDS_SUFFIX:
            sets.setdefault(companion, {}).setdefault(path.parent.name, []).append(path)
        else:
            plain.append(path)
    logs: list[Path] = []
    left_out: list[tuple[Path, str]] = []
    merged_used: set[Path] = set()
    skipped_merged: set[Path] = set()
    for shards_dir, by_shard in sorted(sets.items()):
        current = {k: max(paths, key=_attempt_key) for k, paths in by_shard.items()}
        for k, paths in by_shard.items():
            left_out += [(p, f"an earlier attempt of shard {k}") for p in paths if p != current[k]]
        merged = _merged_log(shards_dir, by_shard, plain)
        why = _covers(merged, current) if merged is not None else "no merged log"
        if merged is not None and why is None:
            merged_used.add(merged)
            left_out += [(p, f"merged into {merged.name}") for p in current.values()]
            continue
        logs += [current[k] for k in sorted(current, key=lambda k: (not k.isdigit(), k.zfill(12)))]
        if merged is not None:
            skipped_merged.add(merged)
            left_out.append((merged, f"its shards were read instead: {why}"))
            warnings.warn(
                f"{merged}: read its shards instead of this merged log ({why})", stacklevel=3
            )
    logs = [p for p in plain if p not in skipped_merged] + logs
    return FolderLogs(tuple(logs), tuple(left_out))
