"""The ``constraints`` scorer: each instruction-following constraint is one deterministic check."""

from __future__ import annotations

import pytest

from jevalkit.scorers import CONSTRAINTS, constraints


@pytest.mark.parametrize(
    ("output", "spec", "held"),
    [
        ("one two three", {"max_words": 3}, True),
        ("one two three four", {"max_words": 3}, False),
        ("one two", {"min_words": 3}, False),
        ("  padded  ", {"max_chars": 6}, True),  # stripped first
        ("a\n\nb\nc", {"max_lines": 2}, False),
        ("The category is fine", {"forbidden_words": ["cat"]}, True),  # whole words only
        ("My Cat sleeps", {"forbidden_words": ["cat"]}, False),  # case-insensitive
        ("use a hash map here", {"required_words": ["hash map"]}, True),
        ("use a hashmap here", {"required_words": ["hash map"]}, False),
        ("Answer: yes", {"starts_with": "Answer:"}, True),
        ("yes. Done.", {"ends_with": "Done."}, True),
        ("all lower case", {"lowercase": True}, True),
        ("Not lower", {"lowercase": True}, False),
        ("LOUD 123", {"uppercase": True}, True),
        ("no digits here", {"no_digits": True}, True),
        ("room 101", {"no_digits": True}, False),
        ("- a\n- b\n- c", {"bullet_lines": 3}, True),
        ("- a\n- b\nc", {"bullet_lines": 3}, False),
        ("1. a\n2) b", {"bullet_lines": 2}, True),
    ],
)
def test_each_constraint(output, spec, held):
    score = constraints(output, spec)
    assert score.passed is held and score.value == float(held)
    assert [c.id for c in score.checks] == list(spec)


def test_value_is_the_share_of_checks_held_and_errors_name_the_failures():
    score = constraints(
        "Synergy is great",
        {"max_words": 5, "forbidden_words": ["synergy"], "lowercase": True, "no_digits": True},
    )
    assert score.value == 0.5 and not score.passed
    assert score.errors == ("$: Never uses: synergy", "$: No capital letters")


def test_unknown_or_empty_constraints_are_refused():
    with pytest.raises(ValueError, match="unknown constraint"):
        constraints("x", {"max_word": 3})
    with pytest.raises(ValueError, match="at least one"):
        constraints("x", {})
    assert "bullet_lines" in CONSTRAINTS
