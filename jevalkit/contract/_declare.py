"""The estimator contract, declared on the function: ``@estimator(...)`` stores what a public
statistic promises as ``fn.contract`` and adds it to the registry the contract test reads.

The promises every public statistic is held to (``tests/contract/test_contract.py`` runs each
declared check on adversarial data; ``benchmarks/calibration.py`` simulates each interval):

- **invariance**: permuting rows, or renaming systems and cases (keeping their order), changes
  no number (``order``, ``rename``);
- **unit, pairing and scale checked**: values outside the declared scale, verdicts that are not
  0/1, case keys of different types in two systems, and duplicated rows without a repeat index
  are refused in one line naming the fix (``scale``, ``keys``, ``duplicates``);
- **identification**: what the data cannot determine (one case, no variation, a disconnected
  or separated comparison graph, positions that never vary) is refused, or reported as not
  estimable (NaN, ``method`` saying why), never as a number (``one_case``, ``graph``,
  ``one_order``);
- **honest intervals**: no interval narrower than the exact (Wilson) bound for bounded data, so
  never zero width; a gate never passes on a missing or zero-width interval (``no_spread``,
  ``gate``);
- **named**: ``method`` names the estimand and the interval (``method``).

A statistic joins by carrying the decorator; there is no list to keep beside the code. The
decorator also makes every statistic take a results object that carries rows (a run's
:class:`~jevalkit.runner.RunResult`) wherever it takes a results frame: each argument passes
through :func:`~jevalkit.results.rows_of`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast, get_args

from ..results import rows_of

# the vocabularies of a contract are types: mypy (`make lint`) holds their spelling where a
# contract is declared; the tuples below are the same words at run time
Unit = Literal[
    "case",
    "item",
    "value",
    "design",
    "game",
    "pair",
    "label",
    "system",
    "judged item",
    "judged row",
    "labelled item",
    "calibration item",
    "facet level",
    "rating",
    "trial",
    "unit",
]
DataKind = Literal["results", "two_runs", "games", "labels", "arrays"]
Check = Literal[
    "order",  # shuffled rows: the same numbers
    "rename",  # systems and cases renamed (order kept): the same numbers
    "scale",  # values outside [0, 1] / verdicts not 0/1: refused in one line
    "keys",  # int case ids in one system, str in the other: refused
    "duplicates",  # the same case, system and repeat twice: refused
    "one_case",  # a single case: no interval (NaN) or refused, never a number with a CI
    "no_spread",  # no variation: an interval of positive width, or none (never zero width)
    "gate",  # a decision never passes on a missing or zero-width interval
    "graph",  # games: disconnected refused, separation reported as unbounded
    "one_order",  # games shown in one order: position effects refused
    "method",  # ``method`` names the estimand and the interval
    "settings",  # two probe versions / params_hash of one system: kept apart or refused
]
DATA_KINDS: tuple[DataKind, ...] = get_args(DataKind)
CHECKS: tuple[Check, ...] = get_args(Check)
# the checks every statistic can take; a contract declares one beyond them, or says why none
# applies (``unchecked``)
BASIC_CHECKS: tuple[Check, ...] = ("order", "rename", "method")
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Contract:
    """What one public statistic promises (read by the contract test).

    Attributes:
        name: the public dotted name (``jevalkit.metrics.mean_score``).
        unit: the unit of analysis (``case``, ``game``, ``label``, ``value``, ...).
        estimand: what is estimated, in a few words.
        interval: how its uncertainty is given (``none (...)`` says why there is none).
        data: the kind of adversarial data the checks run on (one of :data:`DATA_KINDS`;
            ``arrays``: none, so no check can run).
        checks: the adversarial checks that apply (a subset of :data:`CHECKS`).
        call: the keyword arguments the contract test passes.
        adapter: a function of the standard frames of ``data`` that calls the estimator, for
            array-level code (so the frame checks reach it).
        calibration: the simulation in ``benchmarks/calibration.py`` of its interval.
        note: why a check does not apply, or where the statistic is pinned.
        unchecked: why no check beyond order, rename and method applies (required when the
            contract declares none).
    """

    name: str
    unit: Unit
    estimand: str
    interval: str
    data: DataKind = "results"
    checks: tuple[Check, ...] = ()
    call: Mapping[str, Any] = field(default_factory=dict)
    adapter: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    calibration: str | None = None
    note: str = ""
    unchecked: str = ""

    def __post_init__(self) -> None:
        if self.data not in DATA_KINDS:
            raise ValueError(f"{self.name}: data must be one of {DATA_KINDS}, got {self.data!r}")
        unknown = set(self.checks) - set(CHECKS)
        if unknown:
            raise ValueError(f"{self.name}: unknown checks {sorted(unknown)}; see CHECKS")
        if self.data == "arrays" and self.checks:
            raise ValueError(
                f"{self.name}: checks need standard data: give an adapter from a results frame"
            )
        if not self.checks and not self.note:
            raise ValueError(f"{self.name}: no check and no note saying why")
        if not set(self.checks) - set(BASIC_CHECKS) and not self.unchecked:
            raise ValueError(
                f"{self.name}: no check beyond {', '.join(BASIC_CHECKS)}: declare one, or say "
                "why none applies (unchecked=...)"
            )


_REGISTRY: dict[str, Contract] = {}
REGISTRY = MappingProxyType(_REGISTRY)


def public_name(fn: Callable[..., Any]) -> str:
    """The dotted name a user imports ``fn`` by: its module path without private parts.

    Example:
        >>> from jevalkit.stats import wilson_ci
        >>> public_name(wilson_ci)
        'jevalkit.stats.wilson_ci'
    """
    module = ".".join(p for p in fn.__module__.split(".") if not p.startswith("_"))
    return f"{module}.{fn.__qualname__}"


def estimator(
    *,
    unit: Unit,
    estimand: str,
    interval: str,
    data: DataKind = "results",
    checks: tuple[Check, ...] = (),
    call: Mapping[str, Any] | None = None,
    adapter: Callable[..., Any] | None = None,
    calibration: str | None = None,
    note: str = "",
    unchecked: str = "",
) -> Callable[[F], F]:
    """Declare a public statistic's contract on the function itself (``fn.contract``); the
    function returned takes a results object with rows wherever ``fn`` takes a frame
    (:func:`~jevalkit.results.rows_of`), and is ``fn`` otherwise (its name, signature and
    docstring; ``__wrapped__`` is ``fn``).

    Example:
        >>> @estimator(unit="value", estimand="a mean", interval="none (a point value)",
        ...            note="an example", unchecked="an example on a list")
        ... def example_mean(values):
        ...     return sum(values) / len(values)
        >>> example_mean.contract.unit, example_mean([1, 3])
        ('value', 2.0)
        >>> estimator(unit="case", estimand="x", interval="y")(example_mean)
        Traceback (most recent call last):
        ...
        ValueError: jevalkit.contract.example_mean: no check and no note saying why
    """

    def declare(fn: F) -> F:
        name = public_name(fn)
        contract = Contract(
            name=name,
            unit=unit,
            estimand=estimand,
            interval=interval,
            data=data,
            checks=tuple(checks),
            call=MappingProxyType(dict(call or {})),
            adapter=adapter,
            calibration=calibration,
            note=note,
            unchecked=unchecked,
        )
        if name in _REGISTRY and _REGISTRY[name] != contract:
            raise ValueError(f"{name} declares its contract twice")
        if not name.startswith("jevalkit.contract."):  # the docstring's example is no statistic
            _REGISTRY[name] = contract

        @functools.wraps(fn)
        def statistic(*args: Any, **kwargs: Any) -> Any:
            return fn(*map(rows_of, args), **{k: rows_of(v) for k, v in kwargs.items()})

        statistic.contract = contract  # type: ignore[attr-defined]
        return cast(F, statistic)

    return declare


def not_a_statistic(why: str) -> Callable[[F], F]:
    """Mark a public function of a statistics package that estimates nothing (a file reader, a
    sampling plan's draw, a simulator), saying why, where the function is defined; the contract
    test holds every other public function of metrics, stats, items and labels to a contract.

    Example:
        >>> @not_a_statistic("reads a file")
        ... def read_things(path):
        ...     return path
        >>> read_things.not_a_statistic
        'reads a file'
    """
    if not why:
        raise ValueError("say why the function is not a statistic")

    def mark(fn: F) -> F:
        fn.not_a_statistic = why  # type: ignore[attr-defined]
        return fn

    return mark
