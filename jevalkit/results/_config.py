"""The configuration of the run a part file belongs to, written beside it
(``<results>.parts/<shard>.run.json``), so that a merge takes the parts of one run only.

Shards of one run share every field: the model asked, the endpoint, the label, how the run was
split, each probe's (or judge's) version, content hash and parameter hashes, and the planned jobs
(their number and a digest of their row keys). Parts of two runs (another ``--temperature``,
another model, another probe version, other repeats) would otherwise merge into one file whose
metrics pool both.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ResultsError
from ..files import read_file, write_file
from ._bounds import MAX_SHARDS
from ._columns import key_text, shard_of

MAX_CONFIG_BYTES = 16 * 1024 * 1024  # far more than any run's; a larger file is not one
# the fields in the order a difference is looked for (and named), with their names in messages
FIELDS = {
    "model": "model",
    "endpoint": "base_url",
    "label": "label",
    "sharding": "sharding",
    "probes": "probe versions",
    "jobs": "number of planned jobs",
    "plan": "planned jobs",
}


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """The configuration of one run, as every part of it records it.

    Attributes:
        model: the model as asked (``deterministic`` for none).
        endpoint: the endpoint's identity (``local``, or the base URL; None for none).
        label: the run's label.
        sharding: how it was split (``--shard i/4`` is ``"4 shards"``, a Dask run ``"dask"``).
        probes: for each ``id@version`` run, its content hash and its parameter hashes.
        jobs: how many jobs the run planned (every shard's, not one shard's).
        plan: a digest of the planned jobs' row keys.
        keys: how many distinct row keys the planned jobs have (fewer than ``jobs`` when a
            probe was given twice: its key's last answer is kept, as in one process).
        shard_jobs: for a run split by key hash (``--shard i/N``), how many of the planned keys
            each of the N shards holds (empty otherwise): what a merge checks the parts against.

    Example:
        >>> a = RunConfig.of("m", None, None, "2 shards", [("p", 1, "ab", "h0", ("p", 1, 0))])
        >>> b = RunConfig.of("m", None, None, "2 shards", [("p", 1, "ab", "h1", ("p", 1, 0))])
        >>> a.difference(b)
        'params_hash of p@1 is h0 here but h1 there'
    """

    model: str
    endpoint: str | None
    label: str | None
    sharding: str
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: int = 0
    plan: str = ""
    keys: int = 0
    shard_jobs: list[int] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        model: str,
        endpoint: str | None,
        label: str | None,
        sharding: str,
        jobs: Iterable[tuple[str, int, str | None, str, tuple]],
        *,
        shards: int = 0,
    ) -> RunConfig:
        """The configuration of a run of ``jobs``, each ``(probe, version, probe_hash,
        params_hash, row key)``, split into ``shards`` by key hash (0: not split so)."""
        probes: dict[str, dict[str, Any]] = {}
        keys, distinct = [], set()
        shard_jobs = [0] * shards
        for probe, version, probe_hash, digest, key in jobs:
            entry = probes.setdefault(f"{probe}@{version}", {"probe_hash": probe_hash})
            entry.setdefault("params_hash", set()).add(digest)
            keys.append(key_text(key))
            if shards and keys[-1] not in distinct:
                shard_jobs[shard_of(key, shards)] += 1
            distinct.add(keys[-1])
        for entry in probes.values():
            entry["params_hash"] = sorted(entry["params_hash"])
        plan = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16]
        return cls(
            model=model,
            endpoint=endpoint,
            label=label,
            sharding=sharding,
            probes=dict(sorted(probes.items())),
            jobs=len(keys),
            plan=plan,
            keys=len(distinct),
            shard_jobs=shard_jobs,
        )

    def repeats_keys(self) -> bool:
        """Whether the run planned a key more than once (a probe given twice): one part then
        holds several answers to it, the last one kept (True when not recorded)."""
        return self.jobs > self.keys

    def runs(self, row: dict[str, Any]) -> bool:
        """Whether ``row`` is one of this run's jobs' (its model, label, probe version and
        parameters; the case and repeat are not recorded)."""
        entry = self.probes.get(f"{row.get('probe')}@{row.get('version')}")
        return (
            entry is not None
            and row.get("model") == self.model
            and row.get("label") == self.label
            and row.get("params_hash") in entry["params_hash"]
        )

    def difference(self, other: RunConfig, there: str = "there") -> str | None:
        """The first field in which ``other`` differs, in words (this one's value "here", the
        other's ``there``); None when they are one run's."""
        for name, words in FIELDS.items():
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine == theirs:
                continue
            if name == "probes":
                return _probe_difference(mine, theirs, there)
            if name == "plan":
                return "planned jobs differ (the same number, other cases, variants or repeats)"
            return f"{words} is {_shown(mine)} here but {_shown(theirs)} {there}"
        return None

    def write(self, part: Path) -> None:
        """Record this configuration beside ``part`` (atomically)."""
        text = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        write_file(config_path(part), text + "\n", ResultsError, what="run configuration")

    @classmethod
    def read(cls, part: Path) -> RunConfig | None:
        """The configuration recorded beside ``part``; None when none is."""
        path = config_path(part)
        if not os.path.lexists(path):
            return None
        # a FIFO or a device in its place is refused, never waited on or read without end
        text = read_file(path, ResultsError, max_bytes=MAX_CONFIG_BYTES, what="run configuration")
        try:
            config = cls(**json.loads(text))
            if not config._well_formed():
                raise ValueError("a field of the wrong type")
        except (ValueError, TypeError, RecursionError):
            raise ResultsError(
                f"{path}: not a run configuration jevalkit wrote; move the part and it away, "
                "or delete both and run that shard again"
            ) from None
        if (problem := config._bad_count()) is not None:
            raise ResultsError(
                f"{path}: {problem}: not a run configuration jevalkit wrote; move the part and "
                "it away, or delete both and run that shard again"
            )
        return config

    def _bad_count(self) -> str | None:
        """What is wrong with the counts (each bounded: jobs and keys from 0, at most as many
        keys as jobs, up to :data:`MAX_SHARDS` shards each holding from 0 jobs, the shards'
        jobs adding up to the keys), or None."""
        if self.jobs < 0 or self.keys < 0 or self.keys > self.jobs:
            return f"jobs {self.jobs} and keys {self.keys} must be 0 <= keys <= jobs"
        if len(self.shard_jobs) > MAX_SHARDS:
            return f"{len(self.shard_jobs):,} shards, over the {MAX_SHARDS:,} a run may have"
        if any(n < 0 for n in self.shard_jobs):
            return f"a shard holds a negative number of jobs ({min(self.shard_jobs)})"
        if self.shard_jobs and sum(self.shard_jobs) != self.keys:
            return f"the shards hold {sum(self.shard_jobs)} jobs, not the run's {self.keys} keys"
        return None

    def _well_formed(self) -> bool:
        optional = (str, type(None))
        return (
            isinstance(self.model, str)
            and isinstance(self.endpoint, optional)
            and isinstance(self.label, optional)
            and isinstance(self.sharding, str)
            and isinstance(self.jobs, int)
            and isinstance(self.plan, str)
            and isinstance(self.keys, int)
            and isinstance(self.shard_jobs, list)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in self.shard_jobs)
            and isinstance(self.probes, dict)
            and all(
                isinstance(v, dict)
                and isinstance(v.get("probe_hash"), optional)
                and isinstance(v.get("params_hash"), list)
                for v in self.probes.values()
            )
        )


def config_path(part: Path) -> Path:
    """Where the configuration of ``part`` is kept.

    Example:
        >>> config_path(Path("r.jsonl.parts/3.jsonl"))
        PosixPath('r.jsonl.parts/3.run.json')
    """
    return part.with_name(f"{part.stem}.run.json")


def check_one_run(
    parts: list[Path], mine: RunConfig | None = None, at: Path | None = None
) -> RunConfig | None:
    """Refuse parts of different runs, naming the part and the field: the configuration of each
    part against the first one recorded (and against ``mine``, the configuration of a run about
    to write ``at``). A part without a configuration (written by hand, or by an older jevalkit)
    is refused beside parts that have one; when none has one there is nothing to compare.
    Returns the run's configuration (``mine``, else the parts'; None when none is recorded).

    Raises:
        ResultsError: one line naming the part, the other part and the field.
    """
    configs = {part: RunConfig.read(part) for part in parts}
    if mine is not None and at is not None:
        if at.exists() and at not in configs:  # this run's own part: compared when it has one
            own = RunConfig.read(at)
            if own is not None:
                configs[at] = own
        first, reference = at, mine
    else:
        known = [(p, c) for p, c in configs.items() if c is not None]
        if not known:
            return None
        first, reference = known[0]
    for part, config in configs.items():
        if config is None:
            raise ResultsError(
                f"{part}: no run configuration beside it ({config_path(part).name}), while "
                f"{first} has one: it was not written by this run's shards; move it away, or "
                "run its shard again with the run's options"
            )
        there = "in this run" if mine is not None else f"in {first.name}"
        difference = config.difference(reference, there)
        if difference is not None:
            if mine is not None:
                raise ResultsError(
                    f"{part} is not a shard of this run: {difference}; the shards of one run "
                    "share its options: give this shard the other shards' options, or write "
                    "this run to another --out"
                )
            raise ResultsError(
                f"{part} is not a shard of the run of {first}: {difference}; a merge takes the "
                "parts of one run only: run this shard again with the run's options, or move "
                "the part away"
            )
    return reference


def check_rows_one_run(parts: dict[Path, Iterable[dict[str, Any]]]) -> None:
    """Refuse parts of different runs by what their rows say, for parts that record no
    configuration (written by hand, or by an older jevalkit): every part's rows must name the
    same model, base URL and label, and a probe version the same content hash.

    Raises:
        ResultsError: one line naming the part, the first part and the field.

    Example:
        >>> rows = {Path("0.jsonl"): [{"model": "m"}], Path("1.jsonl"): [{"model": "n"}]}
        >>> try:
        ...     check_rows_one_run(rows)
        ... except ResultsError as exc:
        ...     print(str(exc).split(";")[0])
        1.jsonl is not a shard of the run of 0.jsonl: model is n here but m in 0.jsonl
    """
    first, reference = None, None
    for part, rows in parts.items():
        said = _rows_said(rows)
        if reference is None:
            first, reference = part, said
            continue
        assert first is not None
        difference = _said_difference(said, reference, f"in {first.name}")
        if difference is not None:
            raise ResultsError(
                f"{part} is not a shard of the run of {first}: {difference}; a merge takes the "
                "parts of one run only: run this shard again with the run's options, or move "
                "the part away"
            )


def _rows_said(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    said: dict[str, Any] = {name: set() for name in ("model", "base_url", "label")}
    hashes: dict[str, set] = {}
    for row in rows:
        for name in ("model", "base_url", "label"):
            said[name].add(row.get(name))
        if row.get("probe_hash") is not None:
            hashes.setdefault(f"{row.get('probe')}@{row.get('version')}", set()).add(
                row["probe_hash"]
            )
    return {**{k: sorted(v, key=str) for k, v in said.items()}, "hashes": hashes}


def _said_difference(mine: dict[str, Any], theirs: dict[str, Any], there: str) -> str | None:
    for name in ("model", "base_url", "label"):
        if mine[name] != theirs[name]:
            return f"{name} is {_shown(mine[name])} here but {_shown(theirs[name])} {there}"
    for probe in sorted(set(mine["hashes"]) & set(theirs["hashes"])):
        if mine["hashes"][probe] != theirs["hashes"][probe]:
            return (
                f"content (sha256) of {probe} is {_shown(sorted(mine['hashes'][probe]))} here "
                f"but {_shown(sorted(theirs['hashes'][probe]))} {there}"
            )
    return None


def remove_config(part: Path) -> None:
    """Remove the configuration of ``part`` (once the part is merged)."""
    config_path(part).unlink(missing_ok=True)


def _probe_difference(mine: dict[str, Any], theirs: dict[str, Any], there: str) -> str:
    if set(mine) != set(theirs):
        return (
            f"probe versions are {', '.join(sorted(mine)) or 'none'} here but "
            f"{', '.join(sorted(theirs)) or 'none'} {there}"
        )
    for name in sorted(mine):
        for key, words in (("params_hash", "params_hash"), ("probe_hash", "content (sha256)")):
            if mine[name].get(key) != theirs[name].get(key):
                return (
                    f"{words} of {name} is {_shown(mine[name].get(key))} here but "
                    f"{_shown(theirs[name].get(key))} {there}"
                )
    return "probe versions differ"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_shown(v) for v in value) or "none"
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12]  # a sha256, as the rows' probe_hash is shown elsewhere
    return "none" if value is None else str(value)
