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


class CompiledRubric:
    """A rubric ready to evaluate many outputs: which lines a violation breaks is worked out once
    per distinct (keyword, pointer, null) and remembered, and so is the tuple of :class:`Check`
    values for each set of broken lines (the checks are shared: they are frozen).

    Example:
        >>> rubric = CompiledRubric([RubricCheck("ids", "Integer ids", (Condition(("type",), "/*/id"),))])
        >>> rubric.evaluate([Violation("type", "/3/id", "4")], parsed=True)[0].passed
        False
    """

    _MEMO_LIMIT = 50_000

    def __init__(self, rubric: Iterable[RubricCheck]) -> None:
        self.lines = tuple(rubric)
        self._held = tuple(Check(r.id, r.text, True) for r in self.lines)
        self._broken = tuple(Check(r.id, r.text, False) for r in self.lines)
        self._unknown = tuple(Check(r.id, r.text, None) for r in self.lines)
        self._memo: dict[tuple[str, str, bool], frozenset[int]] = {}
        self._checks: dict[tuple[frozenset[int], bool], tuple[Check, ...]] = {}

    def _lines_broken_by(self, v: Violation) -> frozenset[int]:
        key = (v.keyword, v.pointer, v.instance is None)
        hit = self._memo.get(key)
        if hit is None:
            hit = frozenset(
                i for i, line in enumerate(self.lines) if any(c.matches(v) for c in line.fails_on)
            )
            if len(self._memo) >= self._MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = hit
        return hit

    def evaluate(
        self, violations: Sequence[Violation], parsed: bool, *, complete: bool = True
    ) -> tuple[Check, ...]:
        """Every rubric line, in order: held, broken, or unknown (``None``) when unparsed or
        when ``violations`` is not the complete list (a line no listed violation breaks may
        still be broken by one that was not listed)."""
        if len(violations) == 1:
            broken = self._lines_broken_by(violations[0])
        else:
            broken = frozenset().union(*map(self._lines_broken_by, violations))
        known = parsed and complete
        checks = self._checks.get((broken, known))
        if checks is None:
            fallback = self._held if known else self._unknown
            checks = tuple(
                self._broken[i] if i in broken else fallback[i] for i in range(len(self.lines))
            )
            if len(self._checks) >= self._MEMO_LIMIT:
                self._checks.clear()
            self._checks[broken, known] = checks
        return checks


def evaluate_rubric(
    rubric: Iterable[RubricCheck], violations: Sequence[Violation], parsed: bool
) -> tuple[Check, ...]:
    """Evaluate every rubric line, in order (for one output; see :class:`CompiledRubric`).

    Example:
        >>> rubric = [RubricCheck("bare", "Bare JSON", (Condition(keywords=("parse",)),))]
        >>> evaluate_rubric(rubric, [Violation("parse", "")], parsed=False)[0].passed
        False
    """
    return CompiledRubric(rubric).evaluate(violations, parsed)
