"""Items of a benchmark: which cases measure anything, item response models, and a full-benchmark
score from a few anchor items.

Example:
    >>> from jevalkit.items import analysis, simulate_2pl
    >>> result = analysis(simulate_2pl(n_systems=20, n_items=30, seed=2), case="case_id")
    >>> len(result.table()), 0 < result.alpha < 1
    (30, True)
"""

from ._active import ActivePlan, waves_for
from ._active_cases import ActiveCases, ActiveEstimate
from ._analysis import CronbachAlpha, ItemAnalysis, analysis, cronbach_alpha
from ._estimate import estimate
from ._irt import IrtFit, Simulated2PL, fit_irt, load_fit, simulate_2pl
from ._select import select
from ._validate import leave_systems_out

__all__ = [
    "ActiveCases",
    "ActiveEstimate",
    "ActivePlan",
    "CronbachAlpha",
    "IrtFit",
    "ItemAnalysis",
    "Simulated2PL",
    "analysis",
    "cronbach_alpha",
    "estimate",
    "fit_irt",
    "leave_systems_out",
    "load_fit",
    "select",
    "simulate_2pl",
    "waves_for",
]
