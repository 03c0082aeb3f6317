"""Send probes to OpenAI-compatible endpoints and keep every answer in append-only results.

Example:
    >>> from jevalkit.runner import COLUMNS
    >>> COLUMNS[:4]
    ['run_id', 'kind', 'probe', 'version']
"""

from ._columns import COLUMNS, KEY_COLUMNS, ResultRow, params_hash, row_key
from ._drift import describe_drift, model_drift
from ._plan import default_results_path, plan_jobs
from ._run import arun, run
from ._store import ResultsWriter, iter_rows, read_results, repair_torn_tail

__all__ = [
    "COLUMNS",
    "KEY_COLUMNS",
    "ResultRow",
    "ResultsWriter",
    "arun",
    "default_results_path",
    "describe_drift",
    "iter_rows",
    "model_drift",
    "params_hash",
    "plan_jobs",
    "read_results",
    "repair_torn_tail",
    "row_key",
    "run",
]
