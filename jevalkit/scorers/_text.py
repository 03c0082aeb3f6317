"""String scorers: exact match and normalised Levenshtein similarity."""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein

from ._score import Score


def levenshtein_similarity(a: str, b: str) -> float:
    """1 - edit distance / max length, on Unicode code points; two empty strings give 1.

    Example:
        >>> levenshtein_similarity("kitten", "sitting")  # distance 3, longer length 7
        0.5714285714285714
    """
    return float(Levenshtein.normalized_similarity(a, b))


def levenshtein(output: str, expected: str, *, threshold: float = 1.0) -> Score:
    """Score ``output`` by its normalised edit similarity to ``expected``.

    ``passed`` is ``value >= threshold`` (exact equality by default).

    Example:
        >>> levenshtein("colour", "color").value
        0.8333333333333334
        >>> levenshtein("", "").passed
        True
    """
    value = levenshtein_similarity(output, expected)
    return Score(name="levenshtein", value=value, passed=value >= threshold)


def exact_match(output: str, expected: str) -> Score:
    """1 when ``output`` equals ``expected`` character for character, else 0.

    Example:
        >>> exact_match("Paris", "Paris").value, exact_match("Paris ", "Paris").value
        (1.0, 0.0)
    """
    same = output == expected
    return Score(
        name="exact_match",
        value=float(same),
        passed=same,
        errors=() if same else ("$: output differs from the expected text",),
    )
