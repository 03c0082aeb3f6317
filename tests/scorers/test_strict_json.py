"""parse_strict_json reads with jiter first and falls back to the standard library's strict
decoder: it must accept exactly the texts the standard library's strict decoding accepts, and
read them as the same values (the reference below is that decoding, written out here)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


keys = st.sampled_from(["a", "b", "id", "\\u0061", "\\ud800", "é"]) | st.text(max_size=4)
scalars = st.sampled_from(
    ["0", "-0", "-0.0", "1e400", "1E-400", "2.5e-324", "9007199254740993", "1.", "01", ".5", "-",
     "true", "false", "null", "NaN", "Infinity", "-Infinity", '"\\ud83d\\ude00"', '"\\udc00"',
     '"\\t"', '"\x01"', '"\u2028"', "1" * 30]
) | st.integers().map(str) | st.floats(allow_nan=False).map(json.dumps) | st.text().map(json.dumps)  # fmt: skip
space = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\x0c", "\xa0"])


@st.composite
def texts(draw, depth=0):
    """JSON-like text: objects whose keys repeat, the constants JSON lacks, odd numbers and
    escapes, whitespace JSON does and does not allow."""
    kind = draw(st.sampled_from(["scalar", "array", "object"] if depth < 4 else ["scalar"]))
    if kind == "scalar":
        body = draw(scalars)
    elif kind == "array":
        items = draw(st.lists(texts(depth + 1), max_size=4))
        body = "[" + draw(space) + ",".join(items) + "]"
    else:
        pairs = draw(st.lists(st.tuples(keys, texts(depth + 1)), max_size=4))
        body = "{" + ",".join(f'"{k}"{draw(space)}:{v}' for k, v in pairs) + "}"
    return draw(space) + body + draw(space)


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
