"""Map JSON Schema violations onto a probe's human rubric checks.

A rubric check lists the violations that break it (``fails_on``). Each condition may name schema
keywords, a glob over the JSON pointer of the offending value (``/*/id`` is "the id of any item";
``""`` is the root), and whether the offending value is ``null``. The pseudo-keyword ``parse``
stands for "the output is not bare, strict JSON".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ._score import Check

PARSE = "parse"


@dataclass(frozen=True)
class Violation:
    """One schema violation: the keyword that failed, where, and the offending value."""

    keyword: str
    pointer: str
    instance: Any = None


def pointer_matches(pointer: str, pattern: str) -> bool:
    """Match a JSON pointer against a glob, one segment at a time (``*`` never crosses ``/``).

    Example:
        >>> pointer_matches("/9/id", "/*/id"), pointer_matches("/9/id", "/*")
        (True, False)
    """
    segments, wanted = pointer.split("/"), pattern.split("/")
    return len(segments) == len(wanted) and all(
        fnmatchcase(s, w) for s, w in zip(segments, wanted, strict=True)
    )


@dataclass(frozen=True)
class Condition:
    """A pattern of violations; every field given must match (``None`` matches anything)."""

    keywords: tuple[str, ...] | None = None
    at: str | None = None
    value_is_null: bool | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Condition:
        """Build from a probe file's ``fails_on`` entry.

        Example:
            >>> Condition.from_dict({"keyword": ["type"], "at": "/*/id"}).keywords
            ('type',)
        """
        kw = raw.get("keyword")
        keywords = None if kw is None else ((kw,) if isinstance(kw, str) else tuple(kw))
        return cls(keywords=keywords, at=raw.get("at"), value_is_null=raw.get("value_is_null"))

    def matches(self, v: Violation) -> bool:
        """Whether violation ``v`` fits this pattern.

        Example:
            >>> Condition(keywords=("type",), at="/*/id").matches(Violation("type", "/9/id", "10"))
            True
        """
        if self.keywords is not None and v.keyword not in self.keywords:
            return False
        if self.at is not None and not pointer_matches(v.pointer, self.at):
            return False
        return self.value_is_null is None or self.value_is_null == (
            v.instance is None and v.keyword != PARSE
        )


@dataclass(frozen=True)
class RubricCheck:
    """A human-readable rubric line and the violations that break it."""

    id: str
    text: str
    fails_on: tuple[Condition, ...] = ()

    def evaluate(self, violations: Sequence[Violation], parsed: bool) -> Check:
        """Return the :class:`Check` for this line given the output's violations.

        A check that does not concern parsing cannot be judged when the output did not parse.

        Example:
            >>> line = RubricCheck("nulls", "No nulls", (Condition(value_is_null=True),))
            >>> line.evaluate([Violation("type", "/0/name", None)], parsed=True).passed
            False
        """
        broken = any(c.matches(v) for v in violations for c in self.fails_on)
        if not parsed and not broken:
            return Check(self.id, self.text, None)
        return Check(self.id, self.text, not broken)


def evaluate_rubric(
    rubric: Iterable[RubricCheck], violations: Sequence[Violation], parsed: bool
) -> tuple[Check, ...]:
    """Evaluate every rubric line, in order.

    Example:
        >>> rubric = [RubricCheck("bare", "Bare JSON", (Condition(keywords=("parse",)),))]
        >>> evaluate_rubric(rubric, [Violation("parse", "")], parsed=False)[0].passed
        False
    """
    return tuple(line.evaluate(violations, parsed) for line in rubric)
