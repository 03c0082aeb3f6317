"""The resume rule, one for every way a run executes (in this process, one shard, on Dask).

A job is done when a row of its key is already in the file the run writes (its *store*: the
results file, or a shard's part file) or in a file beside it that the run only reads (a shard's
results file and the other shards' parts). Before anything is skipped the rows are checked: a row
of these jobs written against another endpoint, or from other probe content under the same
version, refuses the run (resuming would mix them). With ``retry_errors`` an error row is not
done: one in the store is taken out of it (the retried row replaces it, not a second line); one
beside it is left for the merge, which lets a part's row replace an error row of the results file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..errors import ResultsError
from ..results import KEY_COLUMNS, latest_rows, rewrite_without, row_key
from ._job import Job
from ._target import row_endpoint

Rows = dict[tuple, dict]
Beside = dict[tuple, tuple[Path, dict]]  # key -> (the file holding it, its row)


def rows_beside(paths: Sequence[Path], keys: Sequence[tuple], *, retry_errors: bool) -> Beside:
    """The done rows of ``keys`` in the read-only ``paths``, each with the file it is in (the
    latest row of each key, later files winning); with ``retry_errors`` error rows are not done.

    Example:
        >>> rows_beside([Path("/nonexistent.jsonl")], [("p",)], retry_errors=False)
        {}
    """
    wanted, done = set(keys), {}
    for path in paths:
        if path.exists():
            rows, _ = latest_rows(path)
            done.update({k: (path, v) for k, v in rows.items() if k in wanted})
    if retry_errors:
        done = {k: (p, v) for k, (p, v) in done.items() if not v.get("error")}
    return done


def resume_rows(
    store: Path,
    jobs: Sequence[Job],
    keys: Sequence[tuple],
    endpoint: str | None,
    *,
    retry_errors: bool,
    beside: Beside | None = None,
) -> Rows:
    """The rows of ``keys`` (the keys of ``jobs``) already done: those of ``store`` (call it
    holding ``store``'s lock) and ``beside`` (as :func:`rows_beside` read them), after refusing
    rows written against another endpoint or from other content; with ``retry_errors`` the error
    rows of ``store`` are taken out of it so that they are sent again."""
    existing, _ = latest_rows(store) if store.exists() else ({}, 0)
    wanted = set(keys)
    mine = {k: v for k, v in existing.items() if k in wanted}
    beside = beside or {}
    done = {**{k: row for k, (_, row) in beside.items()}, **mine}
    where = {**{k: path for k, (path, _) in beside.items()}, **dict.fromkeys(mine, store)}
    _check_same_endpoint(done, where, store, endpoint)
    _check_same_content(done, where, store, jobs, keys)
    if retry_errors:
        failed = {k for k, row in mine.items() if row.get("error")}
        if failed:
            rewrite_without(store, failed)
            done = {k: v for k, v in done.items() if k not in failed}
    return done


def rows_of(results: pd.DataFrame, keys: Sequence[tuple]) -> pd.DataFrame:
    """The rows of ``results`` whose key is one of ``keys`` (an invocation's own rows), in the
    order of ``results``.

    Example:
        >>> frame = pd.DataFrame([{c: None for c in KEY_COLUMNS} | {"repeat": r} for r in (0, 1)])
        >>> rows_of(frame, [row_key({"repeat": 1})])["repeat"].tolist()
        [1]
    """
    wanted = set(keys)
    # the key columns only: converting every column of large rows to dicts costs far more
    records = results[list(KEY_COLUMNS)].to_dict("records")
    return results[[row_key(r) in wanted for r in records]]


def _check_same_endpoint(
    done: Rows, where: dict[tuple, Path], store: Path, endpoint: str | None
) -> None:
    if endpoint is None:
        return
    for key, row in done.items():
        theirs = row_endpoint(row)
        if theirs is not None and theirs != endpoint:
            raise ResultsError(
                f"{where.get(key, store)} holds rows of this run written against {theirs}, not "
                f"{endpoint}; resuming would mix endpoints: write this run to another file with --out"
            )


def _check_same_content(
    done: Rows, where: dict[tuple, Path], store: Path, jobs: Sequence[Job], keys: Sequence[tuple]
) -> None:
    """Refuse to resume over rows of the same probe version written from other content (an
    unpublished probe or case file edited in place): kept and new rows would answer different
    prompts under one name."""
    for job, key in zip(jobs, keys, strict=True):
        theirs = done.get(key, {}).get("probe_hash")
        if theirs is not None and job.probe_hash is not None and theirs != job.probe_hash:
            raise ResultsError(
                f"{where.get(key, store)} holds rows of {job.probe}@{job.version} written from "
                f"other content (sha256 {theirs[:12]}, now {job.probe_hash[:12]}): the probe or "
                "its case file changed without a new version; publish the change as the next "
                "version, or write this run to another file with --out"
            )
