"""Find, read and validate probe files: ``data/probes/<probe-id>/v<N>.yaml``."""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs
import pandas as pd

from .._paths import probes_dir
from ..datafiles import load_yaml, schema_validator, validate_data, version_files
from ..datafiles import parse_ref as parse_data_ref
from ..errors import ProbeError, ScoringError
from ..scorers import compile_schema
from ._cases import Case, cases_from_list, read_case_file
from ._consistency import check_consistency
from ._lock import LOCK_NAME, content_hash, read_lock, verify
from ._model import Probe, probe_from_dict

FORMATS = {1: "probe_format.schema.json", 2: "probe_format_v2.schema.json"}


@cache
def _format_validator(version: int = 1) -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath(FORMATS[version]).read_text("utf-8")
    return schema_validator(json.loads(text))


def validate_probe_data(raw: Any, source: Path | str) -> None:
    """Check a parsed probe file against its probe format (``format: 2`` for cases and
    variants; no ``format`` is format 1); raise one line naming file and field.

    Example:
        >>> validate_probe_data({"id": "x"}, "x/v1.yaml")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: x/v1.yaml: <top level>: "version" is a required property (see the probe format in jevalkit/probes/probe_format.schema.json)
    """
    version = raw.get("format", 1) if isinstance(raw, dict) else 1
    if isinstance(version, bool) or version not in FORMATS:
        raise ProbeError(
            f"{source}: format: {version!r} is not a probe format this jevalkit reads "
            f"({', '.join(map(str, FORMATS))}); upgrade jevalkit or fix the field"
        )
    if version == 1 and isinstance(raw, dict) and {"cases", "variants"} & raw.keys():
        raise ProbeError(
            f"{source}: cases and variants need probe format 2: add `format: 2` at the top"
        )
    if version == 2 and isinstance(raw, dict):
        _check_one_prompt_style(raw, source)
    validate_data(
        raw,
        _format_validator(version),
        source,
        ProbeError,
        f" (see the probe format in jevalkit/probes/{FORMATS[version]})",
    )
    if raw["scoring"]["type"] == "json_schema" and "schema" in raw["scoring"]:
        try:
            compile_schema(raw["scoring"]["schema"])
        except ScoringError as exc:
            raise ProbeError(f"{source}: scoring.{exc}") from None


def _check_one_prompt_style(raw: dict[str, Any], source: Path | str) -> None:
    """Exactly one of ``messages`` (chat) and ``prompt`` (completion) in the probe, and each
    variant in the probe's style (the format schema's ``oneOf`` says this in unreadable lines)."""
    has = [k for k in ("messages", "prompt") if k in raw]
    if len(has) != 1:
        raise ProbeError(
            f"{source}: <top level>: has {'both' if has else 'neither'} of `messages` and "
            "`prompt`: give `messages` (a chat prompt) or `prompt` (completion-style text a base "
            "model continues)"
        )
    variants = raw.get("variants")
    for i, v in enumerate(variants if isinstance(variants, list) else ()):
        if isinstance(v, dict) and [k for k in ("messages", "prompt") if k in v] != has:
            raise ProbeError(
                f"{source}: variants[{v.get('id', i)}]: the probe gives `{has[0]}`, so each "
                f"variant gives `{has[0]}` (and nothing else) too"
            )


def read_probe_file(path: Path, lock: dict[str, str] | None = None) -> Probe:
    """Load one probe file, validate it, and check it against the lock.

    Raises:
        ProbeError: unreadable YAML, a format violation, a file name that disagrees with its
            ``id`` / ``version``, or content that no longer matches its published hash.
    """
    raw = load_yaml(path, ProbeError)
    validate_probe_data(raw, path)
    if path.parent.name != raw["id"] or path.name != f"v{raw['version']}.yaml":
        raise ProbeError(
            f"{path}: id {raw['id']!r} and version {raw['version']} must match the file's place "
            f"<probes folder>/{raw['id']}/v{raw['version']}.yaml; rename the file or fix the fields"
        )
    cases: tuple[Case, ...] = ()
    cases_sha256 = None
    hashed = raw
    source: Path | str = path
    if isinstance(raw.get("cases"), str):
        cases, cases_sha256 = read_case_file(path.parent / raw["cases"], folder=path.parent)
        # the case file's bytes are part of the published content
        hashed = {**raw, "cases": {"file": raw["cases"], "sha256": cases_sha256}}
        source = f"{path} (with its case file {raw['cases']})"
    elif raw.get("cases") is not None:
        cases = cases_from_list(raw["cases"], str(path))
    digest = content_hash(hashed)
    lock = read_lock(path.parent.parent / LOCK_NAME) if lock is None else lock
    verify(f"{raw['id']}@{raw['version']}", digest, lock, source)
    probe = probe_from_dict(raw, digest, path, cases, cases_sha256)
    check_consistency(probe, path)
    return probe


def parse_ref(ref: str) -> tuple[str, int | None]:
    """Split ``"id@N"`` into ``("id", N)``; ``"id"`` gives ``("id", None)`` (latest): the one
    rule of :func:`jevalkit.datafiles.parse_ref`, judges' too.

    Example:
        >>> parse_ref("schema-ten-records@2")
        ('schema-ten-records', 2)
    """
    return parse_data_ref(ref, "probe", ProbeError)


def _versions(folder: Path) -> dict[int, Path]:
    return version_files(folder, ProbeError)


PROBES_ENV = "JEVALKIT_PROBES"


def probe_roots() -> list[Path]:
    """Where probes are looked up: the folders in ``$JEVALKIT_PROBES`` (separated by
    ``os.pathsep``), then the bundled probes.

    Example:
        >>> probe_roots()[-1].name
        'probes'
    """
    extra = [Path(p) for p in os.environ.get(PROBES_ENV, "").split(os.pathsep) if p.strip()]
    return [*extra, probes_dir()]


def load_probe(ref: str, *, root: Path | None = None) -> Probe:
    """Load a probe by name: ``"schema-ten-records@2"``, or ``"schema-ten-records"`` for the latest.

    Probes are looked up in ``root`` when given, else in the folders of ``$JEVALKIT_PROBES``
    and the bundled probes (:func:`probe_roots`); an id in two of them is refused.

    Example:
        >>> import jevalkit
        >>> jevalkit.load_probe("schema-ten-records").version
        4
        >>> jevalkit.load_probe("no-such-probe")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: unknown probe 'no-such-probe'; known probes: contact-extraction, ... (see `jevalkit probes list`)
    """
    roots = [root] if root is not None else probe_roots()
    probe_id, version = parse_ref(ref)
    found = [(r, v) for r in roots if (v := _versions(r / probe_id))]
    if len(found) > 1:
        where = " and ".join(str(r) for r, _ in found)
        raise ProbeError(
            f"probe {probe_id!r} is in both {where}; rename one (probe ids must be unique)"
        )
    if not found:
        names = {p.name for r in roots if r.is_dir() for p in r.iterdir() if p.is_dir()}
        known = ", ".join(sorted(names)) or "none"
        raise ProbeError(
            f"unknown probe {probe_id!r}; known probes: {known} (see `jevalkit probes list`)"
        )
    versions = found[0][1]
    if version is None:
        version = max(versions)
    if version not in versions:
        have = ", ".join(f"@{v}" for v in sorted(versions))
        raise ProbeError(f"probe {probe_id!r} has no version {version}; published: {have}")
    return read_probe_file(versions[version])


def probe_files(root: Path | None = None) -> list[Path]:
    """Every ``<id>/v<N>.yaml`` under the probes folder, sorted by id then version."""
    root = probes_dir() if root is None else root
    if not root.is_dir():
        raise ProbeError(f"{root}: no such probes folder; give an existing folder")
    files = [f for d in sorted(root.iterdir()) if d.is_dir() for f in _versions(d).values()]
    return sorted(files, key=lambda f: (f.parent.name, int(f.stem[1:])))


def list_probes(*, root: Path | None = None) -> pd.DataFrame:
    """One row per probe version: ``probe`` (id@version), ``id``, ``version``, ``title``,
    ``scoring``, ``n_examples``, ``n_cases`` (0: a single prompt), ``n_variants`` (declared
    paraphrases besides the probe's own wording), ``latest``, ``published`` (recorded in its
    folder's lock), ``folder`` (where it was found), ``sha256``. The probes of ``root``, else
    of every folder :func:`load_probe` looks in (``$JEVALKIT_PROBES``, then the bundled ones).

    Example:
        >>> import jevalkit
        >>> table = jevalkit.list_probes().set_index("probe")
        >>> table.loc["unit-conversion@1", ["n_cases", "n_variants"]].tolist()
        [40, 0]
    """
    rows = []
    for folder in [root] if root is not None else probe_roots():
        lock = read_lock(folder / LOCK_NAME)
        probes = [read_probe_file(f, lock) for f in probe_files(folder)]
        latest: dict[str, int] = {}
        for p in probes:
            latest[p.id] = max(latest.get(p.id, 0), p.version)
        rows += [
            {
                "probe": p.name,
                "id": p.id,
                "version": p.version,
                "title": p.title,
                "scoring": p.scoring["type"],
                "n_examples": len(p.examples),
                "n_cases": len(p.cases),
                "n_variants": len(p.variants),
                "latest": p.version == latest[p.id],
                "published": p.name in lock,
                "folder": str(folder),
                "sha256": p.content_hash,
            }
            for p in probes
        ]
    columns = ["probe", "id", "version", "title", "scoring", "n_examples", "n_cases", "n_variants"]
    columns += ["latest", "published", "folder"]
    return pd.DataFrame(rows, columns=[*columns, "sha256"])
