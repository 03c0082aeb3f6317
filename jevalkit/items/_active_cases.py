"""Active evaluation as a design: a new system is run on K cases of a benchmark drawn in waves
from an item model fitted on past systems (:class:`ActiveCases`; ``run(..., design=
ActiveCases(k=30, prior=fit))``, or ``--cases active:30 --prior fit.json`` on the command line),
and its full-benchmark score estimated from them (:func:`estimate`).

Before each wave the plan is drawn again from the prior, the seed and the system's answers so
far (:func:`select` with ``method="active"``): the same inputs give the same draws, so a run
that is stopped (kill -9, a budget) and started again sends the cases it had drawn and goes on
from there, never re-drawing. Every row records its draw in its ``design`` column (the plan,
named with the content hash of its prior; the wave, the step and the probability its case had
when drawn), and ``subset`` names the plan. The rows are drawn with unequal probabilities
(the design is *weighted*): no statistic reads them as a simple sample.

With a target half-width the plan may stop early: after each wave the anytime-valid interval
of the draws answered so far (:func:`estimate` with ``anytime=True``, a confidence sequence
that holds at every draw at once) is computed, and the run stops once it is at most that wide
on each side; the estimate reports that interval, whether the target was met or all K draws
were run. Without a target the plan runs its K draws and reports the t interval, which holds
at a number of draws fixed in advance.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from ..contract import Result, finish
from ..errors import StatsError, UsageError
from ..results import ROW_POSITION, Design, Stop, Wave, reason_in
from ._active import ActivePlan, waves_for
from ._estimate import estimate
from ._irt import IrtFit, benchmark_of, load_fit
from ._select import select

ActiveStop = Literal["complete", "target", "budget", "errors"]
STOP_REASONS: tuple[ActiveStop, ...] = get_args(ActiveStop)
ESTIMATE_COLUMNS = [
    "k",
    "n_cases",
    "n_drawn",
    "n_answered",
    "waves",
    "value",
    "ci_low",
    "ci_high",
    "half_width",
    "target_half_width",
    "stop_reason",
    "method",
]


@dataclass(frozen=True, eq=False)
class ActiveEstimate(Result):
    """An active plan's outcome: the full-benchmark score from the draws answered in order,
    and the plan behind it.

    Attributes:
        estimate: one row: ``k``, ``n_cases``, ``n_drawn``, ``n_answered`` (the draws
            answered in order, which the estimate uses), ``waves``, ``value``, ``ci_low``,
            ``ci_high``, ``half_width``, ``target_half_width``, ``stop_reason``
            (``complete``, ``target``, ``budget``, ``errors``), ``method``.
        plan: the plan as drawn last (:class:`ActivePlan`: its draws, each case's probability).
    """

    estimate: pd.DataFrame
    plan: ActivePlan = field(repr=False)

    def table(self) -> pd.DataFrame:
        """The estimate (one row)."""
        return self.estimate


def prior_digest(fit: IrtFit) -> str:
    """What an active plan is drawn from, as a hash (16 hex digits): the item model's kind, its
    case columns and every item's parameters. Two files of one name with other parameters
    differ; one fit saved with or without the past systems' scores (which the plan does not
    read) does not (:attr:`IrtFit.content_hash` tells those files apart).

    Example:
        >>> from jevalkit.items import fit_irt, simulate_2pl
        >>> fit = fit_irt(simulate_2pl(n_systems=20, n_items=10, seed=0), case="case_id")
        >>> ActiveCases(k=4, prior=fit).name.split("prior ")[1][:16] == prior_digest(fit)
        True
    """
    record = {
        "model": fit.model,
        "case_columns": [str(c) for c in fit.matrix.items.columns],
        "items": json.loads(fit.items.to_json(orient="records", double_precision=15)),
    }
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(eq=False, kw_only=True)
class ActiveCases(Design):
    """An active plan as a design (see the module docstring).

    Attributes:
        k: cases to draw, from 2 to the benchmark's cases - 1.
        prior: the item model (:func:`fit_irt`) fitted on past systems' results of the same
            probes and versions, or the path of one saved by ``IrtFit.save``.
        seed: of the draws (a whole number from 0 up).
        waves: how many times the ability is updated between draws (default 8, or k when k
            is smaller).
        target_half_width: stop after the first wave whose anytime-valid interval is at most
            this wide on each side (K is then the most it draws), and report that interval.

    Example:
        >>> from jevalkit.items import fit_irt, simulate_2pl
        >>> from jevalkit.results import replay
        >>> df = simulate_2pl(n_systems=31, n_items=60, seed=0).rows
        >>> fit = fit_irt(df[df.system != "sys30"], case="case_id")
        >>> new = df[df.system == "sys30"].assign(source="sys30", probe="sim", version=1,
        ...                                      repeat=0)
        >>> done = replay(ActiveCases(k=12, prior=fit, waves=3), new)
        >>> done.waves, len(done.rows), int(done.outcome.table()["n_answered"].iloc[0])
        (3, 12, 12)
    """

    k: int
    prior: IrtFit | str | Path
    seed: int = 0
    waves: int | None = None
    target_half_width: float | None = None
    _state: dict = field(default_factory=dict, init=False, repr=False)

    weighted = True
    kind = "active"

    def __post_init__(self) -> None:
        if isinstance(self.prior, str | Path):
            self.prior = load_fit(self.prior)
        if not isinstance(self.prior, IrtFit):
            raise UsageError(
                f"prior must be an IrtFit (items.fit_irt) or the path of a saved one, got "
                f"{type(self.prior).__name__}"
            )
        n = len(self.prior.items)
        k = self.k
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 2 <= k < n:
            raise UsageError(
                f"--cases active:{k}: K must be from 2 to {n - 1} (a whole number: the cases "
                "of the benchmark the prior was fitted on)"
            )
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise UsageError(
                f"--sample-seed must be a whole number from 0 up (the active plan's draws), "
                f"got {seed!r}"
            )
        target = self.target_half_width
        if target is not None and (
            isinstance(target, bool) or not isinstance(target, int | float) or not 0 < target <= 0.5
        ):
            raise UsageError(
                f"--target-half-width must be a number in (0, 0.5] (a half-width of the "
                f"score), got {target!r}"
            )
        self.k, self.seed = int(k), int(seed)
        self.waves = waves_for(self.k, self.waves)

    @property
    def subset(self) -> str:
        """How the run chose its cases, as each row's ``subset`` says."""
        return f"active plan of {self.k} of {len(self.fit.items)} cases"

    @property
    def fit(self) -> IrtFit:
        """The prior, loaded."""
        assert isinstance(self.prior, IrtFit)  # __post_init__ loads a path
        return self.prior

    @property
    def name(self) -> str:
        """The plan as its rows record it: K, the benchmark's cases, the hash of the prior's
        item parameters (:func:`prior_digest`), the seed and the waves (a resumed run with
        another prior is refused, naming both)."""
        target = (
            "" if self.target_half_width is None else f", stop at +/-{self.target_half_width:g}"
        )
        return (
            f"active:{self.k} of {len(self.fit.items)} cases (prior {prior_digest(self.fit)}, "
            f"seed {self.seed}, {self.waves} waves{target})"
        )

    def _options(self) -> dict[str, Any]:
        return {"k": self.k, "method": "active", "seed": self.seed, "waves": self.waves}

    def start(self, candidates: pd.DataFrame, *, in_flight: int = 1) -> None:
        """Map the prior's items to the candidates (every case of the benchmark, one wording)."""
        fit = self.fit
        columns = list(fit.matrix.items.columns)
        unknown = [c for c in columns if c not in candidates.columns]
        if unknown:
            raise UsageError(
                f"the prior's case columns {unknown} are not columns of a run's rows: fit it "
                "on case columns such as probe, version, case_id"
            )
        planned = benchmark_of(candidates)
        if fit.benchmark and planned and planned != fit.benchmark:
            raise UsageError(
                f"the prior was fitted on results of {_named(fit.benchmark)}, this run plans "
                f"{_named(planned)}: an item model describes the cases of the probe versions it "
                "was fitted on; fit one on past results of these (jevalkit items RESULTS --irt "
                "2pl --save-fit PATH)"
            )
        if candidates["variant"].notna().any():
            raise UsageError(
                "an active plan chooses the cases itself, of one wording: drop --variants"
            )
        by_item: dict[Any, list[int]] = {}
        for position, key in enumerate(candidates[columns].itertuples(index=False, name=None)):
            by_item.setdefault(key[0] if len(key) == 1 else key, []).append(position)
        ids = fit.matrix.item_ids()
        missing = [i for i in ids if i not in by_item]
        if missing:
            raise UsageError(
                f"the prior has {len(missing)} item(s) this run does not plan (e.g. "
                f"{missing[0]!r}): run the probes and versions it was fitted on, every case "
                "(no --cases range, no --sample)"
            )
        extra = [i for i in by_item if i not in set(ids)]
        if extra:
            raise UsageError(
                f"{len(extra)} case(s) of this run are not items of the prior (e.g. "
                f"{extra[0]!r}): its estimate is of the benchmark it was fitted on"
            )
        self._state.clear()
        self._state.update(
            by_item=by_item,
            columns=columns,
            sent=set(),
            plan=select(fit, **self._options()),
            reason=None,
        )

    def next(self, rows: pd.DataFrame) -> Wave | Stop:
        """The next wave of draws, or why the plan stops (after reading the last wave)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for a wave")
        fit, plan = self.fit, s["plan"]
        if s["sent"]:
            answered = _answers(rows)
            if not set(plan.cases) <= _scored(rows, s["columns"]):
                return Stop("errors")
            if self._reached(plan, answered):
                return Stop("target")
            if plan.complete:
                return Stop("complete")
            plan = s["plan"] = select(fit, new_results=answered, **self._options())
        draws = plan.draws[~plan.draws["case"].isin(s["sent"])]
        if draws.empty:
            return Stop("complete")
        positions: list[int] = []
        notes: dict[str, list[float]] = {"wave": [], "draw": [], "probability": []}
        for d in draws.itertuples(index=False):
            for position in s["by_item"][d.case]:
                positions.append(position)
                notes["wave"].append(int(d.wave))
                notes["draw"].append(int(d.step))
                notes["probability"].append(float(d.probability))
        s["sent"] |= set(draws["case"])
        return Wave(positions, notes=notes, label=f"active wave {int(draws['wave'].iloc[0])}")

    def _reached(self, plan: ActivePlan, answered: pd.DataFrame) -> bool:
        """Whether the anytime-valid interval of the draws so far is at most the target."""
        if self.target_half_width is None or len(plan.draws) < 2:
            return False
        row = estimate(self.fit, plan, answered, anytime=True).iloc[0]
        return bool((row["ci_high"] - row["ci_low"]) / 2 <= self.target_half_width)

    def outcome(self, rows: pd.DataFrame, stop: str | None = None) -> ActiveEstimate:
        """The estimate from the draws answered in order (a plan stopped early is a smaller
        plan: its draws up to the first unanswered one)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for its outcome")
        return active_outcome(
            self.fit,
            s["plan"],
            rows,
            k=self.k,
            target_half_width=self.target_half_width,
            stop_reason=_reason(stop),
        )

    def bounds(self, n_cases: int) -> None:
        """Unknown before the answers come: the plan is drawn from them."""
        return None


def _reason(stop: str | None) -> ActiveStop:
    reason = reason_in(stop, STOP_REASONS, done="complete")
    if reason is None:
        raise StatsError(f"an active plan stops complete, target, budget or errors, not {stop!r}")
    return reason


def _scored(rows: pd.DataFrame, columns: list[str]) -> set:
    """The items with a scored row (not an error) among ``rows``."""
    if rows.empty:
        return set()
    fine = rows["error"].isna() if "error" in rows.columns else pd.Series(True, index=rows.index)
    ok = rows[fine & pd.to_numeric(rows["score"], errors="coerce").notna()]
    keys = list(ok[columns].itertuples(index=False, name=None))
    return {k[0] if len(k) == 1 else k for k in keys}


def _answers(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows the item model reads: those without an error, without the loop's columns."""
    clean = rows.drop(columns=[c for c in (ROW_POSITION, "design") if c in rows.columns])
    return clean[clean["error"].isna()] if "error" in clean.columns else clean


def active_outcome(
    fit: IrtFit,
    plan: ActivePlan,
    rows: pd.DataFrame,
    *,
    k: int,
    target_half_width: float | None,
    stop_reason: ActiveStop,
) -> ActiveEstimate:
    """The outcome of an active plan's rows (:class:`ActiveEstimate`): :func:`estimate` of the
    draws answered in order (the anytime interval when the plan had a target), with why the plan
    stopped; not estimable (NaN, ``method`` saying why) with fewer than 2 draws answered."""
    if stop_reason not in STOP_REASONS:
        raise StatsError(
            f"an active plan stops complete, target, budget or errors, not {stop_reason!r}"
        )
    columns = list(fit.matrix.items.columns)
    scored = _scored(rows, columns)
    cases = plan.draws["case"].tolist()
    prefix = next((i for i, c in enumerate(cases) if c not in scored), len(cases))
    out: dict[str, Any] = {
        "k": k,
        "n_cases": len(fit.items),
        "n_drawn": len(cases),
        "n_answered": prefix,
        "waves": int(plan.draws["wave"].max()) + 1 if cases else 0,
        "value": np.nan,
        "ci_low": np.nan,
        "ci_high": np.nan,
        "half_width": np.nan,
        "target_half_width": np.nan if target_half_width is None else target_half_width,
        "stop_reason": stop_reason,
    }
    missed = (
        f"; the target half-width {target_half_width!r} was not reached in {k} draws"
        if target_half_width is not None
        else ""
    )
    said: dict[ActiveStop, str] = {  # every reason, spelled as the type says
        "complete": missed,
        "target": f"; stopped at the target half-width {target_half_width!r}",
        "budget": "; stopped by the budget: the draws answered in order",
        "errors": "; drawn case(s) answered only by errors (run again with --retry-errors): "
        "the draws answered in order",
    }
    how = said[stop_reason]
    smaller = replace(plan, draws=plan.draws.iloc[:prefix].reset_index(drop=True))
    if prefix < 2:
        out["method"] = f"not estimable: {prefix} drawn case(s) answered{how}"
    else:
        row = estimate(fit, smaller, _answers(rows), anytime=target_half_width is not None).iloc[0]
        out.update(
            value=row["value"],
            ci_low=row["ci_low"],
            ci_high=row["ci_high"],
            half_width=(row["ci_high"] - row["ci_low"]) / 2,
            method=f"{row['method']}{how}",
        )
    return ActiveEstimate(finish(pd.DataFrame([out]), order=ESTIMATE_COLUMNS), plan)


def _named(benchmark: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{probe}@{version}" for probe, version in benchmark)
