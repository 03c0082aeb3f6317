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

A judge's confidence is the mean over its k calls per item (repeats; both orders of a pairwise
game), with k recorded per judge; where the cascade is used, each stage compares the new items'
confidence with its calibration items' (:mod:`._shift`), and a shift voids the guarantee: every
item goes to a person unless the caller accepts it.

A second, weaker kind of guarantee is offered by name, ``guarantee="expected"``: each
judge's threshold by conformal risk control (:func:`jevalkit.stats.risk_controlled_threshold`),
so that in expectation over calibrations and a new item at most ``risk`` of all items are
decided by a judge against a person; it promises no agreement among the decided items and
nothing with a stated probability for one calibration.

What is not guaranteed: agreement per item, per system or per slice; items unlike the
calibration items (another judge prompt, another kind of output, a shifted mix of systems); and
labels that were not a uniform random sample of the items (refused here).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..contract import Result, estimator, not_a_statistic
from ..errors import JevalkitError, StatsError
from ..files import read_text, write_file
from ..judges import JudgeConfig, load_cases, load_judge_prompt
from ..results import MAX_REPEATS, check_count
from ..stats import agreement_curve, risk_controlled_threshold, selective_threshold
from ._calls import judge_items
from ._cascade_design import CascadeDesign
from ._judge_rows import (
    ITEM,
    NO_SYSTEM,
    PENDING,
    PERSON,
    CascadeStage,
    item_systems,
    judge_names,
    route,
)
from ._people import check_like_the_judged, judge_levels, person_levels, with_people
from ._shift import SHIFT_ALPHA, SHIFT_COLUMNS, reference_sample, shift_check

CASCADE_FORMAT = "jevalkit-cascade/2"  # /2: calls and calibration confidences per judge
HIGH_PROBABILITY = "high-probability"  # the default guarantee: fixed-sequence tests per stage
EXPECTED = "expected"  # conformal risk control: a decided-and-wrong rate in expectation
GUARANTEES = (HIGH_PROBABILITY, EXPECTED)


def _evaluator_of(rows: pd.DataFrame) -> tuple[str | None, str | None]:
    """``id@version`` and content hash of the judge prompt the rows were judged with (None
    when they do not say, or say several)."""
    if "probe" not in rows.columns or "version" not in rows.columns:
        return None, None
    refs = rows[["probe", "version"]].dropna().drop_duplicates()
    if len(refs) != 1:
        return None, None
    probe, version = refs.iloc[0]
    hashes = rows["probe_hash"].dropna().unique() if "probe_hash" in rows else []
    return f"{probe}@{int(version)}", (str(hashes[0]) if len(hashes) == 1 else None)


def _stage_of(rows: pd.DataFrame, name: str) -> CascadeStage:
    """How the rows of judge ``name`` were asked: its model, parameters, endpoint, repeats."""
    model = str(rows["model"].iloc[0])
    digests = rows["params_hash"].dropna().astype(str).unique() if "params_hash" in rows else []
    digests = [d for d in digests if d]
    params = rows["parameters"].dropna() if "parameters" in rows else pd.Series(dtype=object)
    first = params.iloc[0] if len(params) else None
    try:
        config = JudgeConfig.from_parameters(first) if isinstance(first, dict) else None
    except JevalkitError:
        config = None
    embedded = model == "local" or ("model_sha256" in rows and rows["model_sha256"].notna().any())
    urls = rows["base_url"].dropna().astype(str).unique() if "base_url" in rows else []
    keys = [item_systems(rows), rows["case_id"].astype(str)]
    # repeats per item (a pairwise game's two orders are one repeat, two calls)
    per_item = (
        rows.groupby(keys)["repeat"].nunique() if "repeat" in rows else rows.groupby(keys).size()
    )
    return CascadeStage(
        name=name,
        model=model,
        threshold=math.inf,
        config=config,
        params_hash=digests[0] if len(digests) == 1 else None,
        base_url=None if embedded or len(urls) != 1 else urls[0],
        repeats=int(per_item.max()) if len(per_item) else 1,
    )


def _by_cost(judged: pd.DataFrame) -> list[str]:
    """Every judge in the rows, cheapest first by mean ``cost_usd`` per row."""
    if "model" not in judged.columns:
        raise StatsError("no 'model' column: the judge rows must say which judge judged them")
    names = judge_names(judged)
    cost = (
        pd.to_numeric(judged["cost_usd"], errors="coerce")
        if "cost_usd" in judged.columns
        else pd.Series(np.nan, index=judged.index)
    )
    mean = cost.astype(float).groupby(names).mean()
    if mean.isna().any() or mean.duplicated().any():
        raise StatsError(
            f"say the cascade's order (judges=[...], cheapest first): the costs of the judges "
            f"{sorted(mean.index)} do not order them ({mean.round(6).to_dict()})"
        )
    return mean.sort_values().index.tolist()


def _judge_rows(judged: pd.DataFrame, judges: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Each named judge's rows; a name is a :func:`jevalkit.labels.judge_names` name (a model,
    or a model with the parameters that tell its judges apart)."""
    if "model" not in judged.columns:
        raise StatsError("no 'model' column: the judge rows must say which judge judged them")
    if "case_id" not in judged.columns:
        raise StatsError("no 'case_id' column: these are not judged results")
    names = judge_names(judged)
    present = sorted(set(names))
    out = {}
    for judge in judges:
        mine = judged[names == judge]
        if mine.empty:
            several = [n for n in present if n.startswith(f"{judge}[")]
            hint = (
                f"model {judge!r} judged with {len(several)} sets of parameters: name one of "
                f"{several}"
                if several
                else f"the judge rows hold {present}"
            )
            raise StatsError(f"judge {judge!r} has no rows; {hint}")
        out[judge] = mine
    return out


def _digest(record: dict[str, Any]) -> str:
    """A hash of what the guarantee rests on (the judges, their parameters, thresholds, repeats
    and calls, their endpoints, the calibration confidences the shift check compares with, the
    levels, the prompt, the target, and the kind of guarantee with its risk when it is not the
    default): a file edited by hand no longer matches. A judge moved to
    another address is another judge: recalibrate, or give ``--base-url``."""
    fields = ("format", "evaluator", "prompt_hash", "levels", "target_agreement",
              "confidence_level", "n_calibration", "confidence_column", "min_items",
              "start")  # fmt: skip
    per_judge = ("name", "model", "threshold", "parameters", "params_hash", "repeats", "calls",
                 "calibration_confidence", "base_url")  # fmt: skip
    kept = {k: record[k] for k in fields}
    kind = record.get("guarantee_kind", HIGH_PROBABILITY)
    if kind != HIGH_PROBABILITY:  # the default kind is left out: files from before it match
        kept["guarantee_kind"] = kind
        kept["risk"] = record.get("risk")
    kept["stages"] = [{k: s.get(k) for k in per_judge} for s in record["steps"]]
    text = json.dumps(kept, sort_keys=True, allow_nan=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _check_has_rows_of(steps: Sequence[CascadeStage], judged: pd.DataFrame) -> None:
    """Refuse rows none of which are by the cascade's judges (another model, or the same model
    asked with other judge parameters): the cascade would route nothing and say nothing."""
    if judged.empty or any(len(step.rows_of(judged)) for step in steps):
        return
    present = sorted(set(judge_names(judged))) if "model" in judged.columns else []
    models = {step.model for step in steps}
    other_way = sorted({str(m) for m in judged.get("model", pd.Series(dtype=object))} & models)
    hint = (
        f"model(s) {other_way} are there, judged with other judge parameters (params_hash) than "
        "calibrated"
        if other_way
        else f"the rows hold {present[:5]}"
    )
    raise StatsError(
        f"none of the {len(judged)} rows is by the cascade's judges "
        f"({', '.join(s.name for s in steps)}): {hint}; apply the cascade to rows of the judges "
        "it was calibrated on, asked the same way"
    )


def _step_record(step: CascadeStage, calls: int, reference: tuple[float, ...]) -> dict[str, Any]:
    return {
        "name": step.name,
        "model": step.model,
        "threshold": None if math.isinf(step.threshold) else step.threshold,
        "parameters": None if step.config is None else step.config.parameters(),
        "params_hash": step.params_hash,
        "base_url": step.base_url,
        "repeats": step.repeats,
        "calls": calls,
        "calibration_confidence": list(reference),
    }


@dataclass(frozen=True)
class Cascade(Result):
    """A calibrated cascade of judges (see :func:`calibrate_cascade`).

    Attributes:
        judges: the judges, cheapest first (:func:`jevalkit.labels.judge_names` names).
        thresholds: each judge's certified confidence threshold (inf: it decides nothing).
        stages: one row per judge: ``judge``, ``threshold``, ``n_reaching`` (calibration items
            that reached it), ``n_judged`` (of those, with a judgment), ``n_decided``,
            ``agreement`` (on those it decided, in sample), ``p_value``, ``level`` (the
            confidence level of its test), ``calls`` (k: the calls per item its confidence is
            the mean of), ``first_test`` (the items its first test covered), ``cost_usd``
            (mean per item it judged, its k calls together), ``method`` (how its threshold was
            chosen, or why none was).
        curves: agreement against coverage of each judge alone over every calibration item:
            ``judge``, ``threshold``, ``n``, ``agreement``, ``coverage``
            (:func:`jevalkit.stats.agreement_curve`), ``chosen`` (the judge's threshold).
        steps: how to run each judge (:class:`jevalkit.labels.CascadeStage`: model, judge
            parameters, endpoint, repeats, threshold).
        levels: the judge's levels, lowest first.
        target_agreement, confidence_level: the guarantee asked for.
        n_calibration: labelled items the cascade was calibrated on; ``n_labels_unused``:
            labelled items no judge row covers (not used).
        evaluator, prompt_hash: the judge prompt (``id@version``) and its content hash.
        confidence_column: the column read as confidence (``None``: the judges' ``probs``).
        min_items, start: the floor and the share of the first test's items (None: the
            defaults of :func:`jevalkit.stats.selective_threshold`).
        method: how it was calibrated.
        calls: each judge's calls per item (k; its confidence is their mean).
        references: each judge's calibration confidences (the labelled items that reached it,
            sorted; at most 1,000 quantiles), what :meth:`shift` compares new items with.
        guarantee_kind: ``"high-probability"`` (agreement among decided items with probability
            ``confidence_level``) or ``"expected"`` (conformal risk control: at most ``risk``
            of all items decided against a person, in expectation over calibrations; then
            ``target_agreement`` and ``confidence_level`` are not used, and a stage's
            ``p_value`` and ``level`` are NaN).
        risk: the expected decided-and-wrong rate of an ``"expected"`` cascade (None
            otherwise).
    """

    judges: tuple[str, ...]
    thresholds: tuple[float, ...]
    stages: pd.DataFrame = field(repr=False)
    curves: pd.DataFrame = field(repr=False)
    steps: tuple[CascadeStage, ...] = field(repr=False)
    levels: tuple[str, ...]
    target_agreement: float
    confidence_level: float
    n_calibration: int
    n_labels_unused: int
    evaluator: str | None
    prompt_hash: str | None
    confidence_column: str | None
    min_items: int | None
    method: str
    calls: tuple[int, ...] = ()
    references: tuple[tuple[float, ...], ...] = field(default=(), repr=False)
    start: float | None = None
    guarantee_kind: str = HIGH_PROBABILITY
    risk: float | None = None

    @property
    def guarantee(self) -> str:
        """What is guaranteed, in words."""
        if self.guarantee_kind == EXPECTED:
            return self._expected_words()
        if all(math.isinf(t) for t in self.thresholds):
            return (
                f"no judge certified {self.target_agreement:.0%} agreement with "
                f"{self.confidence_level:.0%} confidence on {self.n_calibration} labelled items: "
                "every item goes to a person"
            )
        return (
            f"with probability at least {self.confidence_level:.0%} over the calibration draw, "
            f"the verdicts this cascade does not send to a person agree with a person at least "
            f"{self.target_agreement:.0%} of the time, on average over items like the "
            f"{self.n_calibration} calibration items (not per item, and not for other kinds of "
            "items)"
        )

    def _expected_words(self) -> str:
        risk = float(self.risk or 0.0)
        if all(math.isinf(t) for t in self.thresholds):
            return (
                f"no judge could keep the expected share of items decided against a person at "
                f"{risk:.3g} on {self.n_calibration} labelled items: every item goes to a person"
            )
        return (
            f"in expectation over the calibration draw and a new item like the "
            f"{self.n_calibration} calibration items, at most {risk:.3g} of all items (people's "
            f"included) are decided by a judge against a person (conformal risk control, "
            f"{risk / len(self.judges):.3g} per judge); NOT the agreement among the decided "
            "items, and NOT for this calibration with any stated probability (a given "
            "calibration can exceed it); not per item, and not for other kinds of items"
        )

    def scalars(self) -> dict[str, Any]:
        """The headline: the fields that are numbers or text, the ``guarantee``, and on the
        calibration items the share a judge decided (``coverage_calibration``) and the
        agreement of those verdicts (``agreement_calibration``, in sample)."""
        decided = int(self.stages["n_decided"].sum())
        agreed = float((self.stages["agreement"].fillna(0) * self.stages["n_decided"]).sum())
        return {
            **super().scalars(),
            "judges": ", ".join(self.judges),
            "guarantee": self.guarantee,
            "coverage_calibration": decided / self.n_calibration if self.n_calibration else 0.0,
            "agreement_calibration": agreed / decided if decided else math.nan,
        }

    def table(self) -> pd.DataFrame:
        """The stages (one row per judge)."""
        return self.stages.copy()

    def oracle_band(self) -> pd.DataFrame:
        """What each judge alone could decide on the calibration items, against what it was
        certified for: one row per judge with ``judge``, ``n`` (calibration items it judged),
        ``certified`` (the share of them at or above its threshold; 0 when it decides
        nothing), ``oracle`` (the largest share whose agreement, in sample, is at least the
        target: what a threshold chosen knowing the labels would take; optimistic),
        ``oracle_low`` and ``oracle_high`` (the largest shares whose exact (Clopper-Pearson)
        two-sided ``confidence_level`` interval of agreement lies above the target, and
        reaches it: where the true oracle plausibly is, pointwise). Descriptive: only
        ``certified`` comes with the guarantee.

        Example:
            >>> cascade, _ = _example()
            >>> band = cascade.oracle_band().set_index("judge")
            >>> bool((band["oracle_low"] <= band["oracle"]).all() and (band["oracle"] <= band["oracle_high"]).all())
            True
        """
        alpha = 1 - self.confidence_level
        rows = []
        for judge in self.judges:
            curve = self.curves[self.curves["judge"] == judge]
            if curve.empty:
                rows.append({"judge": judge, "n": 0, "certified": 0.0, "oracle": 0.0,
                             "oracle_low": 0.0, "oracle_high": 0.0})  # fmt: skip
                continue
            n = curve["n"].to_numpy(dtype=float)
            k = np.round(curve["agreement"].to_numpy(dtype=float) * n)
            low = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
            high = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
            coverage = curve["coverage"].to_numpy(dtype=float)
            chosen = coverage[curve["chosen"].to_numpy(dtype=bool)]

            def largest(ok: np.ndarray, coverage: np.ndarray = coverage) -> float:
                return float(coverage[ok].max()) if ok.any() else 0.0

            rows.append(
                {
                    "judge": judge,
                    "n": int(n.max()),
                    "certified": float(chosen.max()) if chosen.size else 0.0,
                    "oracle": largest(curve["agreement"].to_numpy() >= self.target_agreement),
                    "oracle_low": largest(low >= self.target_agreement),
                    "oracle_high": largest(high >= self.target_agreement),
                }
            )
        return pd.DataFrame(rows)

    def _verdicts(self, judged: pd.DataFrame) -> list[pd.DataFrame]:
        evaluator, prompt_hash = _evaluator_of(judged)
        other_prompt = (self.evaluator is not None and evaluator not in (None, self.evaluator)) or (
            self.prompt_hash is not None and prompt_hash not in (None, self.prompt_hash)
        )
        if other_prompt:
            raise StatsError(
                f"these rows were judged with {evaluator} (prompt {prompt_hash}), the cascade was "
                f"calibrated on {self.evaluator} (prompt {self.prompt_hash}): its guarantee does "
                "not hold for another judge prompt; calibrate a cascade for it"
            )
        _check_has_rows_of(self.steps, judged)
        return [
            judge_items(
                step.rows_of(judged),
                self.levels,
                calls=k,
                confidence_column=self.confidence_column,
                judge_name=step.name,
            )[0]
            for step, k in zip(self.steps, self.calls, strict=True)
        ]

    def _routed(self, judged: pd.DataFrame) -> tuple[list[pd.DataFrame], pd.DataFrame]:
        verdicts = self._verdicts(judged)
        items = pd.concat([v[ITEM] for v in verdicts]).drop_duplicates().sort_values(ITEM)
        return verdicts, route(items, verdicts, self.steps)

    def _shift(
        self, verdicts: list[pd.DataFrame], routed: pd.DataFrame, alpha: float
    ) -> pd.DataFrame:
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
            raise StatsError(f"shift_alpha must lie strictly between 0 and 1, got {alpha!r}")
        deciding = [not math.isinf(t) for t in self.thresholds]
        level = alpha / max(sum(deciding), 1)  # a union bound over the stages tested
        reaching = np.ones(len(routed), dtype=bool)
        rows = []
        for step, table, reference, decides in zip(
            self.steps, verdicts, self.references, deciding, strict=True
        ):
            here = routed.loc[reaching, ITEM].merge(table[[*ITEM, "confidence"]], on=ITEM)
            if decides:  # a judge certified for nothing is not asked: nothing to compare
                rows.append(
                    shift_check(
                        step.name,
                        step.threshold,
                        np.asarray(reference, dtype=float),
                        here["confidence"].to_numpy(dtype=float),
                        level,
                    )
                )
            by = routed["decided_by"]
            reaching &= ((by != step.name) & (by != PENDING + step.name)).to_numpy()
        return pd.DataFrame(rows, columns=SHIFT_COLUMNS)

    def shift(self, judged: pd.DataFrame, *, alpha: float = SHIFT_ALPHA) -> pd.DataFrame:
        """Are ``judged``'s items like the calibration items? Per judge that decides anything,
        the confidences of the new items that reach it against its calibration items' (a
        two-sample Kolmogorov-Smirnov test; the stages together at ``alpha``, each at ``alpha``
        over their number): ``judge``, ``n_calibration``, ``n_new``, ``statistic`` (D, the
        largest gap between the two distribution functions), ``location`` (the confidence
        where it is), ``p_value``, ``level``, ``shifted``, ``median_calibration``,
        ``median_new``, ``above_calibration`` and ``above_new`` (the shares at or above the
        judge's threshold), ``message`` (how they differ; None when they do not).

        Example:
            >>> cascade, judged = _example()
            >>> cascade.shift(judged)[["judge", "shifted"]].values.tolist()
            [['cheap', False], ['strong', False]]
        """
        return self._shift(*self._routed(judged), alpha)

    def apply(
        self,
        judged: pd.DataFrame,
        *,
        accept_shift: bool = False,
        shift_alpha: float = SHIFT_ALPHA,
    ) -> pd.DataFrame:
        """One row per item of ``judged``: ``system``, ``case_id``, ``verdict``, ``decided_by``
        (a judge, ``person``, or ``pending: <judge>`` when the item needs a judge whose rows are
        not there yet), ``confidence`` (the deciding judge's, NaN for a person), ``shift``
        (None, or which stage's confidences differ from the calibration items' and how:
        :meth:`shift`). An item a judge judged without a verdict (an error among its calls)
        goes on to the next judge.

        When a stage's new items are not like its calibration items (p < ``shift_alpha``), the
        guarantee does not hold for them and every item goes to a person, unless
        ``accept_shift`` (then the items are routed as usual and ``shift`` says it was
        accepted).

        Raises:
            StatsError: another judge prompt than the calibration's; a judge's items judged
                with another number of calls than it was calibrated on.

        Example:
            >>> cascade, judged = _example()
            >>> out = cascade.apply(judged)
            >>> sorted(set(out["decided_by"])), bool(out["shift"].isna().all())
            (['cheap', 'person', 'strong'], True)
        """
        return self._apply(judged, accept_shift, shift_alpha)[0]

    def _apply(
        self, judged: pd.DataFrame, accept_shift: bool, shift_alpha: float
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """:meth:`apply`'s table and :meth:`shift`'s."""
        if not isinstance(accept_shift, bool | np.bool_):
            raise StatsError(f"accept_shift must be True or False, got {accept_shift!r}")
        accept_shift = bool(accept_shift)
        verdicts, routed = self._routed(judged)
        tests = self._shift(verdicts, routed, shift_alpha)
        shifted = tests[tests["shifted"]]
        if shifted.empty:
            return routed.assign(shift=None), tests
        said = "; ".join(shifted["message"])
        if accept_shift:
            return routed.assign(shift=f"accepted: {said}"), tests
        void = (
            f"{said}: the guarantee does not hold for items unlike the calibration items, so "
            "every item goes to a person (accept_shift=True, or --accept-shift, applies the "
            "cascade anyway)"
        )
        routed = routed.assign(verdict=None, decided_by=PERSON, confidence=np.nan, shift=void)
        return routed, tests

    def summary(
        self,
        judged: pd.DataFrame,
        *,
        label_cost_usd: float | None = None,
        accept_shift: bool = False,
        shift_alpha: float = SHIFT_ALPHA,
    ) -> pd.DataFrame:
        """How ``judged``'s items go through the cascade, one row per stage and one for people:
        ``stage``, ``n_items`` (decided there), ``share``, ``cumulative_share``, ``cost_usd``
        (per item judged there; a person's is ``label_cost_usd``; a judge with threshold inf is
        not asked, so it adds nothing to the cascade's cost), ``agreement_calibration``
        (on the calibration items it decided), and a last row ``all``: ``cost_usd`` the expected
        cost per item of the cascade (people included, NaN without ``label_cost_usd``),
        ``cost_judges`` its judges' share, ``cost_last_judge`` the last judge on every item,
        ``cost_people`` a person on every item, ``n_pending`` items waiting for a judge,
        ``shift`` what :meth:`apply` says of a shift (None: none found). With a shift not
        accepted, every item goes to people (``accept_shift``, ``shift_alpha``: as for
        :meth:`apply`); the stage rows carry ``shift_p_value`` (NaN: not tested).

        Example:
            >>> cascade, judged = _example()
            >>> total = cascade.summary(judged, label_cost_usd=0.5).iloc[-1]
            >>> bool(total["cost_judges"] < total["cost_last_judge"] < total["cost_people"])
            True
        """
        applied, tests = self._apply(judged, accept_shift, shift_alpha)
        tests = tests.set_index("judge")["p_value"]
        n = max(len(applied), 1)
        rows, reach, cost = [], 1.0, 0.0
        for judge, stage in zip(self.judges, self.stages.itertuples(index=False), strict=True):
            k = int((applied["decided_by"] == judge).sum())
            per_item = float(stage.cost_usd)
            if not math.isinf(stage.threshold):  # a judge certified for nothing is not asked
                cost += reach * per_item
            rows.append(
                {
                    "stage": judge,
                    "n_items": k,
                    "share": k / n,
                    "cost_usd": per_item,
                    "agreement_calibration": stage.agreement,
                    "shift_p_value": float(tests.get(judge, np.nan)),
                }
            )
            reach -= k / n
        people = int((applied["decided_by"] == PERSON).sum())
        pending = int(applied["decided_by"].str.startswith("pending").sum())
        label = np.nan if label_cost_usd is None else float(label_cost_usd)
        rows.append(
            {
                "stage": PERSON,
                "n_items": people,
                "share": people / n,
                "cost_usd": label,
                "agreement_calibration": 1.0,
            }
        )
        table = pd.DataFrame(rows)
        table["cumulative_share"] = table["share"].cumsum()
        total = {
            "stage": "all",
            "n_items": len(applied),
            "share": 1.0 - pending / n,
            "cost_usd": cost + (people / n) * label,
            "cost_judges": cost,
            "cost_last_judge": float(self.stages["cost_usd"].iloc[-1]),
            "cost_people": label,
            "n_pending": pending,
            "shift": applied["shift"].iloc[0] if len(applied) else None,
        }
        return pd.concat([table, pd.DataFrame([total])], ignore_index=True)

    def for_people(
        self,
        judged: pd.DataFrame,
        *,
        cases: Any = None,
        accept_shift: bool = False,
        shift_alpha: float = SHIFT_ALPHA,
    ) -> pd.DataFrame:
        """The items the cascade sends to people, as a label plan the Labeler takes (``system``,
        ``case_id``, ``judge_score`` (NaN), ``sampling_probability`` (1: every escalated item is
        labelled), ``strategy`` ``cascade``, ``order``), with what the labeller reads:
        ``input``, ``output``, ``expected``, ``context`` of each case, from ``cases`` (the case
        file the judges read, its path or its list of cases), or from ``judged`` when its rows
        are not judge rows (a judge row's ``output`` is its verdict, never the judged answer).
        With a shift not accepted (:meth:`apply`), every item.

        Raises:
            StatsError: judge rows and no ``cases``: the answers to label are not in them.

        Example:
            >>> cascade, judged = _example()
            >>> plan = cascade.for_people(judged, cases=[{"id": f"c{i:03d}", "output": "x"} for i in range(600)])
            >>> bool((plan["output"] == "x").all()), bool((plan["sampling_probability"] == 1).all())
            (True, True)
        """
        applied = self.apply(judged, accept_shift=accept_shift, shift_alpha=shift_alpha)
        escalated = applied[applied["decided_by"] == PERSON][ITEM].reset_index(drop=True)
        plan = escalated.assign(
            judge_score=np.nan, sampling_probability=1.0, strategy="cascade"
        ).assign(order=np.arange(len(escalated)))
        texts = _case_texts(cases) if cases is not None else None
        if texts is None:
            is_judge = "kind" in judged.columns and (judged["kind"] == "judge").any()
            keep = [c for c in ("input", "output", "expected", "context") if c in judged.columns]
            if is_judge or not keep:
                raise StatsError(
                    "the judge rows do not hold the answers people should label (a judge row's "
                    "output is its verdict): pass cases= (the case file the judges read)"
                )
            texts = judged.assign(
                system=item_systems(judged), case_id=judged["case_id"].astype(str)
            )
            texts = texts.drop_duplicates(ITEM)[[*ITEM, *keep]]
            return plan.merge(texts, on=ITEM, how="left")
        missing = sorted(set(plan["case_id"]) - set(texts["case_id"]))
        if missing:
            raise StatsError(
                f"{len(missing)} escalated case(s) are not in cases (e.g. {missing[0]!r}): pass "
                "the case file the judges read"
            )
        return plan.merge(texts, on="case_id", how="left")

    def design(
        self,
        *,
        source: str = "caller",
        accept_shift: bool = False,
        shift_alpha: float = SHIFT_ALPHA,
    ) -> CascadeDesign:
        """The cascade as a design to run lazily on new cases
        (``jevalkit.runner.judge(cascade.evaluator, cases, design=cascade.design())``): each
        judge is sent only the cases the judges before it were not confident about (read as
        :meth:`apply` reads them: its calls per item, the shift check), its rows in its own
        results file (``out`` with ``__<judge>``). After each judge answers, the new cases'
        confidences are compared with the calibration items' (:meth:`shift`): when they
        differ, no later judge is sent anything and every case goes to people, unless
        ``accept_shift``. ``source``: where the cascade was read from (its file's path; an
        endpoint named only there is sent no key unless the user confirms it).

        Raises:
            StatsError: the cascade does not name its judge prompt, or the prompt changed
                since calibration.

        Example:
            >>> cascade, _ = _example()
            >>> cascade.design()
            Traceback (most recent call last):
            ...
            jevalkit.errors.StatsError: this cascade was calibrated on rows that name no judge prompt: apply it to judged rows (Cascade.apply) instead of running it
        """
        if self.evaluator is None:
            raise StatsError(
                "this cascade was calibrated on rows that name no judge prompt: apply it to "
                "judged rows (Cascade.apply) instead of running it"
            )
        prompt = load_judge_prompt(self.evaluator)
        if self.prompt_hash is not None and prompt.content_hash != self.prompt_hash:
            raise StatsError(
                f"the judge prompt {self.evaluator} changed since the cascade was calibrated "
                f"(content hash {prompt.content_hash[:12]}, calibrated {self.prompt_hash[:12]}): "
                "calibrate again"
            )
        if prompt.kind == "pairwise":
            raise StatsError(
                f"{self.evaluator}: a cascade decides single items; a pairwise judge plays "
                "games in both orders (not supported)"
            )
        if not isinstance(accept_shift, bool | np.bool_):
            raise StatsError(f"accept_shift must be True or False, got {accept_shift!r}")
        return CascadeDesign(
            stages=self.steps,
            levels=self.levels,
            evaluator=self.evaluator,
            confidence_column=self.confidence_column,
            source=source,
            digest=self.digest,
            cascade=self,
            accept_shift=bool(accept_shift),
            shift_alpha=shift_alpha,
        )

    @property
    def digest(self) -> str:
        """The digest of what the guarantee rests on (as the cascade file records it)."""
        return _digest(self._record())

    def save(self, path: str | Path) -> Path:
        """Write the cascade as JSON (for ``jevalkit judge ... --cascade FILE``), with a digest
        of what its guarantee rests on, so that a file edited by hand is refused when read.

        The file (format ``jevalkit-cascade/2``) holds the guarantee in words, what was asked
        (target, level, levels, judge prompt and its hash, ``min_items``, ``start``), per judge
        in ``steps`` how to run it (model, parameters, endpoint, ``repeats``), its threshold
        (null: none), ``calls`` (its calls per item, k) and ``calibration_confidence`` (the
        confidences of the labelled items that reached it, sorted, 8 significant digits, at
        most 1,000 quantiles: what the shift check compares new items with; about 10 bytes an
        item), then the ``stages`` and ``curves`` tables as records, and the ``digest``."""
        record = self._record()
        record["digest"] = _digest(record)
        text = json.dumps(record, allow_nan=False, indent=1) + "\n"
        return Path(write_file(path, text, StatsError, what="cascade file"))

    def _record(self) -> dict[str, Any]:
        """The cascade file's record, without its digest."""
        return {
            "format": CASCADE_FORMAT,
            "guarantee": self.guarantee,
            "evaluator": self.evaluator,
            "prompt_hash": self.prompt_hash,
            "levels": list(self.levels),
            "target_agreement": self.target_agreement,
            "confidence_level": self.confidence_level,
            "n_calibration": self.n_calibration,
            "n_labels_unused": self.n_labels_unused,
            "confidence_column": self.confidence_column,
            "min_items": self.min_items,
            "start": self.start,
            "guarantee_kind": self.guarantee_kind,
            "risk": self.risk,
            "method": self.method,
            "steps": [
                _step_record(step, k, reference)
                for step, k, reference in zip(self.steps, self.calls, self.references, strict=True)
            ],
            "stages": json.loads(self.stages.to_json(orient="records", double_precision=15)),
            "curves": json.loads(self.curves.to_json(orient="records", double_precision=15)),
        }


def _case_texts(cases: Any) -> pd.DataFrame:
    """``case_id`` and the texts a labeller reads, from a case file, its path or its cases."""
    if isinstance(cases, pd.DataFrame):
        records = cases.to_dict("records")
    elif isinstance(cases, str | Path):
        records = load_cases(cases)
    else:
        records = list(cases)
    rows = []
    for case in records:
        if not isinstance(case, dict) or ("id" not in case and "case_id" not in case):
            raise StatsError("cases: each case needs an 'id' (the case file the judges read)")
        rows.append(
            {
                "case_id": str(case.get("id", case.get("case_id"))),
                **{k: case.get(k) for k in ("input", "output", "expected", "context")},
            }
        )
    return pd.DataFrame(rows, dtype=object).drop_duplicates("case_id")


MAX_CASCADE_BYTES = 16 * 1024 * 1024  # far more than any cascade's curves and stages
# the fields of a stage record (Cascade.stages' columns)
STAGE_FIELDS = (
    "judge",
    "n_reaching",
    "n_judged",
    "n_decided",
    "agreement",
    "p_value",
    "level",
    "cost_usd",
    "method",
)


def _number(record: dict, key: str, where: Path, *, low: float, high: float) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < high:
        raise StatsError(f"{where}: {key} must be a number between {low} and {high}, got {value!r}")
    return float(value)


def _read_step(
    raw: Any, where: Path, i: int, *, probability: bool
) -> tuple[CascadeStage, int, tuple[float, ...]]:
    at = f"{where}: steps[{i}]"
    if not isinstance(raw, dict):
        raise StatsError(f"{at}: must be an object")
    for key in ("name", "model"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise StatsError(f"{at}.{key}: must be a non-empty text")
    threshold = raw.get("threshold")
    # a probability, or a declared confidence score on its own scale (confidence_column)
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
    ):
        raise StatsError(f"{at}.threshold: must be a finite number or null, got {threshold!r}")
    # bounded before anything is planned: repeats 1,000,000 planned every job in memory
    repeats = check_count(raw.get("repeats", 1), f"{at}.repeats", StatsError, high=MAX_REPEATS)
    params = raw.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise StatsError(f"{at}.parameters: must be an object or null, got {params!r}")
    try:
        config = None if params is None else JudgeConfig.from_parameters(params)
    except (JevalkitError, TypeError, ValueError) as exc:
        raise StatsError(f"{at}.parameters: {exc}") from None
    for key in ("params_hash", "base_url"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise StatsError(f"{at}.{key}: must be a text or null")
    calls = raw.get("calls")
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise StatsError(f"{at}.calls: must be a whole number >= 1, got {calls!r}")
    # calls are the repeats, or both orders of each (a pairwise judge)
    if calls not in (repeats, 2 * repeats):
        raise StatsError(
            f"{at}.calls: {calls} calls per item for {repeats} repeat(s); a judge makes one call "
            "per repeat (two for a pairwise judge's two orders)"
        )
    reference = raw.get("calibration_confidence")
    if not isinstance(reference, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in reference
    ):
        raise StatsError(f"{at}.calibration_confidence: must be a list of finite numbers")
    # a judge that decides is shift-checked against these: fewer than two turn the check off
    if threshold is not None and len(reference) < 2:
        raise StatsError(
            f"{at}.calibration_confidence: a judge with a threshold needs the confidences of "
            f"its calibration items (the shift check compares new items with them), got "
            f"{len(reference)}"
        )
    if probability and (
        (threshold is not None and not 0 <= threshold <= 1)
        or any(not 0 <= v <= 1 for v in reference)
    ):
        raise StatsError(
            f"{at}: threshold and calibration_confidence are probabilities of the judge's "
            f"verdict (no confidence_column), so between 0 and 1; got threshold {threshold!r}"
        )
    stage = CascadeStage(
        name=raw["name"],
        model=raw["model"],
        threshold=math.inf if threshold is None else float(threshold),
        config=config,
        params_hash=raw.get("params_hash"),
        base_url=raw.get("base_url"),
        repeats=repeats,
    )
    return stage, calls, tuple(float(v) for v in reference)


@not_a_statistic("reads a cascade file written by Cascade.save")
def load_cascade(path: str | Path) -> Cascade:
    """Read a cascade written by :meth:`Cascade.save`; every field is checked, and a file whose
    judges, thresholds, levels or target no longer match the digest written with them (edited by
    hand) is refused: its guarantee would not hold. The endpoints (``base_url``) are in the
    digest too; a file of the first format, ``jevalkit-cascade/1`` (no calibration confidences
    for the shift check), is refused with the advice to calibrate again. A key goes to a file's
    endpoint only as :func:`jevalkit.client.check_file_endpoint` allows (the command line checks
    it). The digest is a checksum, not a signature: it catches an edit, not someone who
    recomputes it, so the fields it covers are checked for sense too. ``guarantee_kind`` (and
    ``risk``) say which guarantee the file carries; a file without them carries the default,
    ``high-probability``.

    Example:
        >>> import tempfile
        >>> cascade, _ = _example()
        >>> again = load_cascade(cascade.save(Path(tempfile.mkdtemp()) / "c.json"))
        >>> again.thresholds == cascade.thresholds
        True
    """
    where = Path(path)
    # a regular file of bounded size only (a FIFO or /dev/zero would block or fill the memory)
    text = read_text(where, StatsError, max_bytes=MAX_CASCADE_BYTES, what="cascade file")
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deep" if isinstance(exc, RecursionError) else exc
        raise StatsError(f"{where}: not a cascade file ({reason})") from None
    if isinstance(record, dict) and record.get("format") == "jevalkit-cascade/1":
        raise StatsError(
            f"{where}: a cascade file of an older jevalkit (format jevalkit-cascade/1), without "
            "the calibration confidences the shift check compares new items with: calibrate "
            "again with `jevalkit cascade calibrate`"
        )
    if not isinstance(record, dict) or record.get("format") != CASCADE_FORMAT:
        raise StatsError(f"{where}: not a cascade file (format {CASCADE_FORMAT!r} expected)")
    steps = record.get("steps")
    if not isinstance(steps, list) or not steps:
        raise StatsError(f"{where}: steps must be a list of the cascade's judges")
    column = record.get("confidence_column")
    if column is not None and not isinstance(column, str):
        raise StatsError(f"{where}: confidence_column must be a text or null")
    read = [_read_step(s, where, i, probability=column is None) for i, s in enumerate(steps)]
    parsed = tuple(stage for stage, _, _ in read)
    names = [s.name for s in parsed]
    if len(set(names)) != len(names):
        raise StatsError(f"{where}: steps name a judge twice: {names}")
    levels = record.get("levels")
    if (
        not isinstance(levels, list)
        or len(levels) < 2
        or not all(isinstance(v, str) for v in levels)
        or len(set(levels)) != len(levels)
    ):
        raise StatsError(f"{where}: levels must list two or more distinct level labels")
    kind, risk = _read_kind(record, where)
    try:
        digest = _digest(record)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StatsError(f"{where}: a cascade file without a valid {exc}") from None
    if record.get("digest") != digest:
        raise StatsError(
            f"{where}: edited after calibration (its judges, thresholds, levels or target no "
            "longer match the digest written with them), so its guarantee does not hold: "
            "calibrate again with `jevalkit cascade calibrate`"
        )
    stages = record.get("stages")
    curves = record.get("curves", [])
    if not isinstance(stages, list) or len(stages) != len(parsed) or not isinstance(curves, list):
        raise StatsError(f"{where}: stages must hold one record per judge")
    for i, stage in enumerate(stages):
        missing = [] if isinstance(stage, dict) else list(STAGE_FIELDS)
        missing = missing or [k for k in STAGE_FIELDS if k not in stage]
        if missing:
            raise StatsError(
                f"{where}: stages[{i}] lacks {', '.join(missing)}; calibrate again with "
                "`jevalkit cascade calibrate`"
            )
    for key in ("n_calibration", "n_labels_unused", "min_items"):
        value = record.get(key)
        if key == "min_items" and value is None:
            continue
        least = 1 if key == "min_items" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise StatsError(f"{where}: {key} must be a whole number >= {least}, got {value!r}")
    start = record.get("start")
    if start is not None and (
        isinstance(start, bool) or not isinstance(start, int | float) or not 0 <= start <= 1
    ):
        raise StatsError(f"{where}: start must be a share between 0 and 1 or null, got {start!r}")
    texts = {k: record.get(k) for k in ("evaluator", "prompt_hash", "confidence_column", "method")}
    for key, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise StatsError(f"{where}: {key} must be a text or null")
    return Cascade(
        judges=tuple(names),
        thresholds=tuple(s.threshold for s in parsed),
        stages=pd.DataFrame(stages).assign(threshold=[s.threshold for s in parsed]),
        curves=pd.DataFrame(curves),
        steps=parsed,
        levels=tuple(levels),
        target_agreement=_number(record, "target_agreement", where, low=0, high=1),
        confidence_level=_number(record, "confidence_level", where, low=0, high=1),
        n_calibration=record["n_calibration"],
        n_labels_unused=record["n_labels_unused"],
        evaluator=texts["evaluator"],
        prompt_hash=texts["prompt_hash"],
        confidence_column=texts["confidence_column"],
        min_items=record["min_items"],
        method=texts["method"] or "",
        calls=tuple(k for _, k, _ in read),
        references=tuple(reference for _, _, reference in read),
        start=None if start is None else float(start),
        guarantee_kind=kind,
        risk=risk,
    )


def _read_kind(record: dict[str, Any], where: Path) -> tuple[str, float | None]:
    """The kind of guarantee a cascade file records, and its risk (a file without them, as
    written before the second kind, is of the default kind)."""
    kind = record.get("guarantee_kind", HIGH_PROBABILITY)
    risk = record.get("risk")
    if kind not in GUARANTEES:
        raise StatsError(f"{where}: guarantee_kind must be one of {list(GUARANTEES)}, got {kind!r}")
    if kind == HIGH_PROBABILITY:
        if risk is not None:
            raise StatsError(
                f"{where}: risk {risk!r} in a {HIGH_PROBABILITY!r} cascade (risk belongs to "
                f"guarantee_kind {EXPECTED!r}): calibrate again with `jevalkit cascade calibrate`"
            )
        return kind, None
    return kind, _number(record, "risk", where, low=0, high=1)


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
    interval="none (certified thresholds: fixed-sequence exact binomial tests per stage in an order "
    "fixed before labels are seen, union bound)",
    checks=("order", "one_case"),
    adapter=_cascade_adapter,
    calibration="calibrate_cascade",
)
def calibrate_cascade(
    judged: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    target_agreement: float = 0.9,
    confidence_level: float = 0.9,
    levels: Sequence[str] | None = None,
    confidence_column: str | None = None,
    min_items: int | None = None,
    start: float | None = None,
    guarantee: str = HIGH_PROBABILITY,
    risk: float | None = None,
) -> Cascade:
    """Calibrate a cascade of judges on labelled items: each judge, cheapest first, decides the
    items it is confident about, and people decide the rest, so that the decided verdicts agree
    with people at least ``target_agreement`` of the time with probability ``confidence_level``.

    Args:
        judged: judge rows of every judge over the same outputs (e.g. from
            :func:`jevalkit.runner.judge_models`, or several ``jevalkit judge`` runs read
            together): ``model`` (the judge; with its ``parameters``/``params_hash`` when one
            model judged in two ways), ``label`` (the judged system's name; or a ``system``
            column, when there is no ``label``), ``case_id``, ``probs`` (or the
            ``confidence_column`` and ``verdict``), optionally ``cost_usd``; error rows count as
            judgments the judge was not confident about. Each judge's confidence in an item is
            the mean over its calls (its rows: repeats, and both orders of a pairwise game),
            and every item needs the same number of calls, k, recorded per judge.
        labels: a labels file's rows (:func:`read_labels`): a uniform random sample of items.
        judges: the judges, cheapest first, by their :func:`jevalkit.labels.judge_names` name
            (the ``model``, or ``model[param=value]`` when one model judged in two ways);
            None: every judge in the rows, by their mean ``cost_usd`` per item (refused when a
            judge's cost is unknown or two cost the same).
        target_agreement: the agreement with people to guarantee.
        confidence_level: the probability, over the labelled sample, that it holds.
        levels: the judge's levels, lowest first (default: from the judge prompt file).
        confidence_column: a column to read as the judge's confidence instead of the probability of
            its verdict (higher = surer), with its ``verdict`` column.
        min_items: the fewest items a stage's first test covers (None: the fewest at which a
            run of perfect agreement passes at the stage's level; a smaller number is raised
            to that, so no stage starts with a test that cannot pass).
        start: the share of the items reaching a stage that its first test covers (None: a
            fifth, :func:`jevalkit.stats.selective_threshold`'s default).
        guarantee: ``"high-probability"`` (the default: the above) or ``"expected"``, a
            second, weaker kind (conformal risk control, Angelopoulos et al., ICLR 2024, as in
            SCOPE, arXiv 2602.13110): in expectation over the calibration draw and a new item,
            at most ``risk`` of ALL items are decided by a judge against a person. It promises
            neither the agreement among the decided items (a rate of 5% of all items decided
            wrongly is 50% disagreement when a tenth is decided) nor anything with a stated
            probability for this calibration (about half of calibrations may exceed ``risk``):
            a mean over calibrations. It decides more items. ``target_agreement``,
            ``confidence_level``, ``min_items`` and ``start`` are the first kind's and are
            refused with it.
        risk: with ``guarantee="expected"`` (and only then), the expected share of all items
            decided against a person to allow, split evenly across the judges.

    Returns:
        :class:`Cascade`: ``thresholds``, ``stages``, ``curves``, ``guarantee``; ``.apply()``,
        ``.summary()``, ``.for_people()`` (the Labeler's queue), ``.design()`` (run it lazily),
        ``.save()``. A judge that cannot certify any threshold gets ``inf`` (it decides
        nothing), with the reason in its stage's ``method`` (and what would help: more labels,
        a lower target, fewer judges, each said only when it would); when none can, every item
        goes to people and ``guarantee`` says so.

    Raises:
        StatsError: no labelled item judged by the first judge; labelled items that reach a
            judge without a row of it (it must judge every labelled item that reaches it);
            labels drawn with unequal probabilities, or from a label plan that did not draw
            them at random (its ``strategy``: a cascade's own person queue, ``uncertain``,
            ``active``, ``stratified``), or whose first-judge confidence differs from the
            unlabelled items' (a rank test at p < 1e-6: chosen by confidence); a judge not in
            the rows; levels the judge does not have; a judge whose items have different numbers
            of calls.
        JudgeError: a verdict outside the judge's levels under ``confidence_column``.

    Notes:
        The calibration items are the labelled items the first judge judged. At stage j the
        items not decided by the judges before it reach judge j, whose threshold is
        :func:`jevalkit.stats.selective_threshold` of its confidence and agreement on them (items
        it judged without a verdict are never decided by it and go on), at confidence
        1 - (1 - confidence_level) / (number of judges): a union bound over the stages. Its
        tests run in an order fixed before the labels are read (from the number of items
        reaching it), starting at ``start`` of them
        and never below what a perfect run needs. Each stage's decided items then agree with
        people at least ``target_agreement`` of the time, so their mixture does. The stages
        are calibrated on the same labelled items in turn; the union bound treats the earlier
        thresholds as given, as the authors' argument does, and ``benchmarks/calibration.py``
        checks the result by simulation.

    Example:
        >>> cascade, _ = _example()
        >>> cascade.judges, [round(t, 3) for t in cascade.thresholds]
        (('cheap', 'strong'), [0.758, 0.61])
    """
    risk = _check_guarantee(guarantee, risk, target_agreement, confidence_level, min_items, start)
    if judges is None:
        judges = _by_cost(judged)
    judges = [str(j) for j in judges] if not isinstance(judges, str) else [judges]
    if not judges or len(set(judges)) != len(judges):
        raise StatsError(f"judges lists the cascade's judges once each, got {judges!r}")
    for name, value in (
        ("target_agreement", target_agreement),
        ("confidence_level", confidence_level),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise StatsError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    if min_items is not None and (
        isinstance(min_items, bool) or not isinstance(min_items, int) or min_items < 1
    ):
        raise StatsError(f"min_items must be a whole number of at least 1, got {min_items!r}")
    if start is not None and (
        isinstance(start, bool) or not isinstance(start, int | float) or not 0 <= start <= 1
    ):
        raise StatsError(f"start must be a share between 0 and 1, got {start!r}")
    rows = _judge_rows(judged, judges)
    used = pd.concat(rows.values())
    names = judge_levels(used, levels)
    evaluator, prompt_hash = _evaluator_of(used)
    person, _ = person_levels(labels)
    unknown = sorted(set(person["person"]) - set(names))
    if unknown:
        raise StatsError(
            f"labels hold levels {unknown} that the judge does not have: {names} (lowest first)"
        )
    read = [
        judge_items(rows[j], names, confidence_column=confidence_column, judge_name=j)
        for j in judges
    ]
    tables = [table for table, _ in read]
    calibration = with_people(tables[0][ITEM], person)
    if calibration.empty:
        raise StatsError(
            f"no labelled item was judged by {judges[0]!r} (the first judge): label items "
            "from the judged rows (the same system and case_id)"
        )
    key = ["case_id"] if (tables[0]["system"] == NO_SYSTEM).all() else ITEM
    n_unused = int((~person.set_index(key).index.isin(calibration.set_index(key).index)).sum())
    labelled = tables[0].set_index(key).index.isin(calibration.set_index(key).index)
    check_like_the_judged(tables[0]["confidence"].to_numpy(dtype=float), labelled, judges[0])
    level = 1 - (1 - confidence_level) / len(judges)
    shape: dict[str, Any] = {
        "min_items": min_items,
        **({} if start is None else {"start": float(start)}),
    }
    remaining = calibration
    thresholds: list[float] = []
    stages: list[dict[str, Any]] = []
    curves: list[pd.DataFrame] = []
    references: list[Any] = []
    for judge, table in zip(judges, tables, strict=True):
        here = remaining.merge(table, on=ITEM, how="left", indicator=True)
        missing = here["_merge"] != "both"
        if missing.any():
            raise StatsError(
                f"{int(missing.sum())} labelled item(s) reach judge {judge!r} without a row of "
                f"it (e.g. {here.loc[missing, 'case_id'].iloc[0]!r}); a cascade is calibrated "
                "on judges that judged every labelled item reaching them (a lazily run cascade "
                f"judges only what reaches it): run {judge!r} over the labelled items"
            )
        conf = here["confidence"].to_numpy(dtype=float)
        agree = (here["verdict"] == here["person"]).to_numpy()
        judged_here = ~np.isnan(conf)
        cost = float(table["cost_usd"].mean()) if table["cost_usd"].notna().any() else np.nan
        if risk is not None:
            threshold, how, p, first = _risk_stage(
                conf[judged_here], agree[judged_here], risk / len(judges), len(calibration)
            )
        else:
            try:
                chosen = selective_threshold(
                    conf[judged_here],
                    agree[judged_here],
                    target_agreement=target_agreement,
                    confidence_level=level,
                    **shape,
                )
                threshold, how, p = chosen.threshold, chosen.method, chosen.p_value
                first = int(chosen.tests["n"].iloc[0])
            except StatsError as exc:
                threshold, p, first = math.inf, np.nan, 0
                how = str(exc) + _fewer_judges(
                    int(judged_here.sum()), target_agreement, confidence_level, len(judges)
                )
        decided = judged_here & (conf >= threshold)
        thresholds.append(threshold)
        stages.append(
            {
                "judge": judge,
                "threshold": threshold,
                "n_reaching": len(here),
                "n_judged": int(judged_here.sum()),
                "n_decided": int(decided.sum()),
                "agreement": float(agree[decided].mean()) if decided.any() else np.nan,
                "p_value": p,
                "level": level if risk is None else np.nan,
                "calls": read[len(stages)][1],
                "first_test": first,
                "cost_usd": cost,
                "method": how,
            }
        )
        references.append(reference_sample(conf[judged_here]))
        alone = with_people(table[[*ITEM, "verdict", "confidence"]], person)
        alone = alone.merge(calibration[ITEM], on=ITEM).dropna(subset=["confidence"])
        if len(alone):
            curve = agreement_curve(alone["confidence"], alone["verdict"] == alone["person"])
            curve = curve.assign(judge=judge, chosen=curve["threshold"] == threshold)
            curves.append(curve[["judge", "threshold", "n", "agreement", "coverage", "chosen"]])
        remaining = remaining[~decided].reset_index(drop=True) if len(remaining) else remaining
    steps = tuple(
        dataclasses.replace(_stage_of(rows[j], j), threshold=t)
        for j, t in zip(judges, thresholds, strict=True)
    )
    return Cascade(
        judges=tuple(judges),
        thresholds=tuple(thresholds),
        stages=pd.DataFrame(stages),
        curves=(
            pd.concat(curves, ignore_index=True)
            if curves
            else pd.DataFrame(
                columns=["judge", "threshold", "n", "agreement", "coverage", "chosen"]
            )
        ),
        steps=steps,
        levels=tuple(names),
        target_agreement=float(target_agreement),
        confidence_level=float(confidence_level),
        n_calibration=len(calibration),
        n_labels_unused=int(n_unused),
        evaluator=evaluator,
        prompt_hash=prompt_hash,
        confidence_column=confidence_column,
        min_items=min_items,
        start=None if start is None else float(start),
        calls=tuple(k for _, k in read),
        references=tuple(references),
        guarantee_kind=HIGH_PROBABILITY if risk is None else EXPECTED,
        risk=risk,
        method=_cascade_method(
            len(judges), len(calibration), n_unused, risk, level, confidence_level, start
        ),
    )


def _cascade_method(
    n_judges: int,
    n: int,
    n_unused: int,
    risk: float | None,
    level: float,
    confidence_level: float,
    start: float | None,
) -> str:
    """How a cascade was calibrated, in words."""
    if risk is not None:
        how = (
            f"cascaded conformal risk control over {n_judges} judge(s), {n} labelled items; "
            f"each stage's threshold the lowest confidence whose decided-and-wrong count over "
            f"all {n} items (those decided earlier count 0) keeps (wrong + 1) / ({n} + 1) <= "
            f"{risk / n_judges:.4g} (risk {risk:.4g} split evenly across the judges; the "
            "earlier thresholds taken as given)"
        )
    else:
        how = (
            f"cascaded selective evaluation over {n_judges} judge(s), {n} "
            f"labelled items; each stage's threshold certified at confidence {level:.4g} "
            f"(union bound to {confidence_level:.0%}), its first test on "
            f"{'a fifth' if start is None else f'{start:.0%}'} of the items reaching it (at "
            "least what a perfect run needs), in an order fixed before the labels are read"
        )
    unused = f"; {n_unused} label(s) name items no judge row covers (not used)"
    return how + (unused if n_unused else "")


def _risk_stage(
    conf: np.ndarray, agree: np.ndarray, risk: float, n_calibration: int
) -> tuple[float, str, float, int]:
    """A stage's threshold under the ``expected`` guarantee: conformal risk control of its
    decided-and-wrong rate over all ``n_calibration`` items (those decided earlier, or judged
    without a verdict, count as never decided by it); inf with the reason when none passes.
    Returns the threshold, how it was chosen, the p-value (NaN: no test) and the first test's
    items (0: none)."""
    try:
        chosen = risk_controlled_threshold(conf, agree, risk=risk, n_calibration=n_calibration)
    except StatsError as exc:
        return math.inf, str(exc), np.nan, 0
    return chosen.threshold, chosen.method, np.nan, 0


def _check_guarantee(
    guarantee: str,
    risk: float | None,
    target_agreement: float,
    confidence_level: float,
    min_items: int | None,
    start: float | None,
) -> float | None:
    """The risk of an ``expected`` cascade (None for the default kind), or one line saying
    which argument does not belong to the kind asked for."""
    if guarantee not in GUARANTEES:
        raise StatsError(
            f"guarantee must be {HIGH_PROBABILITY!r} (agreement among decided items, with a "
            f"stated probability) or {EXPECTED!r} (conformal risk control), got {guarantee!r}"
        )
    if guarantee == HIGH_PROBABILITY:
        if risk is not None:
            raise StatsError(
                f"risk (--risk) is the {EXPECTED!r} guarantee's: pass guarantee={EXPECTED!r} "
                "(--guarantee expected) with it, or target_agreement and confidence_level "
                "(--target, --confidence) without it"
            )
        return None
    if risk is None:
        raise StatsError(
            f"guarantee={EXPECTED!r} needs risk (--risk): the expected share of all items "
            "decided against a person to allow (e.g. 0.05)"
        )
    if isinstance(risk, bool) or not isinstance(risk, int | float) or not 0 < risk < 1:
        raise StatsError(f"risk must lie strictly between 0 and 1, got {risk!r}")
    if (target_agreement, confidence_level, min_items, start) != (0.9, 0.9, None, None):
        raise StatsError(
            f"target_agreement, confidence_level, min_items and start (--target, --confidence, "
            f"--min-items, --start) are the {HIGH_PROBABILITY!r} guarantee's fixed-sequence "
            f"test; guarantee={EXPECTED!r} takes risk alone"
        )
    return float(risk)


def _perfect_run_passes(n: int, target: float, level: float) -> bool:
    """Whether ``n`` items that all agree are certified at ``level``: run, not computed."""
    try:
        selective_threshold(
            np.linspace(1.0, 0.5, n), np.ones(n, bool), target_agreement=target,
            confidence_level=level,
        )  # fmt: skip
    except StatsError:
        return False
    return True


def _fewer_judges(n: int, target: float, confidence_level: float, n_judges: int) -> str:
    """What fewer judges would do for a stage with ``n`` items, said only when it would help:
    each judge is tested at 1 - (1 - confidence_level) / (number of judges), and a perfect run
    of ``n`` passes at that level only from some number of judges down (checked by running
    it)."""
    if (
        n < 2
        or n_judges < 2
        or _perfect_run_passes(n, target, 1 - (1 - confidence_level) / n_judges)
    ):
        return ""
    fewer = [
        j
        for j in range(n_judges - 1, 0, -1)
        if _perfect_run_passes(n, target, 1 - (1 - confidence_level) / j)
    ]
    if not fewer:
        return ""
    return (
        f"; with {fewer[0]} judge(s) instead of {n_judges}, each tested at "
        f"{1 - (1 - confidence_level) / fewer[0]:.4g}, a perfect run of {n} could pass"
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
