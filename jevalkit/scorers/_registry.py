"""Scorers registered by name, as factories with one call signature.

A probe file names its scorer in ``scoring.type``; the factory registered under that name builds
the scorer from the ``scoring`` block (and the probe's rubric): ``factory(spec, rubric)`` returns
a function ``output -> Score``. Adding a scorer is one decorated factory; nothing branches on the
type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ScoringError
from ._constraints import constraints
from ._json_schema import JsonSchemaScorer
from ._json_similarity import json_similarity
from ._rubric import RubricCheck
from ._score import Score
from ._text import exact_match, levenshtein

Scorer = Callable[[str | bytes], Score]
ScorerFactory = Callable[[Mapping[str, Any], tuple[RubricCheck, ...]], Scorer]
SCORERS: dict[str, ScorerFactory] = {}


def register_scorer(name: str) -> Callable[[ScorerFactory], ScorerFactory]:
    """Register the decorated factory as scorer ``name`` (what ``scoring.type`` names).

    Example:
        >>> @register_scorer("always_passes")
        ... def _always(spec, rubric):
        ...     return lambda output: Score(name="always_passes", value=1.0, passed=True)
        >>> make_scorer({"type": "always_passes"})("anything").passed
        True
        >>> del SCORERS["always_passes"]
    """

    def register(factory: ScorerFactory) -> ScorerFactory:
        SCORERS[name] = factory
        return factory

    return register


def get_scorer(name: str) -> ScorerFactory:
    """The factory registered as ``name``.

    Raises:
        ScoringError: no scorer has that name (the message lists the ones there are).

    Example:
        >>> get_scorer("levenshtein")({"expected": "abc"}, ())("abd").value
        0.6666666666666667
    """
    try:
        return SCORERS[name]
    except KeyError:
        raise ScoringError(f"unknown scorer {name!r}; choose one of {sorted(SCORERS)}") from None


def make_scorer(spec: Mapping[str, Any], rubric: tuple[RubricCheck, ...] = ()) -> Scorer:
    """The scorer a ``scoring`` block describes (``type`` names the factory).

    Example:
        >>> make_scorer({"type": "exact_match", "expected": "42"})(b"42").passed
        True
    """
    return get_scorer(spec.get("type", ""))(spec, rubric)


def _text(output: str | bytes) -> str:
    return output.decode("utf-8", "replace") if isinstance(output, bytes) else output


@register_scorer("json_schema")
def _json_schema(spec: Mapping[str, Any], rubric: tuple[RubricCheck, ...]) -> Scorer:
    return JsonSchemaScorer(spec["schema"], bare_json=spec.get("bare_json", True), rubric=rubric)


def _answer(output: str | bytes, spec: Mapping[str, Any]) -> str:
    text = _text(output)
    return text.strip() if spec.get("strip") else text


def _expected(spec: Mapping[str, Any]) -> str:
    """The expected answer as text (a JSON value given in YAML is compared as compact JSON)."""
    expected = spec["expected"]
    if isinstance(expected, str):
        return expected
    return json.dumps(expected, ensure_ascii=False, separators=(",", ":"))


@register_scorer("levenshtein")
def _levenshtein(spec: Mapping[str, Any], rubric: tuple[RubricCheck, ...]) -> Scorer:
    expected, threshold = _expected(spec), spec.get("threshold", 1.0)
    return lambda output: levenshtein(_answer(output, spec), expected, threshold=threshold)


@register_scorer("json_similarity")
def _json_similarity(spec: Mapping[str, Any], rubric: tuple[RubricCheck, ...]) -> Scorer:
    expected = _expected(spec)
    return lambda output: json_similarity(_answer(output, spec), expected)


@register_scorer("exact_match")
def _exact_match(spec: Mapping[str, Any], rubric: tuple[RubricCheck, ...]) -> Scorer:
    expected = _expected(spec)
    return lambda output: exact_match(_answer(output, spec), expected)


@register_scorer("constraints")
def _constraints(spec: Mapping[str, Any], rubric: tuple[RubricCheck, ...]) -> Scorer:
    rules = spec.get("constraints", {})
    return lambda output: constraints(_text(output), rules)
