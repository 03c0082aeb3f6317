"""JSON-like texts for property tests of the strict JSON readers (scorers' and datafiles'):
objects whose keys repeat (one of them escaped), the constants JSON lacks, numbers no float holds,
odd numbers and escapes, lone surrogates, whitespace JSON does and does not allow."""

from __future__ import annotations

import json

from hypothesis import strategies as st

keys = st.sampled_from(["a", "b", "id", "\\u0061", "\\ud800", "é"]) | st.text(max_size=4)
scalars = st.sampled_from(
    ["0", "-0", "-0.0", "1e400", "1E-400", "2.5e-324", "9007199254740993", "1.", "01", ".5", "-",
     "true", "false", "null", "NaN", "Infinity", "-Infinity", '"\\ud83d\\ude00"', '"\\udc00"',
     '"\\t"', '"\x01"', '"\u2028"', "1" * 30, "1e309", "1" * 310 + ".5"]
) | st.integers().map(str) | st.floats(allow_nan=False).map(json.dumps) | st.text().map(json.dumps)  # fmt: skip
space = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\x0c", "\xa0"])


@st.composite
def texts(draw, depth=0):
    """A JSON-like text (see the module docstring)."""
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
