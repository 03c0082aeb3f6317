"""Which levels each judged item could be: split-conformal sets of contiguous levels
(:func:`jevalkit.stats.level_sets`) calibrated on the items people labelled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..contract import Result, estimator
from ..errors import StatsError
from ..stats import level_sets
from ._judge_rows import ITEM, item_verdicts, judge_names
from ._people import judge_levels, person_levels, with_people


@dataclass(frozen=True)
class ItemLevelSets(Result):
    """Conformal level sets of judged items (see :func:`judged_level_sets`).

    Attributes:
        items: one row per judged item with a judgment: ``system``, ``case_id``, ``verdict``,
            ``confidence``, ``probs`` (averaged over repeats), ``low`` and ``high`` (the set's
            first and last level), ``level_set`` (its levels' labels), ``size``, ``person``
            (the person's level of a labelled item, else None) and ``covered`` (whether the set
            holds it; None for an unlabelled item).
        judge: the judge whose probabilities they are.
        levels: the levels, lowest first.
        coverage: the marginal coverage asked for.
        n_items, n_calibration: items given a set; labelled items that calibrated them.
        mean_size, share_one_level: the mean set size, and the share of sets of one level.
        covered_calibration: the share of labelled items whose set holds their level (in
            sample: they calibrated the sets).
        threshold: the calibrated mass a level may follow and still join.
        method: how the sets were made, and what they guarantee.
    """

    items: pd.DataFrame = field(repr=False)
    judge: str
    levels: tuple[str, ...]
    coverage: float
    n_items: int
    n_calibration: int
    mean_size: float
    share_one_level: float
    covered_calibration: float
    threshold: float
    method: str

    def table(self) -> pd.DataFrame:
        """The items (one row each), with the ``method`` that made their sets."""
        return self.items.assign(method=self.method)


def _adapter(frame: pd.DataFrame) -> ItemLevelSets:
    """The contract test's adapter: the score is p(pass) of a two-level judge; the first
    system's cases are labelled pass when their score is at least 0.5."""
    judged = pd.DataFrame(
        {
            "model": "j",
            "label": frame["system"].astype(str),
            "case_id": frame["case_id"].astype(str) + "-" + frame["repeat"].astype(str),
            "probs": [[1 - p, p] for p in frame["score"].astype(float)],
        }
    )
    labels = judged.assign(level=np.where(frame["score"].astype(float) >= 0.5, "pass", "fail"))
    labels = labels.rename(columns={"label": "system"})[["system", "case_id", "level"]]
    return judged_level_sets(judged, labels, levels=["fail", "pass"], coverage=0.8)


@estimator(
    unit="judged item",
    estimand="the levels a person could give each judged item (a set per item)",
    interval="split-conformal sets of contiguous levels, marginal coverage >= coverage",
    checks=("order", "method", "scale"),
    adapter=_adapter,
    calibration="level_sets",
)
def judged_level_sets(
    judged: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    judge: str | None = None,
    coverage: float = 0.9,
    levels: Sequence[str] | None = None,
) -> ItemLevelSets:
    """For each item ``judge`` judged, the contiguous run of levels that holds the person's
    level with probability ``coverage``, calibrated on the items people labelled.

    Args:
        judged: judge rows (``model``, ``label`` or ``system``, ``case_id``, ``probs``).
        labels: a labels file's rows (:func:`read_labels`): people's levels of a uniform random
            sample of the items (any labelled item the judge judged calibrates).
        judge: the judge (a :func:`jevalkit.labels.judge_names` name); default: the only one.
        coverage: the marginal coverage of the sets.
        levels: the judge's levels, lowest first (default: from its prompt file).

    Returns:
        :class:`ItemLevelSets`: ``items`` (``.table()``) and the headline in ``.scalars()``.

    Notes:
        Coverage is marginal: on average over items like the labelled ones (exchangeable with
        them), at least ``coverage`` of the sets hold the person's level; a given item's set
        may miss. With too few labelled items for the coverage asked, every set is every level
        and ``method`` says so. Error rows give no set.

    Example:
        >>> judged = pd.DataFrame({"model": "j", "case_id": [f"c{i}" for i in range(40)],
        ...                        "probs": [[0.9, 0.1], [0.3, 0.7]] * 20})
        >>> labels = pd.DataFrame({"case_id": [f"c{i}" for i in range(40)],
        ...                        "level": ["no", "yes"] * 19 + ["yes", "no"]})
        >>> sets = judged_level_sets(judged, labels, levels=["no", "yes"], coverage=0.9)
        >>> sets.table()["level_set"].iloc[:2].tolist(), sets.n_calibration
        ([['no'], ['yes']], 40)
    """
    names = judge_names(judged)
    present = sorted(set(names))
    if judge is None:
        if len(present) != 1:
            raise StatsError(
                f"the rows hold {len(present)} judges: name one (judge=...) of {present}"
            )
        judge = present[0]
    if judge not in present:
        raise StatsError(f"judge {judge!r} has no rows; the judge rows hold {present}")
    rows = judged[names == judge]
    names_of_levels = judge_levels(rows, levels)
    table = item_verdicts(rows, names_of_levels, judge_name=judge)
    table = table[table["probs"].notna()].reset_index(drop=True)
    if table.empty:
        raise StatsError(f"judge {judge!r} gave no judgment with probabilities")
    person, _ = person_levels(labels)
    unknown = sorted(set(person["person"]) - set(names_of_levels))
    if unknown:
        raise StatsError(
            f"labels hold levels {unknown} that the judge does not have: {names_of_levels}"
        )
    calibration = with_people(table[[*ITEM, "probs"]], person)
    if calibration.empty:
        raise StatsError(
            f"no labelled item was judged by {judge!r}: label items from the judged rows"
        )
    index = {label: i for i, label in enumerate(names_of_levels)}
    made = level_sets(
        np.array(table["probs"].tolist()),
        np.array(calibration["probs"].tolist()),
        calibration["person"].map(index).to_numpy(),
        coverage=coverage,
    )
    labelled = with_people(table[ITEM], person)
    items = table.drop(columns=["cost_usd", "n_errors", "error"]).assign(
        low=[names_of_levels[s[0]] for s in made.sets],
        high=[names_of_levels[s[-1]] for s in made.sets],
        level_set=[[names_of_levels[i] for i in s] for s in made.sets],
        size=made.size,
    )
    items = items.merge(labelled, on=ITEM, how="left")
    items["person"] = items["person"].astype(object).where(items["person"].notna(), None)
    items["covered"] = [
        None if p is None else p in s
        for p, s in zip(items["person"], items["level_set"], strict=True)
    ]
    hits = [c for c in items["covered"] if c is not None]
    return ItemLevelSets(
        items=items,
        judge=judge,
        levels=tuple(names_of_levels),
        coverage=float(coverage),
        n_items=len(items),
        n_calibration=len(calibration),
        mean_size=float(np.mean(made.size)),
        share_one_level=float(np.mean(made.size == 1)),
        covered_calibration=float(np.mean(hits)) if hits else float("nan"),
        threshold=made.threshold,
        method=made.method + f"; the judge {judge}, calibrated on the labelled items",
    )
