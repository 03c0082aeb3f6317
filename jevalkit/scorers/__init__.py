"""Deterministic scorers: each takes output text and returns a :class:`Score` in [0, 1].

A scorer is registered by name, as a factory (``@register_scorer``), so a probe file
(``scoring.type``) or a notebook parameter can name it: ``make_scorer(spec, rubric)`` builds the
scorer a ``scoring`` block describes, one call signature for every type.

Example:
    >>> from jevalkit.scorers import make_scorer
    >>> make_scorer({"type": "levenshtein", "expected": "abc"})("abd").value
    0.6666666666666667
"""

from __future__ import annotations

from ..errors import StrictJSONError
from ._constraints import CONSTRAINTS, constraints
from ._json_schema import JsonSchemaScorer, compile_schema, json_schema
from ._json_similarity import json_similarity, similarity
from ._registry import SCORERS, Scorer, ScorerFactory, get_scorer, make_scorer, register_scorer
from ._rubric import Condition, RubricCheck, Violation
from ._score import Check, Score
from ._strict_json import parse_strict_json
from ._text import exact_match, levenshtein, levenshtein_similarity

__all__ = [
    "CONSTRAINTS",
    "SCORERS",
    "Check",
    "Condition",
    "JsonSchemaScorer",
    "RubricCheck",
    "Score",
    "Scorer",
    "ScorerFactory",
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
    "make_scorer",
    "parse_strict_json",
    "register_scorer",
    "similarity",
]
