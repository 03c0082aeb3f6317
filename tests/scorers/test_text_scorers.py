"""levenshtein, exact_match and json_similarity, with pinned values and property tests."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jevalkit.errors import ScoringError
from jevalkit.scorers import Score, exact_match, json_similarity, levenshtein, similarity


def test_levenshtein_values():
    assert levenshtein("kitten", "sitting").value == pytest.approx(1 - 3 / 7)
    assert levenshtein("", "").value == 1.0 and levenshtein("", "").passed
    assert levenshtein("abc", "").value == 0.0


def test_levenshtein_counts_code_points_not_bytes():
    # "é" is one code point (two UTF-8 bytes); one substitution out of four characters.
    assert levenshtein("café", "cafe").value == pytest.approx(0.75)
    assert levenshtein("😀a", "😀b").value == pytest.approx(0.5)


def test_levenshtein_threshold():
    assert levenshtein("colour", "color", threshold=0.8).passed
    assert not levenshtein("colour", "color").passed


def test_exact_match():
    assert exact_match("a", "a").passed and not exact_match("a", "a ").passed


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ({}, {}, 1.0),
        ([], [], 1.0),
        ({"a": 1}, {"a": 1}, 1.0),
        ({"a": 1}, {"b": 1}, 0.0),
        ({"a": 1, "b": 2}, {"a": 1}, 0.5),
        ([1, 2, 3], [1, 2], 2 / 3),
        (0, 0, 1.0),
        (1, 3, 0.5),
        (-1, 1, 0.0),
        (2.0, 2, 1.0),
        (True, True, 1.0),
        (True, 1, 0.0),
        (None, None, 1.0),
        (None, 0, 0.0),
        ("abc", "abd", 2 / 3),
        ("1", 1, 0.0),
        ({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "y"}]}, 0.5),
    ],
)
def test_similarity_rules(a, b, expected):
    assert similarity(a, b) == pytest.approx(expected)


def test_json_similarity_parses_both_sides():
    assert json_similarity('{"a": 1}', '{"a": 1}').value == 1.0
    result = json_similarity("oops", '{"a": 1}')
    assert result.value == 0.0 and "prose before" in result.errors[0]


def test_json_similarity_rejects_a_bad_expected_value():
    with pytest.raises(ScoringError, match="expected JSON is invalid"):
        json_similarity("{}", "{bad")


def test_huge_numbers_do_not_overflow():
    assert 0.0 <= similarity(10**400, -(10**399)) <= 1.0
    assert similarity(1e308, 1.7e308) == pytest.approx(1 - 0.7 / 2.7)


def in_unit_interval(s: Score) -> bool:
    return isinstance(s, Score) and math.isfinite(s.value) and 0.0 <= s.value <= 1.0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_text_scorers_never_raise(a, b):
    assert in_unit_interval(levenshtein(a, b))
    assert in_unit_interval(exact_match(a, b))
    assert in_unit_interval(json_similarity(a, "[1, 2]"))


@settings(max_examples=300, deadline=None)
@given(json_values, json_values)
def test_similarity_is_symmetric_and_bounded(a, b):
    value = similarity(a, b)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(similarity(b, a))
    assert similarity(a, a) == 1.0
