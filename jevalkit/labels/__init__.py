"""Human labels for judged outputs: which items to label (with their sampling probabilities), the
labels file, agreement between labellers, and the judge's mean corrected by the labels.

The judge scores every item cheaply but with bias; people label a probability sample of the
items; :func:`corrected_mean` and :func:`corrected_difference` combine both into intervals for
the mean *human* score (PPI, PPI++, Rogan-Gladen; the estimators on arrays live in
:mod:`jevalkit.stats`), and :func:`label_budget` says how many labels a target width needs.

Example:
    >>> import pandas as pd
    >>> from jevalkit.labels import label_plan
    >>> df = pd.DataFrame({"system": "m", "case_id": ["a", "b", "c", "d"], "score": [0.0, 1.0, 1.0, 0.5]})
    >>> len(label_plan(df, 2))
    2
"""

from ._cascade import Cascade, calibrate_cascade, load_cascade
from ._corrected import (
    BUDGET_COLUMNS,
    CORRECTED_COLUMNS,
    ESTIMATORS,
    corrected_difference,
    corrected_mean,
    label_budget,
    label_scores_for,
)
from ._labels import (
    AGREEMENT_COLUMNS,
    LABEL_COLUMNS,
    LABEL_PLAN_COLUMNS,
    STRATEGIES,
    append_label,
    check_sampling_probability,
    judged_items,
    label_agreement,
    label_plan,
    label_record,
    read_labels,
)

__all__ = [
    "AGREEMENT_COLUMNS",
    "BUDGET_COLUMNS",
    "CORRECTED_COLUMNS",
    "ESTIMATORS",
    "LABEL_COLUMNS",
    "LABEL_PLAN_COLUMNS",
    "STRATEGIES",
    "Cascade",
    "append_label",
    "calibrate_cascade",
    "check_sampling_probability",
    "corrected_difference",
    "corrected_mean",
    "judged_items",
    "label_agreement",
    "label_budget",
    "label_plan",
    "label_record",
    "label_scores_for",
    "load_cascade",
    "read_labels",
]
