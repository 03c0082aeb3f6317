"""The results layer: the results file and frame that every analysis stands on.

One row per key (:data:`KEY_COLUMNS`), the columns defined once (:class:`ResultRow`,
:data:`COLUMNS`, :data:`DTYPES`); each row checked against the results format when read
(:func:`validate_row`); strict reading with the latest row per key (:func:`read_results`,
:func:`iter_rows`); durable writing (:class:`ResultsWriter` appends from many tasks,
:func:`write_rows` rewrites atomically) under one writer's lock (:func:`locked`); the part files of
a sharded run, each with its run's configuration (:class:`RunConfig`), and their checked merge
(:func:`merge_parts`); :func:`system_of`, the system a row belongs to; facts about rows
(:func:`scored`, :func:`truncated`, :func:`error_summary`, :func:`error_share`,
:func:`has_repeats`, :func:`combine_runs`); results objects (:class:`Result`, the base of
every answer that is more than a table, and :class:`RowsResult`, rows with facts beside them,
read as a results frame wherever one is taken: :func:`rows_of`); and the design protocol
(:class:`Design`). The runner writes through this package; io, metrics, labels, items,
reports and widgets read through it and never import the runner. It imports nothing of
jevalkit but ``errors``, ``datafiles`` and ``files``; every count a file can set has its bound
here (:data:`MAX_REPEATS`, :data:`MAX_SHARDS`).

Example:
    >>> from jevalkit.results import COLUMNS
    >>> COLUMNS[:4]
    ['run_id', 'kind', 'probe', 'version']
"""

from ._bounds import MAX_REPEATS, MAX_SHARDS, check_count
from ._columns import (
    CASE_COLUMNS,
    COLUMNS,
    DTYPES,
    KEY_COLUMNS,
    ResultRow,
    key_hash,
    key_text,
    params_hash,
    row_key,
    shard_of,
)
from ._config import RunConfig, check_one_run, config_path
from ._design import (
    CANDIDATE_COLUMNS,
    ROW_POSITION,
    Arm,
    Design,
    Replayed,
    Stop,
    Wave,
    check_candidates,
    check_wave,
    design_names,
    reason_in,
    replay,
    weighted_rows,
)
from ._facts import (
    DEFAULT_MAX_ERROR_RATE,
    CombinedRuns,
    ErrorShare,
    combine_runs,
    error_share,
    error_summary,
    has_repeats,
    scored,
    truncated,
)
from ._frame import read_results, results_frame, rows_frame, system_of
from ._json import finite, json_ready
from ._lock import locked
from ._merge import merge_parts, merge_rows, partial_merge
from ._parts import PartsReader, part_files, part_path, parts_dir
from ._path import check_results_path
from ._read import iter_rows, latest_rows
from ._result import Result, RowsResult, rows_of
from ._table_html import table_html
from ._validate import validate_row
from ._write import ResultsWriter, repair_torn_tail, rewrite_without, write_rows

__all__ = [
    "CANDIDATE_COLUMNS",
    "CASE_COLUMNS",
    "COLUMNS",
    "DEFAULT_MAX_ERROR_RATE",
    "DTYPES",
    "KEY_COLUMNS",
    "MAX_REPEATS",
    "MAX_SHARDS",
    "ROW_POSITION",
    "Arm",
    "CombinedRuns",
    "Design",
    "ErrorShare",
    "PartsReader",
    "Replayed",
    "Result",
    "ResultRow",
    "ResultsWriter",
    "RowsResult",
    "RunConfig",
    "Stop",
    "Wave",
    "check_candidates",
    "check_count",
    "check_one_run",
    "check_results_path",
    "check_wave",
    "combine_runs",
    "config_path",
    "design_names",
    "error_share",
    "error_summary",
    "finite",
    "has_repeats",
    "iter_rows",
    "json_ready",
    "key_hash",
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
    "reason_in",
    "repair_torn_tail",
    "replay",
    "results_frame",
    "rewrite_without",
    "row_key",
    "rows_frame",
    "rows_of",
    "scored",
    "shard_of",
    "system_of",
    "table_html",
    "truncated",
    "validate_row",
    "weighted_rows",
    "write_rows",
]
