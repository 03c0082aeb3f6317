"""The anatomy every public statistic of jevalkit shares (metrics, stats, items, labels).

- **the contract on the function**: :func:`estimator` declares what a statistic promises and
  stores it as ``fn.contract``; :data:`REGISTRY` holds every declaration, and the contract test
  runs each declared check on adversarial data;
- **one input step**: :func:`prepare` names the columns used and applies the settings,
  scored-row, duplicate, key-type and scale rules, each written once and applied nowhere else
  (:class:`Columns` holds the column keywords and their defaults); :func:`score_matrix` reads
  its rows through it;
- **one finishing step**: :func:`finish` makes the tidy table and holds the interval rules;
- **results objects**: :class:`Result`, for answers that are more than a table;
  :class:`RowsResult`, for rows with facts beside them (a run's result), which every statistic
  takes where it takes a results frame (both defined in :mod:`jevalkit.results`, the layer
  under the anatomy, and named here as the answers every statistic gives).

This package is plumbing for the statistics packages; users meet its effects, not its names.

Example:
    >>> from jevalkit.metrics import mean_score
    >>> mean_score.contract.unit
    'case'
"""

from ..results import CASE_COLUMNS, Result, RowsResult
from ._answer import as_table
from ._columns import (
    COLUMN_DEFAULTS,
    COMMON_DEFAULTS,
    CaseSpec,
    Columns,
    columns_of,
    group_codes,
    require,
)
from ._declare import (
    BASIC_CHECKS,
    CHECKS,
    DATA_KINDS,
    REGISTRY,
    Contract,
    estimator,
    not_a_statistic,
)
from ._finish import finish, interval_pairs
from ._matrix import (
    ScoreColumns,
    ScoreMatrix,
    require_connected,
    require_systems,
    score_matrix,
)
from ._prepare import Prepared, prepare, refuse_weighted

__all__ = [
    "BASIC_CHECKS",
    "CASE_COLUMNS",
    "CHECKS",
    "COLUMN_DEFAULTS",
    "COMMON_DEFAULTS",
    "DATA_KINDS",
    "REGISTRY",
    "CaseSpec",
    "Columns",
    "Contract",
    "Prepared",
    "Result",
    "RowsResult",
    "ScoreColumns",
    "ScoreMatrix",
    "as_table",
    "columns_of",
    "estimator",
    "finish",
    "group_codes",
    "interval_pairs",
    "not_a_statistic",
    "prepare",
    "refuse_weighted",
    "require",
    "require_connected",
    "require_systems",
    "score_matrix",
]
