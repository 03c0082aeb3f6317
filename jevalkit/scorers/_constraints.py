"""The ``constraints`` scorer: instruction following checked deterministically.

Each constraint is one check; the value is the share of checks that hold and ``passed`` means
all of them hold. Words are maximal runs of letters, digits, apostrophes and hyphens (Unicode
aware, ``\\w`` based); word constraints compare case-insensitively and whole words only, so
"cat" is not found in "category". Text is stripped of surrounding whitespace first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ._score import Check, Score

NAME = "constraints"
_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _phrase_in(text: str, phrase: str) -> bool:
    pattern = r"(?<![\w])" + re.escape(phrase.lower()) + r"(?![\w])"
    return re.search(pattern, text.lower()) is not None


def _checks(text: str) -> dict[str, Callable[[Any], tuple[str, bool]]]:
    words = _words(text)
    lines = [line for line in text.splitlines() if line.strip()]
    return {
        "max_words": lambda n: (f"At most {n} words (has {len(words)})", len(words) <= n),
        "min_words": lambda n: (f"At least {n} words (has {len(words)})", len(words) >= n),
        "max_chars": lambda n: (f"At most {n} characters (has {len(text)})", len(text) <= n),
        "max_lines": lambda n: (f"At most {n} non-empty lines (has {len(lines)})", len(lines) <= n),
        "forbidden_words": lambda ws: (
            "Never uses: " + ", ".join(ws),
            not any(_phrase_in(text, w) for w in ws),
        ),
        "required_words": lambda ws: (
            "Uses every one of: " + ", ".join(ws),
            all(_phrase_in(text, w) for w in ws),
        ),
        "starts_with": lambda s: (f"Starts with {s!r}", text.startswith(s)),
        "ends_with": lambda s: (f"Ends with {s!r}", text.endswith(s)),
        "lowercase": lambda _: ("No capital letters", text == text.lower()),
        "uppercase": lambda _: ("No lowercase letters", text == text.upper()),
        "no_digits": lambda _: ("No digits", not any(ch.isdigit() for ch in text)),
        "bullet_lines": lambda n: (
            f"Exactly {n} bullet lines and nothing else (has {len(lines)} lines)",
            len(lines) == n and all(_BULLET.match(line) for line in lines),
        ),
    }


CONSTRAINTS = tuple(_checks(""))


def constraints(output: str, spec: Mapping[str, Any]) -> Score:
    """Score ``output`` against instruction-following constraints (see :data:`CONSTRAINTS`):
    ``max_words``, ``min_words``, ``max_chars``, ``max_lines``, ``forbidden_words``,
    ``required_words``, ``starts_with``, ``ends_with``, ``lowercase``, ``uppercase``,
    ``no_digits``, ``bullet_lines``.

    Example:
        >>> s = constraints("A short answer, no jargon.", {"max_words": 5, "forbidden_words": ["synergy"]})
        >>> s.value, s.passed, [c.passed for c in s.checks]
        (1.0, True, [True, True])
        >>> s = constraints("Synergy rules", {"max_words": 1, "forbidden_words": ["synergy"]})
        >>> s.value, s.errors[0]
        (0.0, '$: At most 1 words (has 2)')
    """
    if not spec:
        raise ValueError("constraints: give at least one constraint")
    text = output.strip()
    table = _checks(text)
    unknown = sorted(set(spec) - set(table))
    if unknown:
        raise ValueError(f"constraints: unknown constraint(s) {unknown}; known: {', '.join(table)}")
    checks = []
    for name, value in spec.items():
        label, ok = table[name](value)
        checks.append(Check(id=name, text=label, passed=ok))
    held = sum(bool(c.passed) for c in checks)
    return Score(
        name=NAME,
        value=held / len(checks),
        passed=held == len(checks),
        checks=tuple(checks),
        errors=tuple(f"$: {c.text}" for c in checks if not c.passed),
    )
