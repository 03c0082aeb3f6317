"""Judge cascades with a guaranteed agreement: the cheapest judge decides the items it is sure
of, the next judge the ones left, and people the rest (Jung, Brahman & Choi, "Trust or
Escalate", ICLR 2025: Cascaded Selective Evaluation).

Each judge's threshold on its own confidence is calibrated, on the labelled items that reach it,
by :func:`jevalkit.stats.selective_threshold`, at the target agreement and at confidence
1 - (1 - confidence_level) / (number of judges), so that all stages hold together with
probability at least ``confidence_level`` (a union bound; the authors' code uses the full level
at every stage). Then the verdicts the cascade does not send to a person agree with a person at
least ``target_agreement`` of the time on average over items like the calibration items: every
stage's decided items do, and the cascade's are their mixture.

What is not guaranteed: agreement per item, per system or per slice; items unlike the
calibration items (another judge prompt, another kind of output, a shifted mix of systems); and
labels that were not a uniform random sample of the items (refused here).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..contract import Result, estimator, not_a_statistic
from ..errors import StatsError
from ..judges import load_judge_prompt
from ..results import system_of
from ..stats import selective_threshold

PERSON = "person"
ITEM = ["system", "case_id"]
CASCADE_FORMAT = "jevalkit-cascade/1"


def _levels_of(judged: pd.DataFrame, levels: Sequence[str] | None) -> list[str]:
    if levels is not None:
        return [str(v) for v in levels]
    refs = judged[["probe", "version"]].drop_duplicates() if "probe" in judged else pd.DataFrame()
    if len(refs) != 1:
        raise StatsError(
            "say the judge's levels (levels=[...], lowest first): the rows name "
            f"{len(refs)} judge prompts, not one"
        )
    probe, version = refs.iloc[0]
    try:
        return load_judge_prompt(f"{probe}@{int(version)}").labels
    except Exception as exc:  # an imported judge without a prompt file here
        raise StatsError(
            f"no judge prompt file for {probe}@{version} ({exc}); pass levels=[...], lowest first"
        ) from None


def judge_verdicts(
    judged: pd.DataFrame, judge: str, levels: Sequence[str], confidence_column: str | None = None
) -> pd.DataFrame:
    """One row per item (``system``, ``case_id``) that ``judge`` (a ``model`` of the judge rows)
    judged: ``verdict`` (the level with the highest probability, its ``probs`` averaged over
    repeats), ``confidence`` (that probability, or the mean of the declared ``confidence``
    column), ``cost_usd`` (summed over repeats; NaN when unknown) and ``n_repeats``."""
    if "model" not in judged.columns:
        raise StatsError("no 'model' column: the judge rows must say which judge judged them")
    rows = judged[judged["model"].astype(str) == judge]
    if "error" in rows.columns:
        rows = rows[rows["error"].isna()]
    column = confidence_column or "probs"
    if column not in rows.columns:
        raise StatsError(f"judge {judge!r}: no {column!r} column to read its confidence from")
    rows = rows[rows[column].notna()]
    if rows.empty:
        return pd.DataFrame(
            {
                "system": pd.Series(dtype=str),
                "case_id": pd.Series(dtype=str),
                "verdict": pd.Series(dtype=object),
                "confidence": pd.Series(dtype=float),
                "cost_usd": pd.Series(dtype=float),
                "n_repeats": pd.Series(dtype=int),
            }
        )
    frame = rows.assign(system=system_of(rows) if "system" not in rows else rows["system"])
    frame = frame.assign(system=frame["system"].astype(str), case_id=frame["case_id"].astype(str))
    k = len(levels)
    if confidence_column is None:
        probs = np.array([_probs(p, k, judge) for p in frame["probs"]])
        grouped = pd.DataFrame(probs, index=pd.MultiIndex.from_frame(frame[ITEM]))
        mean = grouped.groupby(level=[0, 1], sort=True).mean()
        verdict = [levels[i] for i in mean.to_numpy().argmax(axis=1)]
        conf = mean.to_numpy().max(axis=1)
        index = mean.index
    else:
        if "verdict" not in frame.columns:
            raise StatsError(f"judge {judge!r}: no 'verdict' column beside {confidence_column!r}")
        values = pd.to_numeric(frame[confidence_column], errors="coerce")
        if values.isna().any() or not np.isfinite(values).all():
            raise StatsError(
                f"column {confidence_column!r} holds values that are not finite numbers"
            )
        by = frame.assign(_c=values).groupby(ITEM, sort=True)
        conf = by["_c"].mean().to_numpy()
        verdict = by["verdict"].agg(lambda v: v.astype(str).value_counts().index[0]).tolist()
        index = by["_c"].mean().index
    cost = (
        pd.to_numeric(frame["cost_usd"], errors="coerce")
        if "cost_usd" in frame
        else pd.Series(np.nan, index=frame.index)
    )
    cost_sum = cost.groupby([frame["system"], frame["case_id"]], sort=True).sum(min_count=1)
    repeats = frame.groupby(ITEM, sort=True).size()
    out = pd.DataFrame(index=index).reset_index()
    out.columns = ITEM
    out["verdict"] = verdict
    out["confidence"] = conf
    out["cost_usd"] = cost_sum.to_numpy()
    out["n_repeats"] = repeats.to_numpy()
    return out


def _probs(value: Any, k: int, judge: str) -> np.ndarray:
    p = np.asarray(value, dtype=float).ravel()
    if p.size != k or not np.isfinite(p).all():
        raise StatsError(
            f"judge {judge!r}: a probs value has {p.size} entries for {k} levels; pass the "
            "judge's levels (levels=[...]) or a confidence column"
        )
    return p


def _person_levels(labels: pd.DataFrame) -> pd.DataFrame:
    for column in (*ITEM, "level"):
        if column not in labels.columns:
            raise StatsError(f"labels have no {column!r} column: read them with read_labels")
    kept = labels[labels["level"].notna()]
    if "skipped" in kept.columns:
        kept = kept[~kept["skipped"].astype(bool)]
    if "sampling_probability" in kept.columns:
        probs = pd.to_numeric(kept["sampling_probability"], errors="coerce").dropna().unique()
        if probs.size > 1 and not np.allclose(probs, probs[0]):
            raise StatsError(
                "the labelled items were drawn with unequal probabilities (a stratified or "
                "uncertainty plan): a cascade is calibrated on a uniform random sample of items "
                "(label_sample strategy 'random')"
            )
    kept = kept.assign(system=kept["system"].astype(str), case_id=kept["case_id"].astype(str))
    counts = kept.assign(level=kept["level"].astype(str)).groupby([*ITEM, "level"]).size()
    top = counts.groupby(level=[0, 1]).transform("max")
    modal = counts[counts == top].reset_index()
    tied = modal.duplicated(ITEM, keep=False)
    if tied.any():
        first = tuple(modal.loc[tied, ITEM].iloc[0])
        raise StatsError(
            f"labellers disagree evenly on {int(modal.loc[tied].drop_duplicates(ITEM).shape[0])} "
            f"item(s) (e.g. {first}): settle them or label once more"
        )
    return modal[[*ITEM, "level"]].rename(columns={"level": "person"})


@dataclass(frozen=True)
class Cascade(Result):
    """A calibrated cascade of judges (see :func:`calibrate_cascade`).

    Attributes:
        judges: the judges, cheapest first (the ``model`` of their rows).
        thresholds: each judge's certified confidence threshold (inf: it decides nothing).
        stages: one row per judge: ``judge``, ``threshold``, ``n_reaching`` (calibration items
            that reached it), ``n_decided``, ``agreement`` (on those it decided), ``p_value``,
            ``level`` (the confidence level of its test), ``cost_usd`` (per item it judges),
            ``method`` (how its threshold was chosen, or why none was).
        levels: the judge's levels, lowest first.
        target_agreement, confidence_level: the guarantee asked for.
        n_calibration: labelled items the cascade was calibrated on.
        confidence_column: the column read as confidence (``None``: the judges' ``probs``).
        method: how it was calibrated.
    """

    judges: tuple[str, ...]
    thresholds: tuple[float, ...]
    stages: pd.DataFrame = field(repr=False)
    levels: tuple[str, ...]
    target_agreement: float
    confidence_level: float
    n_calibration: int
    confidence_column: str | None
    method: str

    @property
    def guarantee(self) -> str:
        """What is guaranteed, in words."""
        return (
            f"with probability at least {self.confidence_level:.0%} over the calibration draw, "
            f"the verdicts this cascade does not send to a person agree with a person at least "
            f"{self.target_agreement:.0%} of the time, on average over items like the "
            f"{self.n_calibration} calibration items (not per item, and not for other kinds of "
            "items)"
        )

    def table(self) -> pd.DataFrame:
        """The stages (one row per judge)."""
        return self.stages.copy()

    def apply(self, judged: pd.DataFrame) -> pd.DataFrame:
        """One row per item of ``judged``: ``system``, ``case_id``, ``verdict``, ``decided_by``
        (a judge, ``person``, or ``pending: <judge>`` when the item needs a judge whose rows are
        not there yet), ``confidence`` (the deciding judge's, NaN for a person).

        Example:
            >>> cascade, judged = _example()
            >>> out = cascade.apply(judged)
            >>> sorted(set(out["decided_by"]))
            ['cheap', 'person', 'strong']
        """
        verdicts = [
            judge_verdicts(judged, j, self.levels, self.confidence_column) for j in self.judges
        ]
        items = pd.concat([v[ITEM] for v in verdicts]).drop_duplicates().sort_values(ITEM)
        out = items.reset_index(drop=True).assign(verdict=None, decided_by=None, confidence=np.nan)
        open_ = np.ones(len(out), dtype=bool)
        for judge, threshold, table in zip(self.judges, self.thresholds, verdicts, strict=True):
            joined = out[ITEM].merge(table, on=ITEM, how="left")
            has = joined["confidence"].notna().to_numpy()
            sure = has & (joined["confidence"].to_numpy(dtype=float) >= threshold)
            take = open_ & sure
            if take.any():
                out.loc[take, "verdict"] = joined.loc[take, "verdict"].to_numpy()
                out.loc[take, "decided_by"] = judge
                out.loc[take, "confidence"] = joined.loc[take, "confidence"].to_numpy(dtype=float)
            waiting = open_ & ~has
            out.loc[waiting, "decided_by"] = f"pending: {judge}"
            open_ &= has & ~sure  # still open: judged here, and not sure enough
        out.loc[open_, "decided_by"] = PERSON
        return out

    def summary(self, judged: pd.DataFrame, *, label_cost_usd: float | None = None) -> pd.DataFrame:
        """How ``judged``'s items go through the cascade, one row per stage and one for people:
        ``stage``, ``n_items`` (decided there), ``share``, ``cumulative_share``, ``cost_usd``
        (per item judged there; a person's is ``label_cost_usd``), ``agreement_calibration``
        (on the calibration items it decided), and a last row ``all``: ``cost_usd`` the expected
        cost per item of the cascade (people included, NaN without ``label_cost_usd``),
        ``cost_judges`` its judges' share, ``cost_last_judge`` the last judge on every item,
        ``cost_people`` a person on every item, ``n_pending`` items waiting for a judge.

        Example:
            >>> cascade, judged = _example()
            >>> total = cascade.summary(judged, label_cost_usd=0.5).iloc[-1]
            >>> bool(total["cost_judges"] < total["cost_last_judge"] < total["cost_people"])
            True
        """
        applied = self.apply(judged)
        n = max(len(applied), 1)
        rows, reach, cost = [], 1.0, 0.0
        for judge, stage in zip(self.judges, self.stages.itertuples(index=False), strict=True):
            k = int((applied["decided_by"] == judge).sum())
            per_item = float(stage.cost_usd)
            cost += reach * (per_item if not math.isnan(per_item) else math.nan)
            rows.append(
                {
                    "stage": judge,
                    "n_items": k,
                    "share": k / n,
                    "cost_usd": per_item,
                    "agreement_calibration": stage.agreement,
                }
            )
            reach -= k / n
        people = int((applied["decided_by"] == PERSON).sum())
        pending = int(applied["decided_by"].str.startswith("pending").sum())
        rows.append(
            {
                "stage": PERSON,
                "n_items": people,
                "share": people / n,
                "cost_usd": np.nan if label_cost_usd is None else float(label_cost_usd),
                "agreement_calibration": 1.0,
            }
        )
        table = pd.DataFrame(rows)
        table["cumulative_share"] = table["share"].cumsum()
        last = float(self.stages["cost_usd"].iloc[-1])
        label = np.nan if label_cost_usd is None else float(label_cost_usd)
        total = {
            "stage": "all",
            "n_items": len(applied),
            "share": 1.0 - pending / n,
            "cost_usd": cost + (people / n) * label,
            "cost_judges": cost,
            "cost_last_judge": last,
            "cost_people": label,
            "n_pending": pending,
        }
        return pd.concat([table, pd.DataFrame([total])], ignore_index=True)

    def for_people(self, judged: pd.DataFrame) -> pd.DataFrame:
        """The items the cascade sends to people, as a label plan the Labeler takes (``system``,
        ``case_id``, ``judge_score`` (NaN), ``sampling_probability`` (1: every escalated item is
        labelled), ``strategy`` ``cascade``, ``order``), with the items' ``output`` and ``input``
        when ``judged`` has them."""
        applied = self.apply(judged)
        escalated = applied[applied["decided_by"] == PERSON][ITEM].reset_index(drop=True)
        plan = escalated.assign(
            judge_score=np.nan, sampling_probability=1.0, strategy="cascade"
        ).assign(order=np.arange(len(escalated)))
        keep = [c for c in ("output", "input", "expected") if c in judged.columns]
        if keep:
            texts = judged.assign(
                system=system_of(judged) if "system" not in judged else judged["system"]
            )
            texts = texts.assign(
                system=texts["system"].astype(str), case_id=texts["case_id"].astype(str)
            ).drop_duplicates(ITEM)[[*ITEM, *keep]]
            plan = plan.merge(texts, on=ITEM, how="left")
        return plan

    def save(self, path: str | Path) -> Path:
        """Write the cascade as JSON (for ``jevalkit judge ... --cascade FILE``)."""
        record = {
            "format": CASCADE_FORMAT,
            "judges": list(self.judges),
            "thresholds": [None if math.isinf(t) else t for t in self.thresholds],
            "levels": list(self.levels),
            "target_agreement": self.target_agreement,
            "confidence_level": self.confidence_level,
            "n_calibration": self.n_calibration,
            "confidence_column": self.confidence_column,
            "method": self.method,
            "stages": json.loads(self.stages.to_json(orient="records")),
        }
        out = Path(path)
        out.write_text(json.dumps(record, allow_nan=False, indent=1) + "\n", encoding="utf-8")
        return out


@not_a_statistic("reads a cascade file written by Cascade.save")
def load_cascade(path: str | Path) -> Cascade:
    """Read a cascade written by :meth:`Cascade.save`.

    Example:
        >>> import tempfile
        >>> cascade, _ = _example()
        >>> again = load_cascade(cascade.save(Path(tempfile.mkdtemp()) / "c.json"))
        >>> again.thresholds == cascade.thresholds
        True
    """
    where = Path(path)
    try:
        record = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StatsError(f"{where}: not a cascade file ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != CASCADE_FORMAT:
        raise StatsError(f"{where}: not a cascade file (format {CASCADE_FORMAT!r} expected)")
    try:
        return Cascade(
            judges=tuple(str(j) for j in record["judges"]),
            thresholds=tuple(math.inf if t is None else float(t) for t in record["thresholds"]),
            stages=pd.DataFrame(record["stages"]),
            levels=tuple(str(v) for v in record["levels"]),
            target_agreement=float(record["target_agreement"]),
            confidence_level=float(record["confidence_level"]),
            n_calibration=int(record["n_calibration"]),
            confidence_column=record.get("confidence_column"),
            method=str(record["method"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StatsError(f"{where}: a cascade file without a valid {exc}") from None


def _cascade_adapter(frame: pd.DataFrame) -> Cascade:
    """The contract test's adapter: system A judges with probs from its score, B is the second
    judge; the gold column is the person's level."""
    rows = frame[frame["system"].isin(sorted(frame["system"].unique())[:2])]
    first = sorted(rows["system"].unique())[0]
    judged = pd.DataFrame(
        {
            "model": np.where(rows["system"] == first, "cheap", "strong"),
            "system": "s",
            "case_id": rows["case_id"].astype(str) + "-" + rows["repeat"].astype(str),
            "probs": [[1 - p, p] for p in rows["score"].astype(float)],
        }
    )
    truth = rows[rows["system"] == first]
    labels = pd.DataFrame(
        {
            "system": "s",
            "case_id": truth["case_id"].astype(str) + "-" + truth["repeat"].astype(str),
            "level": np.where(truth["score"].astype(float) >= 0.5, "pass", "fail"),
        }
    )
    return calibrate_cascade(
        judged,
        labels,
        judges=["cheap", "strong"],
        levels=["fail", "pass"],
        target_agreement=0.6,
        confidence_level=0.8,
        min_items=5,
    )


@estimator(
    unit="labelled item",
    estimand="per judge, the lowest confidence threshold keeping the cascade's agreement with people",
    interval="none (certified thresholds: fixed-sequence exact binomial tests per stage, union bound)",
    checks=("order", "one_case"),
    adapter=_cascade_adapter,
    calibration="calibrate_cascade",
)
def calibrate_cascade(
    judged: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    judges: Sequence[str],
    target_agreement: float = 0.9,
    confidence_level: float = 0.9,
    levels: Sequence[str] | None = None,
    confidence_column: str | None = None,
    min_items: int = 30,
) -> Cascade:
    """Calibrate a cascade of judges on labelled items: each judge, cheapest first, decides the
    items it is confident about, and people decide the rest, so that the decided verdicts agree
    with people at least ``target_agreement`` of the time with probability ``confidence_level``.

    Args:
        judged: judge rows of every judge over the same outputs (e.g. from
            :func:`jevalkit.judges.judge_models`): ``model`` (the judge), ``system`` (or
            ``label``/``model`` of the judged system), ``case_id``, ``probs`` (or the
            ``confidence_column`` and ``verdict``), optionally ``cost_usd``.
        labels: a labels file's rows (:func:`read_labels`): a uniform random sample of items.
        judges: the judge ``model`` names, cheapest first.
        target_agreement: the agreement with people to guarantee.
        confidence_level: the probability, over the labelled sample, that it holds.
        levels: the judge's levels, lowest first (default: from the judge prompt file).
        confidence_column: a column to read as the judge's confidence instead of the probability of
            its verdict (higher = surer), with its ``verdict`` column.
        min_items: thresholds with fewer calibration items above them are not tested.

    Returns:
        :class:`Cascade`: ``thresholds``, ``stages``, ``guarantee``; ``.apply()``,
        ``.summary()``, ``.for_people()`` (the Labeler's queue), ``.save()``.

    Raises:
        StatsError: no labelled item judged by every judge; labels drawn with unequal
            probabilities; a judge not in the rows.

    Example:
        >>> cascade, _ = _example()
        >>> cascade.judges, [round(t, 3) for t in cascade.thresholds]
        (('cheap', 'strong'), [0.935, 0.604])
    """
    judges = [str(j) for j in judges]
    if not judges or len(set(judges)) != len(judges):
        raise StatsError(f"judges lists the cascade's judges once each, got {judges!r}")
    present = sorted(judged["model"].dropna().astype(str).unique()) if "model" in judged else []
    absent = [j for j in judges if j not in present]
    if absent:
        raise StatsError(f"judge(s) {absent} have no rows; the judge rows hold {present}")
    if not 0 < confidence_level < 1:
        raise StatsError(
            f"confidence_level must lie strictly between 0 and 1, got {confidence_level}"
        )
    names = _levels_of(judged, levels)
    person = _person_levels(labels)
    tables = [judge_verdicts(judged, j, names, confidence_column) for j in judges]
    calibration = person
    for judge, table in zip(judges, tables, strict=True):
        calibration = calibration.merge(
            table[[*ITEM, "verdict", "confidence"]].rename(
                columns={"verdict": f"verdict::{judge}", "confidence": f"confidence::{judge}"}
            ),
            on=ITEM,
            how="inner",
        )
    if calibration.empty:
        raise StatsError(
            f"no labelled item was judged by every judge ({', '.join(judges)}): label items "
            "from the judged rows (same system and case_id)"
        )
    unknown = sorted(set(calibration["person"]) - set(names))
    if unknown:
        raise StatsError(f"labels hold levels {unknown} that the judge does not have: {names}")
    level = 1 - (1 - confidence_level) / len(judges)
    remaining = calibration
    thresholds, stages = [], []
    for judge, table in zip(judges, tables, strict=True):
        agree = (remaining[f"verdict::{judge}"] == remaining["person"]).to_numpy()
        conf = remaining[f"confidence::{judge}"].to_numpy(dtype=float)
        cost = float(table["cost_usd"].mean()) if table["cost_usd"].notna().any() else np.nan
        try:
            chosen = selective_threshold(
                conf,
                agree,
                target_agreement=target_agreement,
                confidence_level=level,
                min_items=min_items,
            )
            threshold, decided = chosen.threshold, conf >= chosen.threshold
            how, p = chosen.method, chosen.p_value
        except StatsError as exc:
            threshold, decided, how, p = math.inf, np.zeros(conf.size, bool), str(exc), np.nan
        thresholds.append(threshold)
        stages.append(
            {
                "judge": judge,
                "threshold": threshold,
                "n_reaching": int(conf.size),
                "n_decided": int(decided.sum()),
                "agreement": float(agree[decided].mean()) if decided.any() else np.nan,
                "p_value": p,
                "level": level,
                "cost_usd": cost,
                "method": how,
            }
        )
        remaining = remaining[~decided]
    return Cascade(
        judges=tuple(judges),
        thresholds=tuple(thresholds),
        stages=pd.DataFrame(stages),
        levels=tuple(names),
        target_agreement=float(target_agreement),
        confidence_level=float(confidence_level),
        n_calibration=len(calibration),
        confidence_column=confidence_column,
        method=(
            f"cascaded selective evaluation over {len(judges)} judge(s), {len(calibration)} "
            f"labelled items; each stage's threshold certified at confidence {level:.4g} "
            f"(union bound to {confidence_level:.0%})"
        ),
    )


def _example() -> tuple[Cascade, pd.DataFrame]:
    """A seeded two-judge example for the docstrings: a cheap judge and a stronger one."""
    rng = np.random.default_rng(0)
    n = 600
    truth = rng.random(n) < 0.5
    rows = []
    for judge, floor in (("cheap", 0.2), ("strong", 0.6)):
        sure = rng.uniform(0.5, 1.0, n)  # right with probability rising to 0.99 with its sureness
        right = rng.random(n) < floor + (0.99 - floor) * (sure - 0.5) / 0.5
        called = np.where(right, truth, ~truth)
        p_pass = np.where(called, sure, 1 - sure)
        for i in range(n):
            rows.append(
                {
                    "model": judge,
                    "system": "m",
                    "case_id": f"c{i:03d}",
                    "probs": [1 - p_pass[i], p_pass[i]],
                    "cost_usd": 0.0 if judge == "cheap" else 0.002,
                }
            )
    judged = pd.DataFrame(rows)
    labels = pd.DataFrame(
        {
            "system": "m",
            "case_id": [f"c{i:03d}" for i in range(300)],
            "level": np.where(truth[:300], "pass", "fail"),
        }
    )
    cascade = calibrate_cascade(
        judged, labels, judges=["cheap", "strong"], levels=["fail", "pass"], target_agreement=0.8
    )
    return cascade, judged
