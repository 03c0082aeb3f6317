"""A race's standings: what the cases answered so far certify about the systems' order.

The estimand is each system's mean score over *all N cases of the benchmark* (what a run of
every case would report; the full-data ranking), not over other cases like them: cases are drawn
without replacement in a seeded random order, so the first n are a simple random sample of the
N, and every pair's interval closes on its exact difference as n reaches N. (Drawing with
replacement would ask the same case twice, which tells nothing new of a deterministic system;
a superpopulation of cases is another question, which a fixed benchmark cannot answer.)

Every pair of systems (a, b) has a confidence sequence for the difference of their means,
from the paired differences d = y_a - y_b of the cases both answered (case difficulty cancels),
read as (d + 1) / 2 in [0, 1] (:class:`jevalkit.stats.FiniteSequences`). Each pair takes
alpha / P of the error, P = S (S - 1) / 2 the pairs (a union bound, valid however the pairs
depend on each other), so every interval of every pair holds at every wave at once with
probability 1 - alpha. On that event every statement below holds together:

- a is *surely better* than b when the pair's interval lies above 0; the relation is closed by
  transitivity (a > b > c certifies a > c);
- rank intervals: rank_low = 1 + #{surely better}, rank_high = S - #{surely worse};
- top K (best is top 1): a system is *out* once at least K systems are surely better than it
  or already *in*; *in* once at least S - K systems are surely worse than it or already *out*
  (successive accepts and rejects, Bubeck, Wang & Viswanathan 2013: a system in the top K with
  K others above it would make K + 1);
- ranks: a system's rank is settled when its rank interval is one rank.

A settled system leaves the race: it is sent no more cases, since what is left to certify
concerns only the others. An unknown answer (an error row, or a repeat a budget cut off) enters
as the least and the greatest score it could have had, so an error never helps a system up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..contract import Result, finish
from ..errors import StatsError
from ..files import read_text, write_file
from ..stats import FiniteSequences

SYSTEM_COLUMNS = [
    "system",
    "status",
    "rank_low",
    "rank_high",
    "settled_wave",
    "settled_cases",
    "n_cases",
    "n_requests",
    "n_errors",
    "value",
]
PAIR_COLUMNS = [
    "system_a",
    "system_b",
    "n_cases",
    "value",
    "ci_low",
    "ci_high",
    "verdict",
    "certified_by",
    "method",
]
STOP_REASONS = ("certified", "complete", "budget", "errors")
# Floating-point sums of N paired differences are off by a few units in the last place: two
# systems whose means are equal (the same scores in another order) could read 1e-16 apart and be
# certified. A difference of means smaller than this (on the [0, 1] scale of the scores) is a tie:
# never certified, and a pair closed within it is "known exactly".
TIE = 1e-9


def parse_target(target: str, n_systems: int) -> int | None:
    """The K of a race's target: 1 for ``best``, K for ``top:K``, None for ``ranks``.

    Example:
        >>> parse_target("top:3", 10), parse_target("best", 4), parse_target("ranks", 4)
        (3, 1, None)
        >>> parse_target("top:4", 4)
        Traceback (most recent call last):
        ...
        jevalkit.errors.StatsError: target top:4: K must be from 1 to 3 (one less than the 4 systems); give best, top:K or ranks
    """
    if target == "ranks":
        return None
    if target == "best":
        return 1
    text = target[4:] if isinstance(target, str) and target.startswith("top:") else ""
    if not text.isdigit() or not 1 <= int(text) < n_systems:
        raise StatsError(
            f"target {target}: K must be from 1 to {n_systems - 1} (one less than the "
            f"{n_systems} systems); give best, top:K or ranks"
        )
    return int(text)


# a race's outcome file: two small tables (systems, pairs); 64 MiB holds thousands of systems
MAX_OUTCOME_BYTES = 64 * 1024**2


@dataclass(frozen=True, eq=False)
class RaceOutcome(Result):
    """What a race certified (:class:`jevalkit.metrics.Race`).

    Attributes:
        systems: one row per system (``.table()``), by rank interval: ``system``, ``status``
            (``best`` / ``not best``, ``in top K`` / ``not in top K``, ``rank r``, or ``open``:
            not certified), ``rank_low``, ``rank_high`` (its simultaneous rank interval),
            ``settled_wave`` (the wave after which its status was certified; NA: open),
            ``settled_cases`` (cases drawn by then), ``n_cases`` (cases it answered),
            ``n_requests`` (rows sent to it), ``n_errors`` (of those, without a score),
            ``value`` (its mean score over the cases it answered: not comparable between
            systems that left at different waves; the order is the rank interval's).
        pairs: one row per pair: ``system_a``, ``system_b``, ``n_cases`` (cases both
            answered), ``value`` (mean paired difference a - b), ``ci_low``, ``ci_high``
            (the simultaneous anytime-valid interval of the difference of their means over all
            the benchmark's cases; NaN when known exactly), ``verdict`` (``a better``,
            ``b better`` or ``open``), ``certified_by`` (``interval``: its own interval excludes
            0; ``every case``: it did only once every case was drawn, so the order is the
            exact one on these cases, with nothing said of other cases like them;
            ``transitivity``: a chain of certified pairs orders them; None: open),
            ``method``.
        target: ``best``, ``top:K`` or ``ranks``.
        certified: whether the question is answered.
        answer: the answer when certified (the best system; the top K; every system in rank
            order), else empty.
        stop_reason: ``certified``, ``complete`` (every case drawn, not all certified: ties,
            or errors), ``budget``, ``errors`` (a system answered no case).
        waves, n_cases, cases_drawn: waves sent, the benchmark's cases, cases drawn.
        n_requests: rows the race sent (a resumed row counts; retries do not).
        n_uniform: rows a run of every case on every system would send.
        confidence: of all the statements together.
        method: what was done.
    """

    _unpack = None

    systems: pd.DataFrame
    pairs: pd.DataFrame = field(repr=False)
    target: str
    certified: bool
    answer: tuple[str, ...]
    stop_reason: str
    waves: int
    n_cases: int
    cases_drawn: int
    n_requests: int
    n_uniform: int
    confidence: float
    method: str

    def table(self) -> pd.DataFrame:
        """The systems, by rank interval."""
        return self.systems.copy()

    def save(self, path: str | Path) -> Path:
        """Write the outcome as JSON (:meth:`load` reads it; the leaderboard report shows
        it).

        Example:
            >>> import tempfile
            >>> from jevalkit.results import replay
            >>> from jevalkit.metrics import Race
            >>> table = pd.DataFrame({"source": ["a"] * 30 + ["b"] * 30, "probe": "p",
            ...                       "version": 1, "case_id": list(range(30)) * 2,
            ...                       "repeat": 0, "score": [1.0] * 30 + [0.0] * 30})
            >>> done = replay(Race(models=["a", "b"], first_wave=20), table).outcome
            >>> RaceOutcome.load(done.save(Path(tempfile.mkdtemp()) / "race.json")).answer
            ('a',)
        """
        record = {name: value for name, value in self.scalars().items()}
        record["answer"] = list(self.answer)
        record["systems"] = json.loads(self.systems.to_json(orient="records"))
        record["pairs"] = json.loads(self.pairs.to_json(orient="records"))
        out = Path(path)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StatsError(
                f"{out}: cannot write the race's outcome ({exc.strerror}: {exc.filename}); give another "
                "path (the race's rows are written: the same command resumes without sending)"
            ) from None
        return Path(
            write_file(out, json.dumps(record, indent=1) + "\n", StatsError, what="race outcome")
        )

    @classmethod
    def load(cls, path: str | Path) -> RaceOutcome:
        """A race's outcome as :meth:`save` wrote it.

        Example:
            >>> RaceOutcome.load("missing.json")
            Traceback (most recent call last):
            ...
            jevalkit.errors.StatsError: missing.json: no such race outcome; write one with jevalkit race ... --outcome PATH, or RaceOutcome.save
        """
        try:
            text = read_text(path, StatsError, max_bytes=MAX_OUTCOME_BYTES, what="race outcome")
        except StatsError as exc:
            raise StatsError(
                f"{exc}; write one with jevalkit race ... --outcome PATH, or RaceOutcome.save"
            ) from None
        try:
            record = json.loads(text)
            systems = pd.DataFrame(record.pop("systems"), columns=SYSTEM_COLUMNS)
            pairs = pd.DataFrame(record.pop("pairs"), columns=PAIR_COLUMNS)
            record["answer"] = tuple(record["answer"])
            for column in ("settled_wave", "settled_cases"):
                systems[column] = systems[column].astype("Int64")
            return cls(systems=systems, pairs=pairs, **record)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StatsError(
                f"{path}: cannot read a race's outcome ({exc}); write one with jevalkit race "
                "... --outcome PATH, or RaceOutcome.save"
            ) from None


class Standings:
    """The certified order of S systems as a race's waves come in (the module docstring).

    Args:
        systems: the systems' names.
        n_cases: N, the benchmark's cases.
        target: ``best``, ``top:K`` or ``ranks``.
        confidence: of every statement together.
        method: of the pairs' sequences (``empirical_bernstein`` or ``hoeffding``).

    Example:
        >>> s = Standings(["a", "b", "c"], n_cases=40, target="best")
        >>> for _ in range(4):
        ...     s.add_wave(np.tile([1.0, 0.0, 0.0], (10, 1)), np.ones(3, bool))
        >>> s.table()[["system", "status", "rank_low", "rank_high"]].values.tolist()
        [['a', 'best', 1, 1], ['b', 'not best', 2, 3], ['c', 'not best', 2, 3]]
    """

    def __init__(
        self,
        systems: list[str],
        *,
        n_cases: int,
        target: str = "best",
        confidence: float = 0.95,
        method: str = "empirical_bernstein",
    ) -> None:
        s = len(systems)
        if s < 2 or len(set(systems)) != s:
            raise StatsError(f"a race needs at least two distinct systems, got {systems}")
        if not 0 < confidence < 1:
            raise StatsError(f"confidence must be between 0 and 1, got {confidence!r}")
        self.systems, self.n_cases, self.target = list(systems), int(n_cases), target
        self.k = parse_target(target, s)
        self.confidence = float(confidence)
        self.ja, self.jb = np.triu_indices(s, 1)
        self.n_pairs = len(self.ja)
        self.seq = FiniteSequences(
            self.n_pairs,
            population=self.n_cases,
            confidence=1 - (1 - confidence) / self.n_pairs,
            method=method,
        )
        self.active = np.ones(s, bool)
        self.accepted = np.zeros(s, bool)
        self.rejected = np.zeros(s, bool)
        self.better = np.zeros((s, s), bool)  # closed: row surely better than column
        self.direct = np.zeros((s, s), bool)  # by the pair's own interval
        self.whole = np.zeros((s, s), bool)  # by it, only once every case was drawn
        self.settled_wave = np.full(s, -1)
        self.settled_cases = np.full(s, -1)
        self.n_answered = np.zeros(s, dtype=int)  # cases drawn while it drew
        self.n_requests = np.zeros(s, dtype=int)
        self.n_errors = np.zeros(s, dtype=int)
        self.total = np.zeros(s)  # sum of known scores
        self.n_known = np.zeros(s, dtype=int)
        self.pair_sum = np.zeros(self.n_pairs)
        self.waves = 0
        self.cases_drawn = 0

    # -- feeding -------------------------------------------------------------------------

    def add_wave(
        self,
        low: np.ndarray,
        drew: np.ndarray,
        high: np.ndarray | None = None,
        *,
        requests: np.ndarray | None = None,
        known: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """One wave: ``low`` / ``high`` (cases x systems, in draw order) bound each case's
        score of each system that drew (``drew``; ``high`` None: the scores are known);
        ``requests`` the rows each system was sent, ``known`` (sum, count) of its scored rows
        (default: one row per case, every score known). Then the standings are settled."""
        high = low if high is None else high
        drew = np.asarray(drew, bool)
        if low.ndim != 2 or low.shape[1] != len(self.systems) or high.shape != low.shape:
            raise StatsError(f"a wave gives cases x {len(self.systems)} systems' scores")
        if self.cases_drawn + len(low) > self.n_cases:
            raise StatsError(f"a race draws at most the {self.n_cases} cases of its benchmark")
        pairs = drew[self.ja] & drew[self.jb]
        for lo, hi in zip(low, high, strict=True):
            z_low = np.where(pairs, (lo[self.ja] - hi[self.jb] + 1) / 2, 0.5)
            z_high = np.where(pairs, (hi[self.ja] - lo[self.jb] + 1) / 2, 0.5)
            self.seq.add(z_low, z_high, pairs)
        mid = (low + high) / 2
        self.pair_sum[pairs] += (mid[:, self.ja] - mid[:, self.jb]).sum(axis=0)[pairs]
        self.n_answered[drew] += len(low)
        if requests is None:
            requests = np.where(drew, len(low), 0)
        if known is None:
            known = (np.where(drew, np.nansum(low, axis=0), 0.0), requests)
        self.n_requests += requests
        self.total += known[0]
        self.n_known += known[1]
        self.n_errors += requests - known[1]
        self.cases_drawn += len(low)
        self.settle()
        self.waves += 1

    def settle(self) -> None:
        """Certify what the intervals now say, and let the settled systems leave."""
        low, high = self.seq.interval()
        # (d + 1) / 2 reads a difference d of TIE as TIE / 2 (the module's TIE)
        before = self.direct.copy()
        self.direct[self.ja, self.jb] |= low > 0.5 + TIE / 2
        self.direct[self.jb, self.ja] |= high < 0.5 - TIE / 2
        if self.cases_drawn >= self.n_cases:
            self.whole |= self.direct & ~before
        better = self.direct | self.better
        for m in range(len(self.systems)):  # Warshall: a > m > b certifies a > b
            better |= better[:, m : m + 1] & better[m : m + 1, :]
        self.better = better
        if self.k is None:
            above, below = better.sum(axis=0), better.sum(axis=1)
            settled = (1 + above) == (len(self.systems) - below)
            self.accepted |= settled
        else:
            self._accept_reject(self.k)
        newly = (self.accepted | self.rejected) & self.active
        self.settled_wave[newly] = self.waves
        self.settled_cases[newly] = self.cases_drawn
        self.active &= ~newly

    def _accept_reject(self, k: int) -> None:
        s = len(self.systems)
        changed = True
        while changed:
            changed = False
            for j in np.flatnonzero(~(self.accepted | self.rejected)):
                others = np.arange(s) != j
                up = ((self.better[:, j] | self.accepted) & others).sum()
                down = ((self.better[j, :] | self.rejected) & others).sum()
                if up >= k:
                    self.rejected[j], changed = True, True
                elif down >= s - k:
                    self.accepted[j], changed = True, True

    # -- reading -------------------------------------------------------------------------

    @property
    def certified(self) -> bool:
        """Whether the question is answered (no system left in the race)."""
        return not self.active.any()

    def ranks(self) -> tuple[np.ndarray, np.ndarray]:
        """Every system's simultaneous rank interval."""
        s = len(self.systems)
        low = 1 + self.better.sum(axis=0)
        high = s - self.better.sum(axis=1)
        if self.k is not None:
            high = np.where(self.accepted, np.minimum(high, self.k), high)
            low = np.where(self.rejected, np.maximum(low, self.k + 1), low)
        return low, high

    def status(self) -> list[str]:
        """Each system's certified status (``open`` when not certified)."""
        low, _ = self.ranks()
        out = []
        for j in range(len(self.systems)):
            if self.k is None:
                out.append(f"rank {low[j]}" if self.accepted[j] else "open")
            elif self.accepted[j]:
                out.append("best" if self.target == "best" else f"in top {self.k}")
            elif self.rejected[j]:
                out.append("not best" if self.target == "best" else f"not in top {self.k}")
            else:
                out.append("open")
        return out

    def _values(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_known > 0, self.total / np.maximum(self.n_known, 1), np.nan)

    def _order(self) -> np.ndarray:
        """The systems by rank interval, then value (best first), then name."""
        low, high = self.ranks()
        value = np.nan_to_num(self._values(), nan=-1.0)
        return np.lexsort((np.asarray(self.systems, dtype=object), -value, high, low))

    def table(self) -> pd.DataFrame:
        """The systems' rows of :class:`RaceOutcome`, by rank interval."""
        low, high = self.ranks()
        settled = self.settled_wave >= 0
        table = pd.DataFrame(
            {
                "system": self.systems,
                "status": self.status(),
                "rank_low": low.astype(int),
                "rank_high": high.astype(int),
                "settled_wave": pd.array(np.where(settled, self.settled_wave, 0), "Int64"),
                "settled_cases": pd.array(np.where(settled, self.settled_cases, 0), "Int64"),
                "n_cases": self.n_answered,
                "n_requests": self.n_requests,
                "n_errors": self.n_errors,
                "value": self._values(),
            }
        )
        table.loc[~settled, ["settled_wave", "settled_cases"]] = pd.NA
        return finish(table.iloc[self._order()], order=SYSTEM_COLUMNS)

    def pairs(self) -> pd.DataFrame:
        """The pairs' rows of :class:`RaceOutcome`."""
        low, high = self.seq.interval()
        exact = high - low <= TIE / 2
        n = self.seq.t
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(n > 0, self.pair_sum / np.maximum(n, 1), np.nan)
        verdict = np.where(
            self.better[self.ja, self.jb],
            "a better",
            np.where(self.better[self.jb, self.ja], "b better", "open"),
        )
        direct = self.direct[self.ja, self.jb] | self.direct[self.jb, self.ja]
        whole = self.whole[self.ja, self.jb] | self.whole[self.jb, self.ja]
        by = np.where(
            verdict == "open",
            np.array(None, dtype=object),
            np.where(direct, np.where(whole, "every case", "interval"), "transitivity"),
        )
        names = np.asarray(self.systems, dtype=object)
        each = 100 * self.seq.confidence
        method = np.where(
            exact,
            f"every one of the {self.n_cases} cases answered by both: the difference is "
            "known exactly (no interval)",
            f"anytime-valid confidence sequence without replacement ({self.seq.kind}, "
            f"Waudby-Smith & Ramdas 2020) for the difference of mean scores over all "
            f"{self.n_cases} cases, at {each:.6g}% for each of {self.n_pairs} pair(s): "
            f"simultaneous {self.confidence:.0%} (union bound)",
        )
        return finish(
            {
                "system_a": names[self.ja],
                "system_b": names[self.jb],
                "n_cases": n,
                "value": value,
                "ci_low": np.where(exact, np.nan, 2 * low - 1),
                "ci_high": np.where(exact, np.nan, 2 * high - 1),
                "verdict": verdict,
                "certified_by": by,
                "method": method,
            },
            order=PAIR_COLUMNS,
        )

    def answer(self) -> tuple[str, ...]:
        """The certified answer (empty when not certified)."""
        if not self.certified:
            return ()
        chosen = self.accepted if self.k is not None else np.ones(len(self.systems), bool)
        return tuple(self.systems[j] for j in self._order() if chosen[j])

    def outcome(
        self, *, stop_reason: str, n_uniform: int, method: str, note: str = ""
    ) -> RaceOutcome:
        """The :class:`RaceOutcome` of the waves so far."""
        if stop_reason not in STOP_REASONS:
            raise StatsError(f"a race stops {', '.join(STOP_REASONS)}, not {stop_reason!r}")
        whole = int(self.whole.sum())
        if whole:
            note += (
                f"; {whole} pair(s) certified only once every case was drawn (certified_by "
                "'every case'): their order is exact on these cases and says nothing of other "
                "cases like them (equally able systems differ on a finite benchmark)"
            )
        cyclic = bool(np.diag(self.better).any())
        if cyclic:
            note += (
                "; the certified relations form a cycle: the intervals' coverage event "
                f"failed (probability at most {1 - self.confidence:.0%})"
            )
        return RaceOutcome(
            systems=self.table(),
            pairs=self.pairs(),
            target=self.target,
            certified=self.certified,
            answer=self.answer(),
            stop_reason=stop_reason,
            waves=self.waves,
            n_cases=self.n_cases,
            cases_drawn=self.cases_drawn,
            n_requests=int(self.n_requests.sum()),
            n_uniform=int(n_uniform),
            confidence=self.confidence,
            method=method + note,
        )
