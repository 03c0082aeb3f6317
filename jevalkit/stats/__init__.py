"""Statistics for evaluation results: every number with n and an honest interval.

Example:
    >>> from jevalkit.stats import wilson_ci
    >>> [round(v, 3) for v in wilson_ci(0, 5)]
    [0.0, 0.434]
"""

from ._agreement import fleiss_kappa, krippendorff_alpha
from ._bimodality import bimodality, bimodality_groups, least_favourable_null, unimodal_fit
from ._bootstrap import BootstrapResult, bootstrap_ci
from ._error_bars import paired_difference, standard_error
from ._gstudy import GStudy, variance_components
from ._ordinal import OrdinalSpacing, ordinal_spacing
from ._power import (
    RepeatsCurve,
    margin_of_error_n,
    minimum_detectable_effect,
    repeats_needed,
    sample_size,
)
from ._ppi import RoganGladen, ppi_interval, ppi_lambda, rogan_gladen_interval
from ._proportion import no_spread_ci, paired_proportion_ci, wilson_ci
from ._sequential import SEQUENCE_COLUMNS, SweepSequence, confidence_sequence, sequence_method
from ._validate import as_clean_array, as_labels

__all__ = [
    "SEQUENCE_COLUMNS",
    "BootstrapResult",
    "GStudy",
    "OrdinalSpacing",
    "RepeatsCurve",
    "RoganGladen",
    "SweepSequence",
    "as_clean_array",
    "as_labels",
    "bimodality",
    "bimodality_groups",
    "bootstrap_ci",
    "confidence_sequence",
    "fleiss_kappa",
    "krippendorff_alpha",
    "least_favourable_null",
    "margin_of_error_n",
    "minimum_detectable_effect",
    "no_spread_ci",
    "ordinal_spacing",
    "paired_difference",
    "paired_proportion_ci",
    "ppi_interval",
    "ppi_lambda",
    "repeats_needed",
    "rogan_gladen_interval",
    "sample_size",
    "sequence_method",
    "standard_error",
    "unimodal_fit",
    "variance_components",
    "wilson_ci",
]
