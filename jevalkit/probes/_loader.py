"""Find, read and validate probe files: ``data/probes/<probe-id>/v<N>.yaml``."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs
import pandas as pd

from .._paths import probes_dir
from ..datafiles import load_yaml, schema_validator, validate_data
from ..errors import ProbeError, ScoringError
from ..scorers import compile_schema
from ._lock import LOCK_NAME, content_hash, read_lock, verify
from ._model import Probe, probe_from_dict

_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.yaml$")
_REF = re.compile(r"^([a-z0-9][a-z0-9-]*)(?:@([1-9][0-9]*))?$")


@cache
def _format_validator() -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath("probe_format.schema.json").read_text("utf-8")
    return schema_validator(json.loads(text))


def validate_probe_data(raw: Any, source: Path | str) -> None:
    """Check a parsed probe file against the probe format; raise one line naming file and field.

    Example:
        >>> validate_probe_data({"id": "x"}, "x/v1.yaml")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: x/v1.yaml: <top level>: "version" is a required property (see the probe format in jevalkit/probes/probe_format.schema.json)
    """
    validate_data(
        raw,
        _format_validator(),
        source,
        ProbeError,
        " (see the probe format in jevalkit/probes/probe_format.schema.json)",
    )
    if raw["scoring"]["type"] == "json_schema":
        try:
            compile_schema(raw["scoring"]["schema"])
        except ScoringError as exc:
            raise ProbeError(f"{source}: scoring.{exc}") from None


def read_probe_file(path: Path, lock: dict[str, str] | None = None) -> Probe:
    """Load one probe file, validate it, and check it against the lock.

    Raises:
        ProbeError: unreadable YAML, a format violation, a file name that disagrees with its
            ``id`` / ``version``, or content that no longer matches its published hash.
    """
    raw = load_yaml(path, ProbeError)
    validate_probe_data(raw, path)
    match = _VERSION_FILE.match(path.name)
    if path.parent.name != raw["id"] or not match or int(match.group(1)) != raw["version"]:
        raise ProbeError(
            f"{path}: id {raw['id']!r} and version {raw['version']} must match the file's place "
            f"data/probes/{raw['id']}/v{raw['version']}.yaml; rename the file or fix the fields"
        )
    digest = content_hash(raw)
    lock = read_lock(path.parent.parent / LOCK_NAME) if lock is None else lock
    verify(f"{raw['id']}@{raw['version']}", digest, lock, path)
    return probe_from_dict(raw, digest, path)


def parse_ref(ref: str) -> tuple[str, int | None]:
    """Split ``"id@N"`` into ``("id", N)``; ``"id"`` gives ``("id", None)`` (latest).

    Example:
        >>> parse_ref("schema-ten-records@2")
        ('schema-ten-records', 2)
    """
    m = _REF.match(ref.strip())
    if not m:
        raise ProbeError(f"probe {ref!r}: expected `probe-id` or `probe-id@N` (N a version number)")
    return m.group(1), int(m.group(2)) if m.group(2) else None


def _versions(folder: Path) -> dict[int, Path]:
    out = {}
    for f in folder.glob("v*.yaml"):
        m = _VERSION_FILE.match(f.name)
        if m:
            out[int(m.group(1))] = f
    return out


def load_probe(ref: str, *, root: Path | None = None) -> Probe:
    """Load a probe by name: ``"schema-ten-records@2"``, or ``"schema-ten-records"`` for the latest.

    Example:
        >>> import jevalkit
        >>> jevalkit.load_probe("schema-ten-records").version
        2
        >>> jevalkit.load_probe("no-such-probe")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: unknown probe 'no-such-probe'; known probes: schema-ten-records (see `jevalkit probes list`)
    """
    root = probes_dir() if root is None else root
    probe_id, version = parse_ref(ref)
    versions = _versions(root / probe_id)
    if not versions:
        known = ", ".join(sorted(p.name for p in root.iterdir() if p.is_dir())) or "none"
        raise ProbeError(
            f"unknown probe {probe_id!r}; known probes: {known} (see `jevalkit probes list`)"
        )
    if version is None:
        version = max(versions)
    if version not in versions:
        have = ", ".join(f"@{v}" for v in sorted(versions))
        raise ProbeError(f"probe {probe_id!r} has no version {version}; published: {have}")
    return read_probe_file(versions[version])


def probe_files(root: Path | None = None) -> list[Path]:
    """Every ``<id>/v<N>.yaml`` under the probes folder, sorted by id then version."""
    root = probes_dir() if root is None else root
    files = [f for d in sorted(root.iterdir()) if d.is_dir() for f in _versions(d).values()]
    return sorted(files, key=lambda f: (f.parent.name, int(_VERSION_FILE.match(f.name).group(1))))


def list_probes(*, root: Path | None = None) -> pd.DataFrame:
    """One row per probe version: ``probe`` (id@version), ``id``, ``version``, ``title``,
    ``scoring``, ``n_examples``, ``latest``, ``published`` (recorded in the lock), ``sha256``.

    Example:
        >>> import jevalkit
        >>> jevalkit.list_probes().loc[0, "probe"]
        'schema-ten-records@2'
    """
    root = probes_dir() if root is None else root
    lock = read_lock(root / LOCK_NAME)
    probes = [read_probe_file(f, lock) for f in probe_files(root)]
    latest = {}
    for p in probes:
        latest[p.id] = max(latest.get(p.id, 0), p.version)
    rows = [
        {
            "probe": p.name,
            "id": p.id,
            "version": p.version,
            "title": p.title,
            "scoring": p.scoring["type"],
            "n_examples": len(p.examples),
            "latest": p.version == latest[p.id],
            "published": p.name in lock,
            "sha256": p.content_hash,
        }
        for p in probes
    ]
    columns = ["probe", "id", "version", "title", "scoring", "n_examples", "latest", "published"]
    return pd.DataFrame(rows, columns=[*columns, "sha256"])
