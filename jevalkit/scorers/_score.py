"""The value every deterministic scorer returns."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Check:
    """One rubric check and whether the output held it (``None``: the scorer cannot tell).

    Example:
        >>> Check(id="ten_items", text="Exactly ten objects", passed=False).passed
        False
    """

    id: str
    text: str
    passed: bool | None


@dataclass(frozen=True)
class Score:
    """The result of scoring one output.

    Attributes:
        name: the scorer that produced it (``json_schema``, ``levenshtein``, ...).
        value: a float in [0, 1]; 1 is a perfect output.
        passed: whether the output passes (for ``json_schema``: valid; others: ``value >= threshold``).
        checks: the rubric checks that held or failed, where the scorer can tell.
        errors: human-readable problems, each starting with its JSON path (``$[9].id: ...``).
        first_failing_item: for list outputs, the 0-based index of the first item that breaks the
            schema; ``None`` when no single item does.

    Example:
        >>> Score(name="exact_match", value=1.0, passed=True).value
        1.0
        >>> Score(name="x", value=1.5, passed=True)
        Traceback (most recent call last):
        ...
        ValueError: Score.value must be a finite number in [0, 1], got 1.5
    """

    name: str
    value: float
    passed: bool
    checks: tuple[Check, ...] = ()
    errors: tuple[str, ...] = ()
    first_failing_item: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError(f"Score.value must be a finite number in [0, 1], got {v!r}")
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"Score.value must be a finite number in [0, 1], got {v!r}")
        object.__setattr__(self, "value", float(v))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (checks as a list of dicts).

        Example:
            >>> Score(name="exact_match", value=0.0, passed=False, errors=("$: differs",)).to_dict()["errors"]
            ['$: differs']
        """
        out = asdict(self)
        out["checks"] = [asdict(c) for c in self.checks]
        out["errors"] = list(self.errors)
        return out


def failed(name: str, reason: str, checks: tuple[Check, ...] = ()) -> Score:
    """A zero score carrying one reason, for output that cannot be scored at all.

    Example:
        >>> failed("json_schema", "$: not valid JSON").errors
        ('$: not valid JSON',)
    """
    return Score(name=name, value=0.0, passed=False, checks=checks, errors=(reason,))
