"""Racing systems until their ranking is certified, as a design (:class:`Race`, run by
:func:`jevalkit.runner.run_design` through ``jevalkit.run(PROBE, None, design=Race(...))`` or
``jevalkit race PROBE --models a b c``).

Each system is an arm of the design (one results file each). The benchmark's cases are put in
a seeded random order once; each wave sends the next cases of that order to every system still
in the race (paired: all of them answer the same cases, so case difficulty cancels in their
differences), then reads what the answers certify (:class:`Standings`: anytime-valid
simultaneous intervals for every pair's difference of mean scores over all the cases) and lets
the settled systems leave. The run stops when the question (``best``, ``top:K``, ``ranks``) is
answered, when every case is drawn, when a budget is reached, or when a system answered no
case at all (an endpoint that only errors: its place cannot be certified, and racing on would
spend requests on errors).

Waves grow with the cases drawn (``first_wave``, then ``growth`` of the cases so far, and at
least enough to fill the requests in flight): the intervals are valid at every wave, so
looking often costs nothing but round trips. A race is deterministic in its candidates, its
settings and the answers: a run killed and started again replays the same order and waves,
finds their rows written, and goes on.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import StatsError, UsageError
from ..results import ROW_POSITION, Arm, Design, Stop, Wave
from ..stats import FINITE_METHODS
from ._race_standings import RaceOutcome, Standings, parse_target

RACE_METRICS = {"mean_score": "score", "pass_rate": "passed"}
_SAID = {"mean_score": "mean scores", "pass_rate": "pass rates", "empirical_bernstein":
         "empirical Bernstein", "hoeffding": "Hoeffding"}  # fmt: skip
CASE_KEY = ["probe", "version", "case_id", "variant", "system_a", "system_b", "position"]


@dataclass(eq=False, kw_only=True)
class Race(Design):
    """A race between systems on one benchmark (see the module docstring and
    :class:`Standings` for what is certified).

    Attributes:
        models: the systems, one model each (at least two, each once).
        target: ``best`` (which system is best), ``top:K`` (which K are the best), or
            ``ranks`` (every system's rank).
        confidence: of every certified statement together, at every wave at once.
        method: of the pairs' confidence sequences: ``empirical_bernstein`` (narrows with the
            spread of the paired differences) or ``hoeffding`` (the Hoeffding race's bound).
        metric: ``mean_score`` (the rows' ``score`` in [0, 1]) or ``pass_rate`` (``passed``).
        seed: of the cases' order (a whole number from 0 up).
        first_wave: cases in the first wave.
        growth: later waves draw this share of the cases drawn so far (at least one case).

    Example:
        >>> from jevalkit.results import replay
        >>> rng = np.random.default_rng(0)
        >>> means = {"a": 0.9, "b": 0.5, "c": 0.45, "d": 0.1}
        >>> table = pd.DataFrame([
        ...     {"source": s, "probe": "p", "version": 1, "case_id": i, "repeat": 0,
        ...      "score": float(rng.random() < p)}
        ...     for s, p in means.items() for i in range(400)])
        >>> done = replay(Race(models=list(means), target="best"), table)
        >>> done.outcome.answer, done.outcome.n_requests < 0.3 * done.outcome.n_uniform
        (('a',), True)
    """

    models: Sequence[str]
    target: str = "best"
    confidence: float = 0.95
    method: str = "empirical_bernstein"
    metric: str = "mean_score"
    seed: int = 0
    first_wave: int = 10
    growth: float = 0.1
    _state: dict = field(default_factory=dict, init=False, repr=False)

    kind = "race"
    own_rows = True  # not a race asked again after its answer was seen (another confidence, ...)

    def __post_init__(self) -> None:
        models = self.models
        if isinstance(models, str) or not all(isinstance(m, str) and m for m in models):
            raise UsageError(f"models must be a list of model names, got {models!r}")
        models = tuple(models)
        if len(models) < 2:
            raise UsageError(
                f"a race needs at least two systems, got {len(models)} ({', '.join(models)}): "
                "run one system with jevalkit run"
            )
        if len(set(models)) != len(models):
            twice = sorted({m for m in models if models.count(m) > 1})
            raise UsageError(f"a race names each system once; given twice: {', '.join(twice)}")
        self.models = models
        try:
            parse_target(self.target, len(models))
        except StatsError as exc:
            raise UsageError(str(exc)) from None
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, int | float) or not 0 < c < 1:
            raise UsageError(f"confidence must be between 0 and 1 (e.g. 0.95), got {c!r}")
        if self.method not in FINITE_METHODS:
            raise UsageError(
                f"method must be one of {', '.join(FINITE_METHODS)}, got {self.method!r}"
            )
        if self.metric not in RACE_METRICS:
            raise UsageError(
                f"metric must be one of {', '.join(RACE_METRICS)}, got {self.metric!r}"
            )
        for name in ("seed", "first_wave"):
            v = getattr(self, name)
            least = 0 if name == "seed" else 1
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < least:
                raise UsageError(f"{name} must be a whole number from {least} up, got {v!r}")
        g = self.growth
        if isinstance(g, bool) or not isinstance(g, int | float) or not 0 < g <= 1:
            raise UsageError(f"growth must be a share in (0, 1], got {g!r}")

    # -- the design ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The race as its rows record it: every setting that changes what it certifies or
        which cases it sends (its systems by a hash of their names, in any order), so that a
        run resumes only the rows of this very race (:attr:`own_rows`).

        Example:
            >>> Race(models=["b", "a"]).name == Race(models=["a", "b"]).name
            True
            >>> Race(models=["a", "b"]).name == Race(models=["a", "c"]).name
            False
        """
        systems = hashlib.sha256("\n".join(sorted(self.models)).encode()).hexdigest()[:8]
        return (
            f"race: {self.target} of {len(self.models)} systems ({systems}) at "
            f"{self.confidence:g} ({self.method}, {self.metric}, seed {self.seed}, waves "
            f"{self.first_wave} then {self.growth:g} of the cases drawn)"
        )

    @property
    def arms(self) -> tuple[Arm, ...]:
        """The systems, one model each."""
        return tuple(Arm(name=m, model=m) for m in self.models)

    def start(self, candidates: pd.DataFrame, *, in_flight: int = 1) -> None:
        """Index the candidates by system and case; refuse a race that cannot run."""
        systems = {m: i for i, m in enumerate(self.models)}
        unknown = sorted(set(candidates["source"].astype(str)) - set(systems))
        if unknown:
            raise UsageError(f"candidates of {unknown[0]!r}, which is no system of this race")
        keys = candidates[CASE_KEY].astype(object).where(candidates[CASE_KEY].notna(), None)
        key = pd.Series(list(keys.itertuples(index=False, name=None)), dtype=object)
        case, uniques = pd.factorize(key, sort=False)  # cases in the order first planned
        system = candidates["source"].astype(str).map(systems).to_numpy(int)
        n_cases, n_systems = len(uniques), len(self.models)
        counts = np.zeros((n_systems, n_cases), dtype=int)
        np.add.at(counts, (system, case), 1)
        repeats = int(counts.max()) if counts.size else 0
        missing = np.argwhere(counts != repeats)
        if n_cases == 0 or missing.size:
            who = self.models[missing[0][0]] if missing.size else self.models[0]
            raise UsageError(
                f"every system of a race answers the same cases with the same repeats; "
                f"{who!r} is not planned for all of them"
            )
        if n_cases < 2:
            raise UsageError(
                "a race draws cases from a benchmark, and this one has 1 case: run every "
                "system on it (jevalkit run) and compare them (jevalkit compare)"
            )
        if candidates["variant"].notna().any():
            raise UsageError("a race draws cases of one wording: drop --variants")
        # each system's candidates of each case (its repeats, in planned order)
        grouped = np.lexsort((np.arange(len(case)), case, system))
        positions = grouped.reshape(n_systems, n_cases, repeats)
        perm = np.random.default_rng([self.seed, 0x7ACE]).permutation(n_cases)
        self._state.clear()
        self._state.update(
            system=system,
            case=case,
            positions=positions,
            order=perm,
            draw_of=np.argsort(perm),  # each case's place in the order
            repeats=repeats,
            in_flight=in_flight,
            standings=Standings(
                list(self.models),
                n_cases=n_cases,
                target=self.target,
                confidence=self.confidence,
                method=self.method,
            ),
            drawn=0,
            pending=None,  # (wave, cases in draw order, contenders) of the wave sent
            reason=None,
        )

    def next(self, rows: pd.DataFrame) -> Wave | Stop:
        """The next wave (the next cases, for the systems still in the race), or why to
        stop (after reading the last wave's rows)."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for a wave")
        if s["pending"] is not None:
            self._read(rows)
            if s["reason"] is not None:
                return Stop(s["reason"])
        standings: Standings = s["standings"]
        if standings.certified:
            return Stop("certified")
        n_cases = len(s["order"])
        if s["drawn"] >= n_cases:
            return Stop("complete")
        contenders = np.flatnonzero(standings.active)
        size = max(
            self.first_wave if s["drawn"] == 0 else 1,
            math.ceil(self.growth * s["drawn"]),
            math.ceil(s["in_flight"] / len(contenders)),
        )
        cases = s["order"][s["drawn"] : s["drawn"] + size]
        wave = standings.waves
        chosen = s["positions"][np.ix_(contenders, cases)].transpose(1, 0, 2)  # case, system
        positions = chosen.ravel().tolist()
        draws = np.repeat(s["draw_of"][cases], chosen[0].size).tolist()
        s["drawn"] += len(cases)
        s["pending"] = (wave, cases, contenders)
        return Wave(
            positions,
            notes={"wave": [wave] * len(positions), "draw": draws},
            label=f"race wave {wave}",
        )

    def _read(self, rows: pd.DataFrame) -> None:
        """Feed the wave sent to the standings (a wave a budget cut off: the cases and
        systems with a row)."""
        s = self._state
        _, cases, contenders = s["pending"]
        s["pending"] = None
        wanted = s["positions"][np.ix_(contenders, cases)].ravel()
        sent = rows[np.isin(rows[ROW_POSITION].to_numpy(int), wanted)]
        n_systems, repeats = len(self.models), s["repeats"]
        where = {int(c): i for i, c in enumerate(cases)}
        position = sent[ROW_POSITION].to_numpy(int)
        system = s["system"][position]
        local = np.array([where[int(c)] for c in s["case"][position]], dtype=int)
        value = self._scores(sent)
        known = ~np.isnan(value)
        shape = (len(cases), n_systems)
        low_sum, high_sum, count = np.zeros(shape), np.zeros(shape), np.zeros(shape, int)
        np.add.at(low_sum, (local, system), np.where(known, value, 0.0))
        np.add.at(high_sum, (local, system), np.where(known, value, 1.0))
        np.add.at(count, (local, system), 1)
        answered = count.sum(axis=1) > 0  # cases a budget left unsent for every system: not drawn
        drew = count.sum(axis=0) > 0
        low = low_sum[answered] / repeats
        high = (high_sum[answered] + (repeats - count[answered])) / repeats
        requests = np.bincount(system, minlength=n_systems)
        scored_sum = np.bincount(system, weights=np.where(known, value, 0.0), minlength=n_systems)
        scored_n = np.bincount(system[known], minlength=n_systems)
        standings: Standings = s["standings"]
        if answered.any():
            standings.add_wave(low, drew, high, requests=requests, known=(scored_sum, scored_n))
        silent = [
            self.models[j]
            for j in np.flatnonzero(drew & standings.active).tolist()
            if standings.n_errors[j] == standings.n_requests[j]
        ]
        if silent:
            s["reason"] = "errors"
            s["silent"] = silent

    def _scores(self, rows: pd.DataFrame) -> np.ndarray:
        """Each row's score (NaN: an error or no score); refuse a score outside [0, 1]."""
        column = RACE_METRICS[self.metric]
        given = rows[column] if column in rows.columns else pd.Series(None, index=rows.index)
        value = pd.to_numeric(given.astype(object), errors="coerce").to_numpy(float, copy=True)
        failed = (
            rows["error"].notna().to_numpy()
            if "error" in rows.columns
            else np.zeros(len(rows), bool)
        )
        value[failed] = np.nan
        if self.metric == "pass_rate" and (unpassed := np.isnan(value) & ~failed).any():
            # an answer without pass/fail is no error of the endpoint: the probe sets no pass
            # threshold (read as unknown, every row would stop the race as an endpoint's errors)
            i = int(np.flatnonzero(unpassed)[0])
            who = self.models[self._state["system"][int(rows[ROW_POSITION].iloc[i])]]
            raise StatsError(
                f"a race on pass_rate reads each answer's passed; {who!r} answered without one "
                "(the probe sets no pass threshold): race on --metric mean_score"
            )
        bad = ~np.isnan(value) & ((value < 0) | (value > 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            who = self.models[self._state["system"][int(rows[ROW_POSITION].iloc[i])]]
            raise StatsError(
                f"a race reads {column} in [0, 1]; {who!r} scored {value[i]:g}: give "
                "normalised scores"
            )
        return value

    def outcome(self, rows: pd.DataFrame, stop: str | None = None) -> RaceOutcome:
        """What the waves read certify (:class:`RaceOutcome`); a wave a budget cut off is
        read first."""
        s = self._state
        if not s:
            raise UsageError("start() the design before asking for its outcome")
        if s["pending"] is not None:
            self._read(rows)
        standings: Standings = s["standings"]
        reason = "budget" if stop is not None and stop.startswith("budget") else stop
        if reason is None:
            reason = "certified" if standings.certified else "complete"
        note = ""
        if reason == "errors":
            note = (
                f"; stopped: {', '.join(s['silent'])} answered no case (every row an error): "
                "its place cannot be certified; fix the endpoint and run the same command "
                "again with --retry-errors"
            )
        elif reason == "budget":
            note = "; stopped by the budget: what was certified so far (the same command resumes)"
        elif reason == "complete" and not standings.certified:
            note = (
                "; every case drawn and the question not answered: the open systems are tied "
                "on these cases, or their errors leave them apart by less than the unknowns"
            )
        n_systems, n_cases = len(self.models), len(s["order"])
        method = (
            f"race ({self.target}) of {n_systems} systems on {n_cases} cases drawn without "
            f"replacement in a seeded order (seed {self.seed}), each wave sent to the systems "
            f"still in the race: simultaneous anytime-valid {self.confidence:.0%} intervals for "
            f"every pair's difference of {_SAID[self.metric]} over all {n_cases} "
            f"cases (confidence sequences without replacement, {_SAID[self.method]}, "
            "union bound over the pairs), certified relations closed by transitivity"
        )
        return standings.outcome(
            stop_reason=reason,
            n_uniform=n_systems * n_cases * s["repeats"],
            method=method,
            note=note,
        )

    def bounds(self, n_cases: int) -> None:
        """Unknown before the answers come: the waves depend on them."""
        return None
