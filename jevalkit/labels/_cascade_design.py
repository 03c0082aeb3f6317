"""A calibrated cascade run lazily, as a design (:class:`CascadeDesign`, from
:meth:`jevalkit.labels.Cascade.design`; ``jevalkit.runner.judge(evaluator, cases,
design=cascade.design())`` or ``jevalkit judge EVALUATOR --cascade FILE``).

Each judge of the cascade is an arm of the design (a source of the one design loop, its rows in
a results file of its own). The first wave asks the first judge about every case; each next
wave asks the next judge only about the cases the judges before it were not sure of (confidence
below their threshold, or no judgment); what no judge decides goes to people. A judge certified
for nothing (threshold inf) is not asked. A budget is spent across the judges; a case a budget
left waiting for a judge is ``pending: <judge>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..contract import Result
from ..errors import UsageError
from ..judges import load_judge_prompt
from ..results import ROW_POSITION, Arm, Design, Stop, Wave
from ._judge_rows import NO_SYSTEM, PERSON, CascadeStage, item_systems, item_verdicts, route

DECISION_COLUMNS = ["system", "case_id", "verdict", "decided_by", "confidence", "shift"]
STAGE_COLUMNS = ["judge", "threshold", "n_sent", "n_errors", "n_decided"]


@dataclass(frozen=True, eq=False)
class CascadeDecisions(Result):
    """What a lazily run cascade decided.

    Attributes:
        decisions: one row per case: ``system``, ``case_id``, ``verdict``, ``decided_by`` (a
            judge, ``person``, or ``pending: <judge>`` when a budget stopped the run before
            that judge), ``confidence`` (the deciding judge's; NaN for a person), ``shift``
            (None, or which stage's new confidences differ from its calibration items' and
            what was done: every case to people, or ``accepted: ...``).
        stages: one row per judge: ``judge``, ``threshold``, ``n_sent`` (cases sent to it),
            ``n_errors`` (of those, without a judgment), ``n_decided``.
        shift: the shift check per stage asked (:meth:`jevalkit.labels.Cascade.shift`'s
            table; empty without a calibrated cascade).
        n_items, n_people: cases, and those left for people.
        method: what was run.
    """

    decisions: pd.DataFrame = field(repr=False)
    stages: pd.DataFrame = field(repr=False)
    shift: pd.DataFrame = field(repr=False)
    n_items: int
    n_people: int
    method: str

    def table(self) -> pd.DataFrame:
        """The stages (one row per judge)."""
        return self.stages


@dataclass(eq=False, kw_only=True)
class CascadeDesign(Design):
    """A cascade of judges as a design (see the module docstring).

    Attributes:
        stages: the judges in order, cheapest first, each with its threshold and how to ask it
            (:class:`CascadeStage`; :attr:`jevalkit.labels.Cascade.steps`).
        levels: the judge prompt's levels, lowest first.
        evaluator: the judge prompt (``id@version``).
        confidence_column: the column its confidence is read from (None: ``probs``).
        source: where the stages were read from (a cascade file's path, or ``"caller"``): an
            endpoint named only in a file is sent no key unless the user confirms it.
        digest: the calibrated cascade's digest (it names the design in the rows).
        cascade: the calibrated :class:`jevalkit.labels.Cascade` the stages come from: its
            judges' calls per item and calibration confidences (the shift check after each
            judge); None: the stages alone, routed on each judge's mean confidence.
        accept_shift, shift_alpha: as for :meth:`jevalkit.labels.Cascade.apply`.

    Example:
        >>> stage = CascadeStage(name="j", model="local", threshold=math.inf)
        >>> CascadeDesign(stages=[stage], levels=("no", "yes"), evaluator="security@1")
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: judge 'j': the cascade does not say how to ask it (its calibration rows recorded no judge parameters), so it cannot be run; apply it to judged rows instead (Cascade.apply)
    """

    stages: Sequence[CascadeStage]
    levels: Sequence[str]
    evaluator: str
    confidence_column: str | None = None
    source: str = "caller"
    digest: str = ""
    cascade: Any = field(default=None, repr=False)
    accept_shift: bool = False
    shift_alpha: float = 0.001
    _state: dict = field(default_factory=dict, init=False, repr=False)

    kind = "cascade"

    def __post_init__(self) -> None:
        self.stages = tuple(self.stages)
        if load_judge_prompt(self.evaluator).kind == "pairwise":
            raise UsageError(
                f"{self.evaluator}: a cascade decides single items; a pairwise judge plays "
                "games in both orders (not supported)"
            )
        if not self.stages:
            raise UsageError("a cascade needs at least one judge")
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise UsageError(f"a cascade names each judge once, got {names}")
        for s in self.stages:
            if s.config is None:
                raise UsageError(
                    f"judge {s.name!r}: the cascade does not say how to ask it (its calibration "
                    "rows recorded no judge parameters), so it cannot be run; apply it to "
                    "judged rows instead (Cascade.apply)"
                )
            if isinstance(s.repeats, bool) or not isinstance(s.repeats, int) or s.repeats < 1:
                raise UsageError(f"judge {s.name!r}: repeats must be a whole number >= 1")
            if not (math.isinf(s.threshold) or 0 <= s.threshold <= 1):
                raise UsageError(f"judge {s.name!r}: threshold {s.threshold} is not a probability")
        if all(math.isinf(s.threshold) for s in self.stages):
            raise UsageError(
                "no judge of this cascade is certified for anything (every threshold is inf): "
                "every item goes to people, so there is nothing to run"
            )

    @property
    def name(self) -> str:
        """The cascade as its rows record it."""
        digest = f" {self.digest}" if self.digest else ""
        return f"cascade{digest} of {len(self.stages)} judge(s) on {self.evaluator}"

    @property
    def arms(self) -> tuple[Arm, ...]:
        """The judges asked (a judge certified for nothing is not)."""
        return tuple(
            Arm(
                name=s.name,
                model=s.model,
                base_url=s.base_url,
                endpoint_from=self.source,
                repeats=s.repeats,
                parameters=s.config.parameters() if s.config is not None else None,
            )
            for s in self.stages
            if not math.isinf(s.threshold)
        )

    def start(self, candidates: pd.DataFrame, *, in_flight: int = 1) -> None:
        """Index each judge's candidates by case."""
        asked = [a.name for a in self.arms]
        by_judge: dict[str, dict[str, list[int]]] = {name: {} for name in asked}
        for position, (source, case_id) in enumerate(
            candidates[["source", "case_id"]].itertuples(index=False, name=None)
        ):
            if source not in by_judge:
                raise UsageError(f"candidate of {source!r}, which is no judge of this cascade")
            by_judge[source].setdefault(str(case_id), []).append(position)
        cases = list(by_judge[asked[0]])
        for name in asked[1:]:
            if list(by_judge[name]) != cases:
                raise UsageError(f"judge {name!r} is not planned for the same cases as the first")
        self._state.clear()
        self._state.update(by_judge=by_judge, cases=cases, stage=0, sent={})

    def _verdicts(self, rows: pd.DataFrame) -> list[pd.DataFrame]:
        """Each stage's item verdicts from the rows so far (empty for a stage not yet asked):
        the calibrated cascade's reading when there is one (its calls per item)."""
        mine = rows.drop(columns=[c for c in (ROW_POSITION,) if c in rows.columns])
        if self.cascade is not None and len(mine):
            return self.cascade._verdicts(mine.drop(columns=["cascade_judge"], errors="ignore"))
        tables = []
        for s in self.stages:
            judged = mine[mine["cascade_judge"] == s.name] if len(mine) else mine
            tables.append(
                item_verdicts(
                    judged.drop(columns=["cascade_judge"], errors="ignore"),
                    self.levels,
                    confidence_column=self.confidence_column,
                    judge_name=s.name,
                )
            )
        return tables

    def _items(self, rows: pd.DataFrame) -> pd.DataFrame:
        systems = item_systems(rows) if len(rows) else pd.Series(dtype=object)
        system = str(systems.iloc[0]) if len(systems) else NO_SYSTEM
        return pd.DataFrame({"system": system, "case_id": self._state["cases"]})

    def _route(self, rows: pd.DataFrame, upto: int) -> pd.DataFrame:
        tagged = _tagged(rows, self._state)
        return route(self._items(tagged), self._verdicts(tagged)[:upto], self.stages[:upto])

    def _shifted(self, rows: pd.DataFrame) -> pd.DataFrame:
        """The shift check of the stages asked so far (empty without a calibrated cascade)."""
        if self.cascade is None or rows.empty:
            return pd.DataFrame()
        tagged = _tagged(rows, self._state)
        verdicts = self._verdicts(tagged)
        routed = route(self._items(tagged), verdicts, self.stages)
        return self.cascade._shift(verdicts, routed, self.shift_alpha)

    def next(self, rows: pd.DataFrame) -> Wave | Stop:
        """The next judge's cases (those the judges before it left open), or stop (also when
        the cases that reached a judge are not like its calibration items: no later judge is
        asked, unless ``accept_shift``)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for a wave")
        if not self.accept_shift and s["stage"]:
            tests = self._shifted(rows)
            if len(tests) and tests["shifted"].any():
                return Stop("shift")
        while s["stage"] < len(self.stages):
            i = s["stage"]
            s["stage"] += 1
            stage = self.stages[i]
            if math.isinf(stage.threshold):
                continue
            open_ = self._route(rows, i)
            cases = open_.loc[open_["decided_by"] == PERSON, "case_id"].tolist()
            s["sent"][stage.name] = cases
            if not cases:
                return Stop("decided")
            positions = [p for c in cases for p in s["by_judge"][stage.name][c]]
            return Wave(
                positions, notes={"stage": [i] * len(positions)}, label=f"judge {stage.name}"
            )
        return Stop("decided")

    def outcome(self, rows: pd.DataFrame, stop: str | None = None) -> CascadeDecisions:
        """The decisions and each judge's share (:class:`CascadeDecisions`)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for its outcome")
        tagged = _tagged(rows, s)
        tables = self._verdicts(tagged)
        decisions = route(self._items(tagged), tables, self.stages).assign(shift=None)
        tests = self._shifted(rows)
        shifted = tests[tests["shifted"]] if len(tests) else tests
        if len(shifted):
            said = "; ".join(shifted["message"])
            if self.accept_shift:
                decisions = decisions.assign(shift=f"accepted: {said}")
            else:
                decisions = decisions.assign(
                    verdict=None,
                    decided_by=PERSON,
                    confidence=np.nan,
                    shift=f"{said}: the guarantee does not hold for items unlike the calibration "
                    "items, so every item goes to a person (--accept-shift applies the cascade "
                    "anyway)",
                )
        summary = []
        for stage, table in zip(self.stages, tables, strict=True):
            summary.append(
                {
                    "judge": stage.name,
                    "threshold": stage.threshold,
                    "n_sent": len(s["sent"].get(stage.name, [])),
                    "n_errors": int(table["verdict"].isna().sum()),
                    "n_decided": int((decisions["decided_by"] == stage.name).sum()),
                }
            )
        n_people = int((decisions["decided_by"] == PERSON).sum())
        return CascadeDecisions(
            decisions=decisions[DECISION_COLUMNS],
            stages=pd.DataFrame(summary, columns=STAGE_COLUMNS),
            shift=tests,
            n_items=len(decisions),
            n_people=n_people,
            method=(
                f"cascade of {len(self.stages)} judge(s) over {len(decisions)} case(s) of "
                f"{self.evaluator}, each judge sent only the cases the judges before it were not "
                "confident about" + (f"; stopped: {stop}" if stop and stop != "decided" else "")
            ),
        )


def _tagged(rows: pd.DataFrame, state: dict) -> pd.DataFrame:
    """The rows with ``cascade_judge``: the judge whose candidate each row fills."""
    if rows.empty:
        return rows.assign(cascade_judge=pd.Series(dtype=object), case_id=pd.Series(dtype=object))
    owner = {
        p: name for name, cases in state["by_judge"].items() for ps in cases.values() for p in ps
    }
    return rows.assign(cascade_judge=[owner[int(p)] for p in rows[ROW_POSITION]])
