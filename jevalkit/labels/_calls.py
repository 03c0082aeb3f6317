"""A judge's confidence in an item as the mean over its k calls (Trust or Escalate's simulated
annotators: several calls of one judge, averaged), with k made explicit: a cascade is
calibrated on k calls per item and applies only to items judged the same way, since the mean of
fewer (or more) calls is another statistic with another distribution.

A call is one judge row: one repeat of a single-item judge, or one order of one repeat of a
pairwise judge (``a_first`` and ``b_first``, both mapped back to the systems, so their
probabilities average as the anchor's annotators do).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import StatsError
from ._judge_rows import item_systems, item_verdicts


def _as_calls(rows: pd.DataFrame) -> pd.DataFrame:
    """Pairwise games as calls: the two orders of a repeat get calls 2r and 2r + 1, so that
    each row is one call of its item (single-item rows are returned as they are)."""
    if "position" not in rows.columns or not rows["position"].notna().any():
        return rows
    position = rows["position"].astype(object)
    unknown = sorted(set(position.dropna().astype(str)) - {"a_first", "b_first"})
    if unknown or position.isna().any():
        raise StatsError(
            f"pairwise rows with position {unknown[0] if unknown else None!r}: each game says "
            "which answer was shown first (a_first or b_first)"
        )
    repeat = pd.to_numeric(rows["repeat"], errors="coerce") if "repeat" in rows else 0
    return rows.assign(repeat=repeat * 2 + (position == "b_first").astype(int))


def calls_per_item(rows: pd.DataFrame) -> pd.Series:
    """How many calls (rows, an error row included) each item of one judge's rows has."""
    return rows.groupby([item_systems(rows), rows["case_id"].astype(str)]).size()


def judge_items(
    rows: pd.DataFrame,
    levels: Sequence[str],
    *,
    calls: int | None = None,
    confidence_column: str | None = None,
    judge_name: str = "the judge",
) -> tuple[pd.DataFrame, int]:
    """One judge's verdict and confidence per item (:func:`jevalkit.judges.item_verdicts`:
    the probabilities averaged over the item's calls), and ``k``, its calls per item. An item
    with fewer judgments than ``k`` (an error among its calls) gets no verdict and no
    confidence: it is not decided by this judge.

    Args:
        calls: the calls per item the confidence was calibrated on; None: read from the rows,
            which must give every item the same number.

    Raises:
        StatsError: items with different numbers of calls (``calls`` None), or another number
            than ``calls``.

    Example:
        >>> rows = pd.DataFrame({"model": "j", "case_id": ["a", "a", "b", "b"], "repeat": [0, 1, 0, 1],
        ...                      "probs": [[0.2, 0.8], [0.4, 0.6], [0.1, 0.9], None],
        ...                      "error": [None, None, None, {"message": "timeout"}]})
        >>> table, k = judge_items(rows, ["no", "yes"])
        >>> k, table["confidence"].round(2).tolist()
        (2, [0.7, nan])
    """
    if rows.empty:
        return item_verdicts(rows, levels), calls or 0
    rows = _as_calls(rows)
    per_item = calls_per_item(rows)
    if calls is None:
        if per_item.nunique() > 1:
            few, many = int(per_item.min()), int(per_item.max())
            example = per_item.index[int(np.argmin(per_item.to_numpy()))]
            raise StatsError(
                f"judge {judge_name!r} has {few} to {many} calls per item (e.g. {example[1]!r} "
                f"has {few}): its confidence is the mean over an item's calls, so every item "
                f"needs the same number; judge every item {many} times (a results file per "
                "repeat setting)"
            )
        calls = int(per_item.iloc[0])
    other = per_item[per_item != calls]
    if len(other):
        raise StatsError(
            f"judge {judge_name!r} judged {len(other)} item(s) with {int(other.iloc[0])} call(s) "
            f"(e.g. {other.index[0][1]!r}); the cascade was calibrated on {calls} per item (its "
            f"confidence is their mean), so its threshold does not hold for another number: "
            f"judge them {calls} time(s), or calibrate on rows like these"
        )
    table = item_verdicts(rows, levels, confidence_column=confidence_column, judge_name=judge_name)
    short = (table["n_repeats"] < calls).to_numpy()
    if short.any():  # an error among its calls: the mean of fewer calls is not calibrated
        table = table.copy()
        table.loc[short, ["verdict", "probs"]] = None
        table.loc[short, "confidence"] = np.nan
    return table, calls
