"""Importers: other tools' evaluation logs and any table, as the results frame, so every metric,
report and widget works on them unchanged.

::

    df = jevalkit.io.read("logs/2026-11-30T10-00-00_mytask.eval")   # format detected
    jevalkit.metrics.mean_score(df, by="system")

Example:
    >>> from jevalkit.io import FORMATS
    >>> FORMATS[:3]
    ('jevalkit', 'inspect', 'promptfoo')
"""

from ..errors import ImportFormatError
from ._export import EXPORT_FORMATS, export
from ._folder import FolderLogs, folder_logs
from ._frame import FRAME_COLUMNS, results_from_columns
from ._inspect import read_inspect
from ._judge_files import (
    VERDICT_SCORES,
    VERDICTS,
    read_grades,
    read_pairwise,
    read_preferences,
    read_verdicts,
)
from ._lm_eval import read_lm_eval
from ._promptfoo import read_promptfoo
from ._read import (
    FORMATS,
    READER_OPTIONS,
    detect_format,
    read,
    read_source,
    read_sources,
    sniff_format,
)
from ._table import from_table, load_table
from ._write import combine_imports, write_results
from ._zip import MAX_INFLATED_BYTES, read_zip_member

__all__ = [
    "EXPORT_FORMATS",
    "FORMATS",
    "FRAME_COLUMNS",
    "MAX_INFLATED_BYTES",
    "READER_OPTIONS",
    "VERDICTS",
    "VERDICT_SCORES",
    "FolderLogs",
    "ImportFormatError",
    "combine_imports",
    "detect_format",
    "export",
    "folder_logs",
    "from_table",
    "load_table",
    "read",
    "read_grades",
    "read_inspect",
    "read_lm_eval",
    "read_pairwise",
    "read_preferences",
    "read_promptfoo",
    "read_source",
    "read_sources",
    "read_verdicts",
    "read_zip_member",
    "results_from_columns",
    "sniff_format",
    "write_results",
]
