"""Items of a benchmark: which cases measure anything, item response models, and a full-benchmark
score from a few anchor items.

Example:
    >>> from jevalkit.items import analysis, simulate_2pl
    >>> table = analysis(simulate_2pl(n_systems=20, n_items=30, seed=2), case="case_id")
    >>> sorted(table.attrs)[:2]
    ['alpha', 'alpha_ci']
"""

from ._analysis import ANALYSIS_COLUMNS, analysis, cronbach_alpha
from ._estimate import ESTIMATE_COLUMNS, estimate
from ._irt import ITEM_COLUMNS, SYSTEM_COLUMNS, IrtFit, fit_irt, simulate_2pl
from ._select import ANCHOR_COLUMNS, SELECT_METHODS, select
from ._validate import VALIDATION_COLUMNS, leave_systems_out

__all__ = [
    "ANALYSIS_COLUMNS",
    "ANCHOR_COLUMNS",
    "ESTIMATE_COLUMNS",
    "ITEM_COLUMNS",
    "SELECT_METHODS",
    "SYSTEM_COLUMNS",
    "VALIDATION_COLUMNS",
    "IrtFit",
    "analysis",
    "cronbach_alpha",
    "estimate",
    "fit_irt",
    "leave_systems_out",
    "select",
    "simulate_2pl",
]
