"""Reports: written summaries of results (Markdown, headline JSON).

Example:
    >>> from jevalkit.reports import headline
    >>> callable(headline)
    True
"""

from ._batch import BatchError, collect, expand, load_batch, run_batch
from ._execute import NOTEBOOKS_DIR, Report, ReportError, find_notebook, run_report, save_headline
from ._probe_page import dataset_jsonld, probe_page, probe_runs
from ._probe_summary import headline, probe_summary_markdown, write_probe_summary

__all__ = [
    "NOTEBOOKS_DIR",
    "BatchError",
    "Report",
    "ReportError",
    "collect",
    "dataset_jsonld",
    "expand",
    "find_notebook",
    "headline",
    "load_batch",
    "probe_page",
    "probe_runs",
    "probe_summary_markdown",
    "run_batch",
    "run_report",
    "save_headline",
    "write_probe_summary",
]
