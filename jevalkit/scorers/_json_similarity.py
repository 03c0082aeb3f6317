"""The ``json_similarity`` scorer: recursive structural similarity of two JSON documents.

Rules (each returns a value in [0, 1]):

- objects: the mean over the union of keys of the values' similarity; a key missing on one side
  scores 0; two empty objects score 1.
- arrays: position by position, summed, divided by the longer length; two empty arrays score 1.
- numbers: ``1 - |a - b| / (|a| + |b|)``; two zeros score 1. A boolean is never a number.
- strings: the Levenshtein similarity.
- booleans and null: 1 when equal, else 0.
- different types: 0. Output that is not strict JSON: 0 (with the reason).
"""

from __future__ import annotations

from typing import Any

from ..errors import ScoringError, StrictJSONError
from ._score import Score, failed
from ._strict_json import parse_strict_json
from ._text import levenshtein_similarity

NAME = "json_similarity"


def _kind(x: Any) -> str:
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int | float):
        return "number"
    if x is None:
        return "null"
    return type(x).__name__


def _number_similarity(a: float, b: float) -> float:
    if a == b:
        return 1.0
    scale = max(abs(a), abs(b))
    x, y = a / scale, b / scale
    return max(0.0, 1.0 - abs(x - y) / (abs(x) + abs(y)))


def similarity(a: Any, b: Any) -> float:
    """Structural similarity of two parsed JSON values, per the rules in this module's docstring.

    Example:
        >>> round(similarity({"a": 1, "b": "x"}, {"a": 3, "c": "x"}), 4)  # (0.5 + 0 + 0) / 3
        0.1667
        >>> similarity([1, 2], [1, 2, 3])
        0.6666666666666666
        >>> similarity(True, 1)
        0.0
    """
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return 0.0
    if ka == "dict":
        keys = a.keys() | b.keys()
        if not keys:
            return 1.0
        return sum(similarity(a[k], b[k]) for k in keys if k in a and k in b) / len(keys)
    if ka == "list":
        longest = max(len(a), len(b))
        if longest == 0:
            return 1.0
        return sum(similarity(x, y) for x, y in zip(a, b, strict=False)) / longest
    if ka == "number":
        return _number_similarity(a, b)
    if ka == "str":
        return levenshtein_similarity(a, b)
    return float(a == b)


def json_similarity(output: str, expected: str) -> Score:
    """Score how closely the JSON in ``output`` matches the JSON in ``expected`` (0..1).

    Raises:
        ScoringError: when ``expected`` itself is not strict JSON (a mistake in the spec).

    Example:
        >>> json_similarity('{"name": "Ada", "age": 36}', '{"name": "Ada", "age": 36}').value
        1.0
        >>> json_similarity('not json', '{}').value
        0.0
    """
    try:
        want = parse_strict_json(expected)
    except StrictJSONError as exc:
        raise ScoringError(f"expected JSON is invalid: {exc.reason}") from None
    try:
        got = parse_strict_json(output)
    except StrictJSONError as exc:
        return failed(NAME, exc.reason)
    try:
        value = similarity(got, want)
    except RecursionError:
        return failed(NAME, "$: JSON nested too deeply to compare")
    return Score(name=NAME, value=value, passed=value >= 1.0)
