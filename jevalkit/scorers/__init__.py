"""Deterministic scorers: each takes output text and returns a :class:`Score` in [0, 1].

A scorer is registered by name so a probe file (``scoring.type``) or a notebook parameter can name it.

Example:
    >>> from jevalkit.scorers import get_scorer
    >>> get_scorer("levenshtein")("abc", "abd").value
    0.6666666666666667
"""

from __future__ import annotations

from collections.abc import Callable

from ._constraints import CONSTRAINTS, constraints
from ._json_schema import JsonSchemaScorer, compile_schema, json_schema
from ._json_similarity import json_similarity, similarity
from ._rubric import Condition, RubricCheck, Violation
from ._score import Check, Score
from ._strict_json import StrictJSONError, parse_strict_json
from ._text import exact_match, levenshtein, levenshtein_similarity

__all__ = [
    "CONSTRAINTS",
    "SCORERS",
    "Check",
    "Condition",
    "JsonSchemaScorer",
    "RubricCheck",
    "Score",
    "StrictJSONError",
    "Violation",
    "compile_schema",
    "constraints",
    "exact_match",
    "get_scorer",
    "json_schema",
    "json_similarity",
    "levenshtein",
    "levenshtein_similarity",
    "parse_strict_json",
    "similarity",
]

SCORERS: dict[str, Callable[..., Score]] = {
    "json_schema": json_schema,
    "json_similarity": json_similarity,
    "levenshtein": levenshtein,
    "exact_match": exact_match,
    "constraints": constraints,
}


def get_scorer(name: str) -> Callable[..., Score]:
    """Return the scorer registered as ``name``.

    Example:
        >>> get_scorer("exact_match").__name__
        'exact_match'
    """
    try:
        return SCORERS[name]
    except KeyError:
        raise KeyError(f"unknown scorer {name!r}; choose one of {sorted(SCORERS)}") from None
