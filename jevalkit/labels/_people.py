"""The person's level of each labelled item, for statistics that compare a judge with people
item by item (cascades, level sets)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from ..errors import JevalkitError, StatsError
from ..judges import load_judge_prompt
from ._judge_rows import ITEM, NO_SYSTEM


def person_levels(labels: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Each labelled item's level (the labellers' modal one), and how many label rows there
    were."""
    if not isinstance(labels, pd.DataFrame):
        raise StatsError("labels must be a DataFrame (read the labels file with read_labels)")
    for column in ("case_id", "level"):
        if column not in labels.columns:
            raise StatsError(f"labels have no {column!r} column: read them with read_labels")
    kept = labels[labels["level"].notna()]
    if "skipped" in kept.columns:
        kept = kept[~kept["skipped"].fillna(False).astype(bool)]
    if kept.empty:
        raise StatsError("the labels hold no label (every record skipped or without a level)")
    _check_drawn_at_random(kept)
    if "sampling_probability" in kept.columns:
        probs = pd.to_numeric(kept["sampling_probability"], errors="coerce").dropna().unique()
        if probs.size > 1 and not np.allclose(probs, probs[0]):
            raise StatsError(
                "the labelled items were drawn with unequal probabilities (a stratified or "
                "uncertainty plan): a cascade is calibrated on a uniform random sample of items "
                "(label_sample strategy 'random')"
            )
    system = kept["system"] if "system" in kept.columns else pd.Series(NO_SYSTEM, kept.index)
    kept = kept.assign(
        system=system.astype(object).where(system.notna(), NO_SYSTEM).astype(str),
        case_id=kept["case_id"].astype(str),
        level=kept["level"].astype(str),
    )
    counts = kept.groupby([*ITEM, "level"]).size()
    top = counts.groupby(level=[0, 1]).transform("max")
    modal = counts[counts == top].reset_index()
    tied = modal.duplicated(ITEM, keep=False)
    if tied.any():
        first = tuple(modal.loc[tied, ITEM].iloc[0])
        raise StatsError(
            f"labellers disagree evenly on {int(modal.loc[tied].drop_duplicates(ITEM).shape[0])} "
            f"item(s) (e.g. {first}): settle them or label once more"
        )
    return modal[[*ITEM, "level"]].rename(columns={"level": "person"}), len(kept)


# why a label plan's strategy makes its items no random sample of the judged ones
CHOSEN_BY = {
    "cascade": "a cascade's person queue: the items its judges were least sure of",
    "uncertain": "items chosen by the judge's uncertainty",
    "active": "items chosen by the judge's predicted error",
    "stratified": "items chosen by the judge's verdict",
}
RANDOM_LABELS = (
    "calibration needs a uniform random sample of the items it is applied to: label a plan "
    "from label_sample(judged, n, strategy='random') and calibrate on those labels"
)


def _check_drawn_at_random(labels: pd.DataFrame) -> None:
    """Refuse labels whose label plan says its items were not drawn uniformly at random (the
    ``strategy`` a label record or a plan carries): calibrated on them, a guarantee that holds
    for items like the calibration ones does not hold for the items it is applied to."""
    if "strategy" not in labels.columns:
        return
    strategies = labels["strategy"].dropna().astype(str)
    chosen = strategies[strategies != "random"]
    if chosen.empty:
        return
    strategy = chosen.value_counts().index[0]
    why = CHOSEN_BY.get(strategy, "items not drawn uniformly at random")
    raise StatsError(
        f"{len(chosen)} label(s) come from a label plan with strategy {strategy!r} ({why}), "
        f"not a random sample: {RANDOM_LABELS}"
    )


RANK_TEST_ALPHA = 1e-6  # a random sample is refused this rarely: the p-value is uniform then
RANK_TEST_MIN = 20  # labelled and unlabelled items each, for the test to be run


def check_like_the_judged(confidence: np.ndarray, labelled: np.ndarray, judge: str) -> None:
    """Refuse labels whose items were chosen by the judge's confidence, provenance or not:
    under a uniform random draw the labelled items' ``confidence`` (the first judge's, one per
    judged item; ``labelled`` marks the labelled ones) is distributed as the unlabelled items',
    so a two-sided Mann-Whitney rank test rejects at :data:`RANK_TEST_ALPHA` only that rarely.
    Labels chosen as the least (or most) confident items are rejected at once; a mild
    selection can pass (the strategy recorded in the labels is the first guard).

    Example:
        >>> conf = np.linspace(0.5, 1.0, 200)
        >>> check_like_the_judged(conf, np.arange(200) % 2 == 0, "j")  # every other item: fine
        >>> check_like_the_judged(conf, np.arange(200) < 50, "j")
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: the 50 labelled items are not a random sample of the judged items: ...
    """
    conf = np.asarray(confidence, dtype=float)
    labelled = np.asarray(labelled, dtype=bool)
    known = ~np.isnan(conf)
    a, b = conf[known & labelled], conf[known & ~labelled]
    if min(a.size, b.size) < RANK_TEST_MIN or np.ptp(conf[known]) == 0:
        return
    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    if p < RANK_TEST_ALPHA:
        raise StatsError(
            f"the {a.size} labelled items are not a random sample of the judged items: "
            f"{judge!r}'s confidence in them (median {np.median(a):.3f}) differs from its "
            f"confidence in the {b.size} unlabelled ones (median {np.median(b):.3f}; rank test "
            f"p = {p:.1e}), as when labels are chosen by the judge's confidence; " + RANDOM_LABELS
        )


def with_people(items: pd.DataFrame, person: pd.DataFrame) -> pd.DataFrame:
    """The judged ``items`` that have a person's level. Items of rows that name no system
    (``all``) are matched by case id alone; a case id labelled under two systems is then
    refused."""
    if (items["system"] == NO_SYSTEM).all():
        twice = person[person.duplicated("case_id", keep=False)]
        if len(twice):
            raise StatsError(
                f"the judge rows name no system (no label), but the labels name case "
                f"{twice['case_id'].iloc[0]!r} under {twice['system'].nunique()} systems: give "
                "the rows their system's name (--label), or labels of one system"
            )
        return items.merge(person.drop(columns="system"), on="case_id", how="inner")
    return items.merge(person, on=ITEM, how="inner")


def judge_levels(judged: pd.DataFrame, levels: Sequence[str] | None) -> list[str]:
    if levels is not None:
        names = [str(v) for v in levels]
        if len(names) < 2 or len(set(names)) != len(names):
            raise StatsError(f"levels must be two or more distinct labels, got {names}")
        return names
    refs = judged[["probe", "version"]].drop_duplicates() if "probe" in judged else pd.DataFrame()
    if len(refs) != 1:
        raise StatsError(
            "say the judge's levels (levels=[...], lowest first): the rows name "
            f"{len(refs)} judge prompts, not one"
        )
    probe, version = refs.iloc[0]
    try:
        return load_judge_prompt(f"{probe}@{int(version)}").labels
    except (JevalkitError, TypeError, ValueError) as exc:  # an imported judge, no prompt file
        raise StatsError(
            f"no judge prompt file for {probe}@{version} ({exc}); pass levels=[...], lowest first"
        ) from None
