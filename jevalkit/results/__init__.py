"""The results layer: the results file and frame that every analysis stands on.

One row per key (:data:`KEY_COLUMNS`), the columns defined once (:class:`ResultRow`,
:data:`COLUMNS`, :data:`DTYPES`); each row checked against the results format when read
(:func:`validate_row`); strict reading with the latest row per key (:func:`read_results`,
:func:`iter_rows`); durable writing (:class:`ResultsWriter` appends from many tasks,
:func:`write_rows` rewrites atomically) under one writer's lock (:func:`locked`); the part files of
a sharded run, each with its run's configuration (:class:`RunConfig`), and their checked merge
(:func:`merge_parts`); and :func:`system_of`, the system a
row belongs to. The runner writes through this package; io, metrics, labels, items, reports and
widgets read through it and never import the runner. It imports nothing of jevalkit but
``errors``, ``datafiles`` and ``files``; every count a file can set has its bound here
(:data:`MAX_REPEATS`, :data:`MAX_SHARDS`).

Example:
    >>> from jevalkit.results import COLUMNS
    >>> COLUMNS[:4]
    ['run_id', 'kind', 'probe', 'version']
"""

from ._bounds import MAX_REPEATS, MAX_SHARDS, check_count
from ._columns import (
    COLUMNS,
    DTYPES,
    KEY_COLUMNS,
    ResultRow,
    key_hash,
    key_order,
    key_text,
    params_hash,
    row_key,
    shard_of,
)
from ._config import RunConfig, check_one_run, config_path
from ._frame import read_results, results_frame, rows_frame, system_of
from ._json import finite, json_ready, json_row
from ._lock import locked
from ._merge import MERGE_COLUMNS, merge_parts, merge_rows, partial_merge
from ._parts import PartsReader, part_files, part_path, parts_dir
from ._path import check_results_path
from ._read import LatestRows, iter_lines, iter_rows, latest_rows, torn_bytes
from ._validate import validate_row
from ._write import ResultsWriter, repair_torn_tail, rewrite_without, write_rows

__all__ = [
    "COLUMNS",
    "DTYPES",
    "KEY_COLUMNS",
    "MAX_REPEATS",
    "MAX_SHARDS",
    "MERGE_COLUMNS",
    "LatestRows",
    "PartsReader",
    "ResultRow",
    "ResultsWriter",
    "RunConfig",
    "check_count",
    "check_one_run",
    "check_results_path",
    "config_path",
    "finite",
    "iter_lines",
    "iter_rows",
    "json_ready",
    "json_row",
    "key_hash",
    "key_order",
    "key_text",
    "latest_rows",
    "locked",
    "merge_parts",
    "merge_rows",
    "params_hash",
    "part_files",
    "part_path",
    "partial_merge",
    "parts_dir",
    "read_results",
    "repair_torn_tail",
    "results_frame",
    "rewrite_without",
    "row_key",
    "rows_frame",
    "shard_of",
    "system_of",
    "torn_bytes",
    "validate_row",
    "write_rows",
]
