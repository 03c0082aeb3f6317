"""Designs: everything that decides, from the answers so far, which rows to send next.

A run plans every row it may send once: its *candidates*, one per planned job, described in the
results layer's own terms (:data:`CANDIDATE_COLUMNS`: the source that would answer it, then the
key columns of the row it would fill). A :class:`Design` answers two questions from the rows
so far:

- **what next**: :meth:`Design.next` names the candidates to send in the next wave (a
  :class:`Wave`), or says why to stop (a :class:`Stop`);
- **what they say**: :meth:`Design.outcome` is the answer the rows give under the design (an
  estimate with its interval, a ranking, the decisions of a cascade): a results object of the
  statistics package the design rests on.

The loop that sends is written once, in the runner (:func:`jevalkit.runner.run_design`: the
budget, resume, shards and Dask every run has); :func:`replay` is the same protocol answered
from a table of rows already known (a simulation, or real data replayed), with no request sent.
Designs live beside the statistics they rest on (``stats.AdaptiveRepeats``,
``items.ActiveCases``, ``labels.CascadeDesign``, ``metrics.Race``) and never import the runner,
as scikit-learn's searches only decide which candidates ``evaluate_candidates`` fits next.

A design is deterministic in its candidates and the rows it is shown (any randomness is seeded
by what it was built with): a run that is killed and started again replays the same waves,
finds their rows already written, and goes on where it stopped without drawing anew.

Every row a design sends records it in the ``design`` column: ``name`` (the design and its
settings, with the content hash of whatever it was built from), ``weighted`` (whether the row
was drawn with a probability that differs between rows: such rows are never read as a simple
sample; every statistic refuses them and points to the design's own estimate) and what the
design noted of the draw (its :attr:`Wave.notes`: a probability, a wave, a stage).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import pandas as pd

from ..errors import UsageError

CANDIDATE_COLUMNS = (
    "source",
    "probe",
    "version",
    "case_id",
    "variant",
    "system_a",
    "system_b",
    "position",
    "repeat",
)
ROW_POSITION = "candidate"  # the column of the rows shown to a design: its candidate's position
# what a design is, as messages name it: a new design adds its word here (mypy holds the spelling)
DesignKind = Literal["design", "adaptive repeats", "active", "cascade", "race"]
R = TypeVar("R", bound=str)  # a design's own words for why it stopped (a Literal type)


@dataclass(frozen=True)
class Wave:
    """The candidates a design sends next.

    Attributes:
        rows: positions in the candidates frame (each at most once, in the order to send).
        notes: what the design records of each row's draw, one list per name, as long as
            ``rows`` (``{"probability": [...]}``); written into each row's ``design``.
        label: what the progress bar says (``round 2``, ``wave 3``).

    Example:
        >>> Wave([3, 1], notes={"probability": [0.5, 0.25]}, label="wave 0").rows
        (3, 1)
    """

    rows: Sequence[int]
    notes: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        rows = tuple(int(r) for r in self.rows)
        if len(set(rows)) != len(rows):
            raise UsageError("a wave names each candidate at most once")
        for name, values in self.notes.items():
            if len(values) != len(rows):
                raise UsageError(
                    f"a wave's note {name!r} has {len(values)} values for {len(rows)} rows"
                )
        object.__setattr__(self, "rows", rows)

    def note(self, i: int) -> dict[str, Any]:
        """The notes of the wave's ``i``-th row.

        Example:
            >>> Wave([3, 1], notes={"probability": [0.5, 0.25]}).note(1)
            {'probability': 0.25}
        """
        return {name: _plain(values[i]) for name, values in self.notes.items()}


@dataclass(frozen=True)
class Arm:
    """A source of answers a design names itself, when it asks several models: a judge of a
    cascade, a system of a race. The run plans the same jobs for each arm, with the arm's
    model, endpoint, repeats and parameters, into a results file of its own.

    Attributes:
        name: how the candidates' ``source`` names it (a judge's name, a system).
        model: the model that answers.
        base_url: its endpoint (None: the run's, or the model's provider's).
        endpoint_from: where ``base_url`` came from: ``"caller"`` (the user named it) or a
            file's path (a cascade file): an endpoint named only in a file is sent no key
            unless the user confirms it.
        repeats: the repeats of each case it answers (None: the run's).
        parameters: how it is asked (a judge's :meth:`jevalkit.judges.JudgeConfig.parameters`;
            None: the run's).

    Example:
        >>> Arm("cheap", "local", repeats=2).repeats
        2
    """

    name: str
    model: str
    base_url: str | None = None
    endpoint_from: str = "caller"
    repeats: int | None = None
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Stop:
    """A design's answer when nothing more should be sent, and why (``target met``,
    ``complete``, ``decided``, ...).

    Example:
        >>> Stop("target met").reason
        'target met'
    """

    reason: str


class Design(ABC):
    """What decides, from the rows so far, which candidates to send next, and what the rows
    say (see the module docstring).

    A subclass sets :attr:`weighted` when its rows are drawn with unequal probabilities,
    :attr:`own_rows` when a run of it may resume only rows it drew itself (not another design's,
    whatever their weights), and implements :attr:`name`, :meth:`next` and :meth:`outcome`; :meth:`start` is told the
    candidates once before anything is sent (refuse there what the design cannot run).

    Example:
        >>> class FirstTwo(Design):
        ...     name = "first two"
        ...     def next(self, rows):
        ...         return Stop("done") if len(rows) else Wave([0, 1])
        ...     def outcome(self, rows, stop=None):
        ...         return float(rows["score"].mean())
        >>> table = pd.DataFrame({"source": "m", "probe": "p", "version": 1, "case_id": list("abc"),
        ...                       "repeat": 0, "score": [1.0, 0.0, 1.0]})
        >>> replay(FirstTwo(), table).outcome
        0.5
    """

    weighted: ClassVar[bool] = False
    # a design whose guarantee holds for one question fixed before its first row (a race: its
    # systems, target, confidence, order) resumes only its own rows, so that a results file never
    # mixes the rows of a question asked again after its answer was seen
    own_rows: ClassVar[bool] = False
    kind: ClassVar[DesignKind] = "design"

    @property
    def planned_repeats(self) -> int | None:
        """The repeats of each case a run must plan (None: the run's own)."""
        return None

    @property
    def subset(self) -> str | None:
        """How it chooses cases, as its rows' ``subset`` says (None: the run's, kept)."""
        return None

    @property
    def arms(self) -> tuple[Arm, ...] | None:
        """The models it asks itself (None: the run's model)."""
        return None

    @property
    @abstractmethod
    def name(self) -> str:
        """The design and its settings as its rows record them; a run refuses stored rows of
        its candidates that another weighted design drew (or, for a weighted design, that any
        other design or plain run wrote; for a design with :attr:`own_rows`, that any other
        design drew)."""

    def start(self, candidates: pd.DataFrame, *, in_flight: int = 1) -> None:  # noqa: B027
        """Told every candidate once (a frame of :data:`CANDIDATE_COLUMNS`, positions
        0..n-1) before anything is sent, and how many requests the run keeps in flight (a
        design may fill its waves to it); refuse here (a ``UsageError`` naming the fix) what
        the design cannot run."""

    @abstractmethod
    def next(self, rows: pd.DataFrame) -> Wave | Stop:
        """The next wave, or why to stop, from every row sent so far (results rows with a
        ``candidate`` column: the position of the candidate each fills)."""

    @abstractmethod
    def outcome(self, rows: pd.DataFrame, stop: str | None = None) -> Any:
        """What the rows say under the design (a results object); ``stop``: why the loop
        stopped (the design's own reason, or a budget)."""

    def bounds(self, n_cases: int) -> tuple[int, int] | None:
        """The fewest and most rows it sends of ``n_cases`` cases planned once each (None:
        unknown before the answers come, as for a plan drawn from them); a dry run prints them.
        """
        return None

    def row_design(self, note: Mapping[str, Any]) -> dict[str, Any]:
        """The ``design`` column of a row this design sends (``note``: the wave's notes for
        it).

        Example:
            >>> class D(Design):
            ...     name = "d"
            ...     def next(self, rows): return Stop("x")
            ...     def outcome(self, rows, stop=None): return None
            >>> D().row_design({"wave": 2})
            {'name': 'd', 'weighted': False, 'wave': 2}
        """
        return {"name": self.name, "weighted": self.weighted, **note}


def check_candidates(candidates: pd.DataFrame) -> pd.DataFrame:
    """The candidates frame as designs see it: the :data:`CANDIDATE_COLUMNS` (missing ones
    None), a clean 0..n-1 index, and no two candidates of one row key and source.

    Example:
        >>> check_candidates(pd.DataFrame({"source": "m", "probe": "p", "version": 1,
        ...                                "case_id": ["a", "b"], "repeat": 0})).shape
        (2, 9)
    """
    frame = candidates.reset_index(drop=True)
    for column in CANDIDATE_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame = frame[list(CANDIDATE_COLUMNS)].astype(object)
    frame = frame.where(frame.notna(), None)
    if frame.duplicated().any():
        first = frame[frame.duplicated()].iloc[0].to_dict()
        raise UsageError(f"a row is planned twice: {first}")
    return frame


def check_wave(step: Wave | Stop, n_candidates: int, sent: set[int]) -> Wave | Stop:
    """A design's answer, checked: a wave names known candidates not sent before.

    Example:
        >>> check_wave(Wave([5]), 3, set())
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: the design named candidate 5 of 3
    """
    if isinstance(step, Stop):
        return step
    if not isinstance(step, Wave):
        raise UsageError(f"a design's next() returns a Wave or a Stop, got {type(step).__name__}")
    for position in step.rows:
        if not 0 <= position < n_candidates:
            raise UsageError(f"the design named candidate {position} of {n_candidates}")
        if position in sent:
            raise UsageError(f"the design named candidate {position} a second time")
    return step


@dataclass(frozen=True)
class Replayed:
    """What :func:`replay` returns: the rows sent (with their ``candidate``), the waves, why
    it stopped, and the design's outcome.

    Attributes:
        rows: the rows the design asked for, in the order sent.
        waves: how many waves were sent.
        stop: why it stopped (the design's reason, or ``budget``).
        outcome: :meth:`Design.outcome` of the rows.
    """

    rows: pd.DataFrame
    waves: int
    stop: str
    outcome: Any


def replay(
    design: Design,
    table: pd.DataFrame,
    *,
    budget_rows: int | None = None,
    answer: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> Replayed:
    """Run ``design`` on rows already known instead of sending requests: ``table`` holds one
    row per candidate (its :data:`CANDIDATE_COLUMNS`, missing ones None, and the answer
    columns: ``score``, ``passed``, ...); each wave is answered with the table's rows it names
    (or by ``answer`` given those rows). ``budget_rows``: stop before a wave that would send
    more rows than this in all (as a run's request budget does). The same protocol as the
    runner's loop: for simulations, and for replaying a design on real data.

    Example:
        >>> class All(Design):
        ...     name = "all"
        ...     def next(self, rows):
        ...         return Stop("complete") if len(rows) else Wave(range(3))
        ...     def outcome(self, rows, stop=None):
        ...         return len(rows), stop
        >>> t = pd.DataFrame({"source": "m", "probe": "p", "version": 1, "case_id": list("abc"),
        ...                   "repeat": 0, "score": [1.0, 0.0, 1.0]})
        >>> replay(All(), t).outcome, replay(All(), t, budget_rows=2).stop
        ((3, 'complete'), 'budget')
    """
    frame = table.reset_index(drop=True)
    candidates = check_candidates(frame)
    design.start(candidates)
    parts: list[pd.DataFrame] = []
    rows = frame.iloc[:0].assign(**{ROW_POSITION: pd.Series(dtype=int)})
    sent: set[int] = set()
    waves, stop = 0, None
    while stop is None:
        step = check_wave(design.next(rows), len(candidates), sent)
        if isinstance(step, Stop):
            stop = step.reason
            break
        if budget_rows is not None and len(sent) + len(step.rows) > budget_rows:
            stop = "budget"
            break
        chosen = frame.iloc[list(step.rows)]
        part = (answer(chosen) if answer is not None else chosen).reset_index(drop=True)
        part = part.assign(
            **{ROW_POSITION: list(step.rows)},
            design=[design.row_design(step.note(i)) for i in range(len(step.rows))],
        )
        sent |= set(step.rows)
        parts.append(part)
        rows = pd.concat(parts, ignore_index=True)
        waves += 1
    return Replayed(rows=rows, waves=waves, stop=stop, outcome=design.outcome(rows, stop))


def reason_in(stop: str | None, reasons: Sequence[R], *, done: R) -> R | None:
    """Why a run of a design stopped (the ``stop`` its :meth:`Design.outcome` is told), in the
    design's own words, one of ``reasons``: ``done`` when it ran to its end (None), ``budget``
    when the run's budget stopped it; None when ``stop`` is none of them.

    Example:
        >>> words = ("complete", "target", "budget")
        >>> reason_in(None, words, done="complete"), reason_in("budget: $1 spent", words, done="complete")
        ('complete', 'budget')
        >>> reason_in("tired", words, done="complete") is None
        True
    """
    if not stop:
        return done
    said = "budget" if stop.startswith("budget") else stop
    return next((r for r in reasons if r == said), None)


def weighted_rows(rows: pd.DataFrame) -> np.ndarray:
    """Which rows a weighted design drew (their ``design`` says ``weighted``): never a simple
    sample.

    Example:
        >>> weighted_rows(pd.DataFrame({"design": [None, {"name": "a", "weighted": True}]})).tolist()
        [False, True]
    """
    if "design" not in rows.columns:
        return np.zeros(len(rows), dtype=bool)
    return np.array(
        [isinstance(d, Mapping) and bool(d.get("weighted")) for d in rows["design"]], dtype=bool
    )


def design_names(rows: pd.DataFrame) -> list[str]:
    """The names of the designs that drew ``rows``, sorted (none for a plain run's rows).

    Example:
        >>> design_names(pd.DataFrame({"design": [None, {"name": "b"}, {"name": "a"}]}))
        ['a', 'b']
    """
    if "design" not in rows.columns:
        return []
    return sorted(
        {str(d.get("name")) for d in rows["design"] if isinstance(d, Mapping) and d.get("name")}
    )


def _plain(value: Any) -> Any:
    """A note's value as plain JSON data (numpy scalars as Python numbers)."""
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, str | bytes):
        return item()
    return value
