"""Whether the parts of a run split by key hash (``--shard i/N``) hold every job it planned.

Each part records the run's configuration, and with it how many of the planned jobs each of the
N shards holds (:attr:`~jevalkit.results.RunConfig.shard_jobs`). A job is done when the merged
file would hold a row of its key: the row's model, label, probe version and parameters are the
run's, and its key hashes to the shard (:func:`~jevalkit.results.shard_of`). Rows merged before
(a shard run again after a complete merge) count, so a merge never asks for a shard whose rows
are already in the results file. The case and the repeat of each planned job are not recorded:
rows of this very configuration beyond the plan (an earlier run with more repeats into the same
file) count as done too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._columns import shard_of
from ._config import RunConfig


@dataclass(frozen=True)
class Completeness:
    """How much of a sharded run the parts and the results file hold.

    Attributes:
        shards: the shards planned (N of ``--shard i/N``).
        complete: the shards all of whose planned jobs have rows.
        jobs: the jobs planned.
        done: the planned jobs that have rows.
        missing: one phrase per incomplete shard (its part missing, or stopped early).

    Example:
        >>> c = Completeness(3, 2, 6, 4, ("shard 1 has no part file (1.jsonl)",))
        >>> c.words()
        '2 of the 3 planned shards (4 of the 6 planned jobs): shard 1 has no part file (1.jsonl)'
    """

    shards: int
    complete: int
    jobs: int
    done: int
    missing: tuple[str, ...]

    def words(self) -> str:
        """The counts and the incomplete shards, in one phrase (at most three named)."""
        named = "; ".join(self.missing[:3])
        more = f"; and {len(self.missing) - 3} more" if len(self.missing) > 3 else ""
        return (
            f"{self.complete} of the {self.shards} planned shards ({self.done:,} of the "
            f"{self.jobs:,} planned jobs): {named}{more}"
        )


def completeness(
    config: RunConfig | None,
    parts: Iterable[Path],
    rows: dict[tuple, dict[str, Any]],
    torn: Collection[Path] = (),
) -> Completeness | None:
    """How much of the run of ``config`` the merged ``rows`` (by key) hold, the part files being
    ``parts``; None when the run was not split by key hash (a Dask run, or parts an older
    jevalkit wrote) or every shard is complete but those whose part is ``torn`` (a crash: the
    merge says so and keeps the part until its shard has run again).

    Example:
        >>> config = RunConfig.of("m", None, None, "2 shards", [("p", 1, None, "h", ("p", 1, None, None, "m", "h", None, None, None, None, r)) for r in range(4)], shards=2)
        >>> rows = [{"probe": "p", "version": 1, "model": "m", "params_hash": "h", "repeat": r} for r in range(4)]
        >>> from jevalkit.results import row_key
        >>> rows = {row_key(row): row for row in rows}
        >>> completeness(config, [], rows) is None
        True
        >>> completeness(config, [], dict(list(rows.items())[:1])).done
        1
    """
    if config is None or not config.shard_jobs:
        return None
    planned = config.shard_jobs
    count = len(planned)
    have = [0] * count
    for key, row in rows.items():
        if config.runs(row):
            have[shard_of(key, count)] += 1
    present = {int(p.stem): p for p in parts}
    done = [min(h, n) for h, n in zip(have, planned, strict=True)]
    missing = []
    for shard, (ran, jobs) in enumerate(zip(done, planned, strict=True)):
        part = present.get(shard)
        if ran == jobs or part in torn:
            continue
        if part is None:
            missing.append(f"shard {shard} has no part file ({shard}.jsonl)")
        else:
            missing.append(
                f"shard {shard} ran {ran:,} of its {jobs:,} planned jobs ({part.name} stopped "
                "early)"
            )
    if not missing:
        return None
    complete = sum(ran == jobs for ran, jobs in zip(done, planned, strict=True))
    return Completeness(count, complete, sum(planned), sum(done), tuple(missing))
