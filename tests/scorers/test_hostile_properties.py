"""Property tests: the probe's scorer never raises and always returns a value in [0, 1]."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import jevalkit

PROBE = jevalkit.load_probe("schema-ten-records@2")

json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=12)
        | st.dictionaries(st.sampled_from(["id", "name", "active", "x"]) | st.text(), children)
    ),
    max_leaves=40,
)


def valid(score: jevalkit.Score) -> bool:
    return 0.0 <= score.value <= 1.0 and score.passed == (score.value == 1.0)


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_any_text(text):
    assert valid(PROBE.score(text))


@settings(max_examples=400, deadline=None)
@given(st.binary())
def test_any_bytes(data):
    assert valid(PROBE.score(data))


@settings(max_examples=400, deadline=None)
@given(json_like)
def test_any_json_value(value):
    assert valid(PROBE.score(json.dumps(value)))
