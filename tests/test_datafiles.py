"""json_line, the one line reader of cases, results, labels and imported files, reads a strict
line with jiter first and leaves to the standard library's strict decoder whatever jiter refuses
or may read otherwise: it must accept exactly the lines that decoder accepts, read them as the same
values, and word every refusal as that decoder's path does."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_texts import texts

from jevalkit.datafiles import json_line


class Refused(Exception):
    pass


def _pairs(pairs):
    if len({k for k, _ in pairs}) != len(pairs):
        raise Refused("a name given twice")
    return dict(pairs)


def _constant(name):
    raise Refused(name)


def _float(text):
    value = float(text)
    if math.isinf(value):
        raise Refused(text)
    return value


REFERENCE = json.JSONDecoder(parse_constant=_constant, parse_float=_float, object_pairs_hook=_pairs)


def reference(line: bytes) -> str | None:
    try:
        return json.dumps(REFERENCE.decode(line.decode("utf-8")))
    except (Refused, RecursionError, ValueError):
        return None


def ours(line: bytes) -> str | None:
    try:
        return json.dumps(json_line(line, "f.jsonl:1", ValueError))
    except ValueError:
        return None


@settings(max_examples=1500, deadline=None)
@given(texts())
def test_reads_exactly_what_the_strict_standard_decoder_reads(text):
    line = text.encode("utf-8", "surrogatepass")  # a lone surrogate: bytes that are not UTF-8
    assert ours(line) == reference(line)


@settings(max_examples=300, deadline=None)
@given(st.binary())
def test_on_any_bytes_too(line):
    assert ours(line) == reference(line)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"a": 1, "\\u0061": 2}', "not JSON (the name 'a' is given twice in one object)"),
        (b'{"x": NaN}', "not JSON (NaN is not valid JSON)"),
        (b'{"x": 1e400}', "not JSON (1e400 is too large for a number)"),
        (b"[" + b"1" * 310 + b".5]", "not JSON (" + "1" * 40 + " is too large for a number)"),
        (b'{"x": 1', "not JSON (Expecting ',' delimiter)"),
        (b'"\xff"', "not UTF-8 text (byte 1)"),
    ],
)
def test_a_refusal_is_worded_by_the_strict_decoders_path(line, reason):
    with pytest.raises(ValueError) as caught:
        json_line(line, "f.jsonl:1", ValueError)
    assert str(caught.value) == f"f.jsonl:1: {reason}"


def test_deeper_than_jiter_reads_is_read_all_the_same():
    line = b"[" * 250 + b"]" * 250
    assert json_line(line, "f.jsonl:1", ValueError) == json.loads(line)
