"""Statistics for evaluation results: every number with n and an honest interval.

Example:
    >>> from jevalkit.stats import wilson_ci
    >>> [round(v, 3) for v in wilson_ci(0, 5)]
    [0.0, 0.434]
"""

from ._adaptive import AdaptiveEstimate, AdaptiveRepeats, adaptive_estimate
from ._agreement import fleiss_kappa, krippendorff_alpha
from ._bimodality import bimodality, bimodality_groups
from ._bootstrap import BootstrapResult, bootstrap_ci
from ._conformal import LevelSets, level_sets
from ._error_bars import paired_difference, standard_error
from ._finite_sequence import FINITE_METHODS, FiniteSequences, finite_confidence_sequence
from ._gstudy import GStudy, variance_components
from ._inclusion import capped_inclusion
from ._ordinal import OrdinalSpacing, ordinal_spacing
from ._power import (
    RepeatsCurve,
    margin_of_error_n,
    minimum_detectable_effect,
    repeats_needed,
    sample_size,
)
from ._ppi import RoganGladen, ppi_interval, rogan_gladen_interval
from ._proportion import no_spread_ci, paired_proportion_ci, wilson_ci
from ._risk_control import RiskThreshold, risk_controlled_threshold
from ._selective import SelectiveThreshold, agreement_curve, selective_threshold
from ._sequential import SweepSequence, confidence_sequence, normal_mixture_radius

__all__ = [
    "FINITE_METHODS",
    "AdaptiveEstimate",
    "AdaptiveRepeats",
    "BootstrapResult",
    "FiniteSequences",
    "GStudy",
    "LevelSets",
    "OrdinalSpacing",
    "RepeatsCurve",
    "RiskThreshold",
    "RoganGladen",
    "SelectiveThreshold",
    "SweepSequence",
    "adaptive_estimate",
    "agreement_curve",
    "bimodality",
    "bimodality_groups",
    "bootstrap_ci",
    "capped_inclusion",
    "confidence_sequence",
    "finite_confidence_sequence",
    "fleiss_kappa",
    "krippendorff_alpha",
    "level_sets",
    "margin_of_error_n",
    "minimum_detectable_effect",
    "no_spread_ci",
    "normal_mixture_radius",
    "ordinal_spacing",
    "paired_difference",
    "paired_proportion_ci",
    "ppi_interval",
    "repeats_needed",
    "risk_controlled_threshold",
    "rogan_gladen_interval",
    "sample_size",
    "selective_threshold",
    "standard_error",
    "variance_components",
    "wilson_ci",
]
