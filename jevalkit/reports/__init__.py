"""Reports: parameterised notebooks run with papermill into HTML with headline JSON, batches of
them on Dask, probe pages, and Markdown summaries.

Example:
    >>> from jevalkit.reports import escape_markdown
    >>> escape_markdown("<b>")
    '&lt;b&gt;'
"""

from ..errors import BatchError, ReportError
from ..results import table_html
from ._batch import (
    BatchSpec,
    collect,
    expand,
    load_batch,
    out_dir_for,
    resolve_value,
    run_batch,
    static_root,
    write_batch_summary,
)
from ._compare_page import compare_page, write_compare_page
from ._execute import (
    Report,
    bundled_notebooks,
    check_parameters,
    declared_default,
    declared_parameters,
    find_notebook,
    output_folder,
    run_report,
    save_headline,
)
from ._export import export_html, parameters_html, report_cells, report_title
from ._html import (
    distribution_html,
    highlight_differences,
    interval_svg,
    write_page,
)
from ._leaderboard_page import leaderboard_page, rank_svg, write_leaderboard_page
from ._notebook import (
    collect_notes,
    escape_markdown,
    example_path,
    notes,
    open_results,
    probe_names,
    probe_names_held,
    report_probe,
    report_setup,
    show_notes,
    shown_text,
    tidy_tables,
)
from ._probe_page import (
    dataset_jsonld,
    json_for_script,
    probe_page,
    probe_runs,
    versions_run,
    write_probe_page,
)
from ._probe_summary import (
    FAILED_CHECK_COLUMNS,
    FIRST_FAILING_COLUMNS,
    failed_checks,
    failing_outputs,
    fenced,
    first_failing_items,
    headline,
    probe_summary_markdown,
    violations,
    write_probe_summary,
)

__all__ = [
    "FAILED_CHECK_COLUMNS",
    "FIRST_FAILING_COLUMNS",
    "BatchError",
    "BatchSpec",
    "Report",
    "ReportError",
    "bundled_notebooks",
    "check_parameters",
    "collect",
    "collect_notes",
    "compare_page",
    "dataset_jsonld",
    "declared_default",
    "declared_parameters",
    "distribution_html",
    "escape_markdown",
    "example_path",
    "expand",
    "export_html",
    "failed_checks",
    "failing_outputs",
    "fenced",
    "find_notebook",
    "first_failing_items",
    "headline",
    "highlight_differences",
    "interval_svg",
    "json_for_script",
    "leaderboard_page",
    "load_batch",
    "notes",
    "open_results",
    "out_dir_for",
    "output_folder",
    "parameters_html",
    "probe_names",
    "probe_names_held",
    "probe_page",
    "probe_runs",
    "probe_summary_markdown",
    "rank_svg",
    "report_cells",
    "report_probe",
    "report_setup",
    "report_title",
    "resolve_value",
    "run_batch",
    "run_report",
    "save_headline",
    "show_notes",
    "shown_text",
    "static_root",
    "table_html",
    "tidy_tables",
    "versions_run",
    "violations",
    "write_batch_summary",
    "write_compare_page",
    "write_leaderboard_page",
    "write_page",
    "write_probe_page",
    "write_probe_summary",
]
