"""Shards: a run's jobs split by a stable hash of their row key, each shard written to a part
file of its own beside the results file (``<results>.parts/<shard>.jsonl``, the results layer's
:func:`~jevalkit.results.part_path`), and :class:`ShardExecutor`, the strategy that runs one.

The hash is sha256 of the key's JSON, so every process (a Slurm array task, a Kubernetes indexed
job) puts a job in the same shard without talking to the others (:func:`shard_of`). On Dask the
driver splits the run itself (:func:`guided_shards`): jobs in the order of that hash, in shards
that shrink towards the end of the run, so the workers finish together.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from ..errors import UsageError
from ..results import (
    MAX_SHARDS,
    RunConfig,
    check_one_run,
    key_hash,
    key_text,
    part_files,
    part_path,
    shard_of,
)
from ._execute import Executor

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
GUIDED_SHARE = 2  # each shard holds at most 1/(GUIDED_SHARE x threads) of the jobs still unsplit


def guided_shards(keys: list[tuple], threads: int, smallest: int) -> list[list[int]]:
    """Split jobs (given by their row keys) for ``threads`` worker threads: the positions of
    ``keys`` in each shard, jobs in the order of :func:`key_hash` (models and cases mixed in
    every shard), shards shrinking from 1/(2 x threads) of the jobs to ``smallest`` jobs
    (guided self-scheduling). Equal shards leave one worker idle while the other finishes its
    last shard; shrinking ones keep both busy until the last few jobs. The jobs of one key
    (a probe given twice) share a shard, as :func:`shard_of` puts them in one.

    Example:
        >>> keys = [("p", 1, None, "m", "ab", None, None, None, None, r) for r in range(100)]
        >>> shards = guided_shards(keys, threads=2, smallest=8)
        >>> [len(s) for s in shards]
        [25, 19, 14, 11, 8, 8, 8, 7]
        >>> sorted(i for s in shards for i in s) == list(range(100))
        True
    """
    texts = [key_text(key) for key in keys]
    # by hash, then by the key itself: the jobs of one key (given twice) lie side by side
    order = sorted(range(len(keys)), key=lambda i: (key_hash(keys[i]), texts[i]))
    shards, start = [], 0
    while start < len(order):
        size = max(smallest, math.ceil((len(order) - start) / (GUIDED_SHARE * max(1, threads))))
        end = min(start + size, len(order))
        # never split one key over two shards: two parts would hold two answers to it
        while end < len(order) and texts[order[end]] == texts[order[end - 1]]:
            end += 1
        shards.append(order[start:end])
        start = end
    return shards


def parse_shard(value: str | tuple[int, int]) -> tuple[int, int]:
    """``"i/N"`` (or ``(i, N)``) as ``(i, N)``, refusing a shard outside 0 to N-1.

    Example:
        >>> parse_shard("1/4")
        (1, 4)
        >>> parse_shard("4/4")
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: --shard '4/4': the shard index must be from 0 to 3 (shards are numbered from 0), e.g. --shard 0/4
    """
    if isinstance(value, tuple) and len(value) == 2:
        index, count = value
    else:
        match = _SHARD.match(str(value))
        if match is None:
            raise UsageError(f"--shard {value!r} is not INDEX/COUNT, e.g. --shard 0/4")
        index, count = int(match[1]), int(match[2])
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (index, count)):
        raise UsageError(f"--shard {value!r}: index and count must be whole numbers")
    if not 1 <= count <= MAX_SHARDS:
        raise UsageError(f"--shard {value!r}: the count must be from 1 to {MAX_SHARDS:,}")
    if not 0 <= index < count:
        raise UsageError(
            f"--shard {value!r}: the shard index must be from 0 to {count - 1} "
            f"(shards are numbered from 0), e.g. --shard 0/{count}"
        )
    return index, count


class ShardExecutor(Executor):
    """Shard ``index`` of ``count`` (``--shard i/N``, for Slurm job arrays and Kubernetes indexed
    jobs, no engine): the jobs whose key hashes to it (:func:`shard_of`), sent in this process
    into ``<results>.parts/<index>.jsonl``; keys already in the results file or in another part
    are done. Merge the parts with :func:`jevalkit.results.merge_parts` (``jevalkit merge``).

    Example:
        >>> shard = ShardExecutor(1, 4)
        >>> shard.store(Path("runs/r.jsonl")), shard.describe("requests")
        (PosixPath('runs/r.jsonl.parts/1.jsonl'), 'requests (shard 1/4)')
    """

    def __init__(self, index: int, count: int) -> None:
        self.index, self.count = parse_shard((index, count))
        self.sharding, self.shards = f"{self.count} shards", self.count

    def store(self, path: Path) -> Path:
        """This shard's part file."""
        return part_path(path, self.index)

    def beside(self, path: Path) -> list[Path]:
        """The results file and the other shards' parts."""
        mine = self.store(path)
        return [path, *(p for p in part_files(path) if p != mine)]

    def takes(self, key: tuple) -> bool:
        """Whether ``key`` hashes to this shard."""
        return shard_of(key, self.count) == self.index

    def describe(self, description: str) -> str:
        """The label, with the shard."""
        return f"{description} (shard {self.index}/{self.count})"

    def prepare(self, path: Path, store: Path, config: RunConfig | None) -> None:
        """Refuse to write into parts of another run (the other shards' or this one's own,
        naming the part and the field), then record this run's configuration beside the part."""
        assert config is not None  # a sharded run records its configuration
        others = [p for p in part_files(path) if p != store]
        check_one_run(others, mine=config, at=store)
        config.write(store)
