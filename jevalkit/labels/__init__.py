"""Human labels for judged outputs: which items to label (with their sampling probabilities), the
labels file, agreement between labellers, and the judge's mean corrected by the labels.

The judge scores every item cheaply but with bias; people label a probability sample of the
items (:func:`label_sample`); :func:`corrected_mean` and :func:`corrected_difference` combine
both into intervals for the mean *human* score (PPI, PPI++, Rogan-Gladen; the estimators on
arrays live in :mod:`jevalkit.stats`), and :func:`label_budget` says how many labels a target
width needs.

Example:
    >>> import pandas as pd
    >>> from jevalkit.labels import label_sample
    >>> df = pd.DataFrame({"system": "m", "case_id": ["a", "b", "c", "d"], "score": [0.0, 1.0, 1.0, 0.5]})
    >>> len(label_sample(df, 2))
    2
"""

from ._cascade import Cascade, calibrate_cascade, load_cascade
from ._cascade_design import CascadeDecisions, CascadeDesign
from ._corrected import corrected_difference, corrected_mean, label_budget
from ._judge_rows import CascadeStage, item_verdicts, judge_names
from ._labels import (
    append_label,
    judged_items,
    label_agreement,
    label_record,
    label_sample,
    read_labels,
)
from ._level_sets import ItemLevelSets, judged_level_sets

__all__ = [
    "Cascade",
    "CascadeDecisions",
    "CascadeDesign",
    "CascadeStage",
    "ItemLevelSets",
    "append_label",
    "calibrate_cascade",
    "corrected_difference",
    "corrected_mean",
    "item_verdicts",
    "judge_names",
    "judged_items",
    "judged_level_sets",
    "label_agreement",
    "label_budget",
    "label_record",
    "label_sample",
    "load_cascade",
    "read_labels",
]
