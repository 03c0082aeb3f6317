"""docs/check_build.py's rules, without a build (review-c): pandas' `.plot.bar(...)` and
`.hist(...)` draw (the check missed them, so a page of such figures shown as none passed), and
a tag loading from the network with single quotes is caught as one with double quotes is."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
sys.path.insert(0, str(DOCS))

import check_build  # noqa: E402  (docs/check_build.py)


def draws(code: str) -> tuple[bool, bool]:
    return check_build._draws(ast.parse(code), top=True)


def test_pandas_drawing_calls_are_draws():
    for code in ("df.plot.bar(x='a')", "df['score'].hist(bins=10)", "df.plot(kind='bar')"):
        assert draws(code) == (True, True), code
    assert draws("if show:\n    df.plot.hist()") == (False, True)
    assert draws("df.groupby('a').mean()\nprint(plan)") == (False, False)


def test_a_remote_load_is_caught_however_it_is_quoted():
    for tag in (
        '<script src="https://cdn.example/x.js">',
        "<script src='https://cdn.example/x.js'>",
        "<img src=//cdn.example/a.png>",
        '<source src="https://cdn.example/v.mp4">',
    ):
        assert check_build.REMOTE.search(tag), tag
    assert not check_build.REMOTE.search('<img src="_images/a.png">')
    assert not check_build.REMOTE.search('<a href="https://example.org">a link</a>')
