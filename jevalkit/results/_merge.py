"""The checked merge: part files of a sharded run into the one results file.

Every key ends up exactly once. A key found in two places must hold the same row there (a merge
interrupted after writing the results file left its parts behind: re-running it finds the same
rows and finishes), except that a part's row replaces an error row of the results file (an error
sent again with ``retry_errors``, answered or failed again). Any other duplicate is two different answers to one request:
the merge refuses it and changes nothing. The merged file is written atomically and made durable
(the file and its folder fsynced) before any part file is removed.

The parts must be shards of one run: each records its run's configuration beside it
(:class:`~jevalkit.results.RunConfig`), and parts of different runs (another model, base URL,
probe version, ``params_hash``, other planned jobs) are refused naming the part and the field,
before anything is written. The parts of a run split by ``--shard i/N`` must hold every job
it planned (``_complete.py``; rows merged before count): a missing or
stopped shard is refused saying how many shards and jobs there are, unless the merge
is ``partial`` (then every part is kept). Two different answers to one key inside one part are
refused as across parts. A part whose last line is torn (a write a crash interrupted) is said
so (``torn``) and kept: its complete rows are merged, and it is removed only by a later merge,
once its shard has run again (resuming, it mends the line and sends that request again).

Every row is read and checked once; its line is copied unchanged (not written again from the
parsed row), and two lines of one key are compared as bytes first, as rows only when they
differ (the same row written with other spacing is the same row). A line edited by hand into a
shape other readers split or refuse (a carriage return, surrounding blanks) is written anew.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Any

from ..errors import ResultsError
from ._complete import Completeness, completeness
from ._config import check_one_run, check_rows_one_run, remove_config
from ._json import json_row
from ._lock import locked
from ._parts import PartsReader, part_files, parts_dir
from ._path import check_results_path
from ._read import iter_lines, keyed_lines, latest_lines, latest_rows, torn_bytes
from ._write import fsync_folder, write_lines

MERGE_COLUMNS = ["part", "rows", "new", "replaced_errors", "already_merged", "torn", "kept"]


def merge_parts(
    results: str | Path, *, hold_lock: bool = True, partial: bool = False
) -> list[dict[str, Any]]:
    """Merge the part files beside ``results`` into it and remove them; return one dict per part
    (:data:`MERGE_COLUMNS`: its rows, those new, those replacing error rows, those merged
    already, ``torn``, the bytes of a torn last line, and ``kept``: a torn part, or every part
    of a partial merge, stays). ``hold_lock`` False: the caller already holds the results lock.

    The parts of a run split by ``--shard i/N`` must hold every job it planned (with the rows
    the results file holds already): a shard without a part, or one that stopped early, is
    refused saying how many shards and jobs there are. ``partial`` merges them anyway, warns
    with the same counts, and keeps every part, for the complete merge once the rest has run.

    Raises:
        ResultsError: no part files, a part being written by a run, parts of different runs (the
            message names the part and the field), a conflicting duplicate across parts or
            inside one part (the message names the part, the line, the key and the fix), an
            incomplete set of shards (without ``partial``), a parts folder that is a symbolic
            link, or a write the disk refused (the results file and the parts are then
            unchanged).

    Example:
        >>> import tempfile, pathlib
        >>> from jevalkit.results import ResultRow
        >>> results = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> parts = results.with_name("r.jsonl.parts"); parts.mkdir()
        >>> row = ResultRow(run_id="a", kind="probe", probe="p", version=1, model="m", repeat=0)
        >>> _ = (parts / "0.jsonl").write_text(row.to_json() + "\\n")
        >>> [r["new"] for r in merge_parts(results)], parts.exists(), len(results.read_text().splitlines())
        ([1], False, 1)
    """
    return merge_rows(results, hold_lock=hold_lock, partial=partial)[0]


def merge_rows(
    results: str | Path,
    *,
    hold_lock: bool = True,
    reader: PartsReader | None = None,
    partial: bool = False,
) -> tuple[list[dict[str, Any]], dict[tuple, dict[str, Any]]]:
    """:func:`merge_parts`, also returning the merged file's rows by key (as
    :func:`latest_rows` would read them back), for a caller that wants them without reading the
    file again; the rows ``reader`` read while the parts were written are not parsed again.

    Example:
        >>> import tempfile, pathlib
        >>> from jevalkit.results import ResultRow
        >>> results = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
        >>> parts = results.with_name("r.jsonl.parts"); parts.mkdir()
        >>> row = ResultRow(run_id="a", kind="probe", probe="p", version=1, model="m", repeat=0)
        >>> _ = (parts / "0.jsonl").write_text(row.to_json() + "\\n")
        >>> reader = PartsReader(results); reader.poll(); reader.counts()["rows"]
        1.0
        >>> report, rows = merge_rows(results, reader=reader)
        >>> [r["new"] for r in report], [key[-1] for key in rows]
        ([1], [0])
    """
    path = check_results_path(results, writing=True)
    parts = part_files(path)
    if not parts:
        raise ResultsError(
            f"{path}: no part files in {parts_dir(path)} to merge; run the shards first "
            f"(`jevalkit run ... --shard i/N --out {path}`)"
        )
    with contextlib.ExitStack() as stack:
        if hold_lock:
            stack.enter_context(locked(path))
        for part in parts:
            stack.enter_context(locked(part))
        config = check_one_run(parts)
        base, _ = latest_lines(path) if path.exists() else ({}, 0)
        merged = dict(base)
        origin = dict.fromkeys(base, path)
        report = []
        read = {}
        for part in parts:
            read[part], _ = keyed_lines(
                reader.lines(part) if reader is not None else iter_lines(part),
                part,
                one_run=True,
                repeated=config is None or config.repeats_keys(),
            )
        if config is None:  # no part records its run: what the rows say of it
            check_rows_one_run({p: (row for row, _ in lines.values()) for p, lines in read.items()})
        for part in parts:
            lines = read[part]
            counts: dict[str, Any] = {
                "part": str(part),
                "rows": len(lines),
                "new": 0,
                "replaced_errors": 0,
            }
            counts["already_merged"] = 0
            counts["torn"] = torn_bytes(part)
            for key, (row, line) in lines.items():
                old = merged.get(key)
                if old is None:
                    counts["new"] += 1
                elif old[1] == line or old[0] == row:
                    counts["already_merged"] += 1
                    continue
                elif origin[key] == path and old[0].get("error"):  # a retried error row
                    counts["replaced_errors"] += 1
                else:
                    raise ResultsError(
                        f"{part}: the row of key {key} differs from the one in {origin[key]}: "
                        "the same request was answered twice; nothing was merged. Keep one of "
                        "the two rows (delete the other line) and run `jevalkit merge` again"
                    )
                merged[key] = (row, line)
                origin[key] = part
            report.append(counts)
        torn = {part for part, counts in zip(parts, report, strict=True) if counts["torn"]}
        rows = {key: row for key, (row, _) in merged.items()}
        incomplete = completeness(config, parts, rows, torn)
        if incomplete is not None and not partial:
            raise ResultsError(
                f"{path}: the parts hold {incomplete.words()}; nothing was merged. Run the "
                f"missing shards (the shards' command with `--shard I/{incomplete.shards}`; a "
                "shard resumes) and merge again, or merge what there is with `jevalkit merge "
                "--partial` (the parts are then kept)"
            )
        write_lines(path, (_clean(row, line) for row, line in merged.values()))
        fsync_folder(path.parent)
        done = [] if incomplete is not None else [p for p in parts if p not in torn]
        for counts in report:
            counts["kept"] = Path(counts["part"]) not in done
        if incomplete is not None:
            warnings.warn(
                f"{path}: a partial merge of {incomplete.words()}; the part files are kept: "
                "run the rest, then `jevalkit merge` again",
                stacklevel=3,
            )
        for part in done:
            part.unlink()
    for part in done:
        remove_config(part)
        part.with_name(f".{part.name}.lock").unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        parts_dir(path).rmdir()
    return report, rows


def partial_merge(results: str | Path) -> Completeness | None:
    """How much of a sharded run the results file holds while its parts are still beside it
    (``jevalkit merge --partial`` keeps them; so does a run whose shards are still running):
    the planned jobs and those with a row in the file, by shard. None when no part is there,
    the parts record no split by key hash, or every planned job has a row; a damaged parts
    folder says nothing here (``jevalkit merge`` names what is wrong with it).

    Example:
        >>> import tempfile, pathlib
        >>> partial_merge(pathlib.Path(tempfile.mkdtemp()) / "r.jsonl") is None
        True
    """
    path = Path(results)
    try:
        parts = part_files(path)
        if not parts:
            return None
        config = check_one_run(parts)
        rows = latest_rows(path).rows if path.exists() else {}
    except ResultsError:
        return None
    return completeness(config, parts, rows)


def _clean(row: dict[str, Any], line: bytes) -> bytes:
    """The line to write for ``row``: its own bytes, unless it was edited by hand into a shape
    other readers split or refuse (a carriage return, surrounding blanks): then the row anew."""
    if b"\r" in line or line != line.strip():
        return json_row(row)
    return line
