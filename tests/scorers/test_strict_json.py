"""parse_strict_json reads with jiter first and falls back to the standard library's strict
decoder: it must accept exactly the texts the standard library's strict decoding accepts, and
read them as the same values (the reference below is that decoding, written out here)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_texts import texts

from jevalkit.errors import StrictJSONError
from jevalkit.scorers import parse_strict_json


class Refused(Exception):
    pass


def _pairs(pairs):
    if len({k for k, _ in pairs}) != len(pairs):
        raise Refused("duplicate key")
    return dict(pairs)


def _constant(name):
    raise Refused(name)


REFERENCE = json.JSONDecoder(parse_constant=_constant, object_pairs_hook=_pairs)


def reference(text: str) -> str | None:
    """The strict verdict of the standard library alone: the value as JSON, or None."""
    if not text.strip(" \t\n\r") or text.lstrip(" \t\n\r")[0] not in '[{"-0123456789tfn':
        return None
    try:
        value = REFERENCE.decode(text)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # no lone surrogate
    except (Refused, RecursionError, ValueError, UnicodeEncodeError):
        return None
    return json.dumps(value)


def ours(text: str) -> str | None:
    try:
        return json.dumps(parse_strict_json(text))
    except StrictJSONError:
        return None


@settings(max_examples=1500, deadline=None)
@given(texts())
def test_accepts_and_reads_exactly_what_the_strict_standard_decoder_does(text):
    assert ours(text) == reference(text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_on_any_text_too(text):
    assert ours(text) == reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 250 + "]" * 250,  # deeper than jiter reads: the standard decoder reads it
        "[" * 100_000 + "]" * 100_000,  # deeper than either: refused, never a RecursionError
        '{"\\u0061": 1, "a": 2}',  # the same key, escaped once
        '{"x": {"b": 1, "b": 1}}',
        '["\\ud83d\\ude00"]',
        '["\\ud800"]',
        "1" * 5000,
        "[1e400, -1e400]",
        '{"a": 1} {"b": 2}',
    ],
)
def test_hostile_texts_get_the_standard_verdict(text):
    assert ours(text) == reference(text)


def test_a_refusal_is_worded_by_the_standard_decoder():
    with pytest.raises(StrictJSONError, match=r"^\$: duplicate object key 'a'$"):
        parse_strict_json('{"\\u0061": 1, "a": 2}')
    with pytest.raises(StrictJSONError, match=r"^\$: text after the JSON at line 1 column 10$"):
        parse_strict_json('{"a": 1} {"b": 2}')
    with pytest.raises(StrictJSONError, match="nested too deeply"):
        parse_strict_json("[" * 100_000 + "]" * 100_000)
    assert parse_strict_json("[" * 250 + "]" * 250) == json.loads("[" * 250 + "]" * 250)
