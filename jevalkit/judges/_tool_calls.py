"""tool_call_accuracy: do the agent's tool calls match the expected ones, allowing equivalent values?

Deterministic: calls are compared in order by name and arguments. Arguments given as JSON strings
are parsed; key order is ignored; numbers are equal after parsing (``"3"`` == ``3``, ``3.0`` == ``3``);
strings are equal after trimming, collapsing whitespace and ignoring case (enumerated values such as
``"Celsius"`` / ``"celsius"``). Free-text arguments named in ``free_text`` are judged instead: by
``same_meaning(expected, got) -> p(same)`` when given (``judge()`` passes a model judge,
``argument_equivalence``), else by Levenshtein similarity; either must reach
``free_text_threshold``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..scorers import Score, levenshtein_similarity

TOOL_CALL_EVALUATOR = "tool_call_accuracy"
TOOL_CALL_LEVELS = ("mismatch", "match")


def _calls(value: Any) -> list[dict[str, Any]]:
    """A list of tool calls; anything that is not a call object becomes a call with no name."""
    if not isinstance(value, list | tuple):
        return []
    return [c if isinstance(c, dict) else {"name": None, "arguments": c} for c in value]


def free_text_pairs(
    tool_calls: Any, expected_tool_calls: Any, free_text: Sequence[str]
) -> list[tuple[str, str]]:
    """The (expected, got) string pairs of free-text arguments that a model should judge.

    Example:
        >>> free_text_pairs([{"name": "f", "arguments": {"q": "cheap flights"}}],
        ...                 [{"name": "f", "arguments": {"q": "low-cost flights"}}], ["q"])
        [('low-cost flights', 'cheap flights')]
    """
    pairs = []
    for got, want in zip(_calls(tool_calls), _calls(expected_tool_calls), strict=False):
        g, w = _arguments(got), _arguments(want)
        for key in free_text:
            if isinstance(g.get(key), str) and isinstance(w.get(key), str):
                pairs.append((w[key], g[key]))
    return list(dict.fromkeys(pairs))


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return {"<unparsable arguments>": args}
    return args if isinstance(args, dict) else {"<arguments>": args}


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            return None
    return None


def _norm_text(x: str) -> str:
    return re.sub(r"\s+", " ", x.strip()).casefold()


def equivalent(a: Any, b: Any) -> bool:
    """Whether two argument values are semantically equal under the rules above.

    Example:
        >>> equivalent("3", 3), equivalent(" Celsius", "celsius"), equivalent(True, 1), equivalent({"a": [1]}, {"a": ["1"]})
        (True, True, False, True)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        return na == nb
    if isinstance(a, str) and isinstance(b, str):
        return _norm_text(a) == _norm_text(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equivalent(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equivalent(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def tool_call_accuracy(
    tool_calls: Sequence[dict[str, Any]],
    expected_tool_calls: Sequence[dict[str, Any]],
    *,
    free_text: Sequence[str] = (),
    free_text_threshold: float = 0.8,
    same_meaning: Callable[[str, str], float] | None = None,
) -> Score:
    """Score = matching calls / max(number made, number expected); ``metadata["mismatches"]``
    says which call and which argument differed, and why.

    Example:
        >>> s = tool_call_accuracy([{"name": "get_weather", "arguments": '{"city": "Paris", "days": "3"}'}],
        ...                        [{"name": "get_weather", "arguments": {"days": 3, "city": "paris"}}])
        >>> s.value, s.passed
        (1.0, True)
        >>> tool_call_accuracy([{"name": "f", "arguments": {"x": 1}}], [{"name": "f", "arguments": {"x": 2}}]).errors
        ('call 0 (f): argument x: expected 2, got 1',)
        >>> tool_call_accuracy(["not a call"], [{"name": "f"}]).errors
        ('call 0: called None, expected f',)
    """
    tool_calls, expected_tool_calls = _calls(tool_calls), _calls(expected_tool_calls)
    mismatches: list[dict[str, Any]] = []
    matched = 0
    for i in range(max(len(tool_calls), len(expected_tool_calls))):
        if i >= len(tool_calls):
            mismatches.append(
                {
                    "call": i,
                    "argument": None,
                    "reason": f"missing call to {expected_tool_calls[i].get('name')}",
                }
            )
            continue
        if i >= len(expected_tool_calls):
            mismatches.append(
                {
                    "call": i,
                    "argument": None,
                    "reason": f"unexpected call to {tool_calls[i].get('name')}",
                }
            )
            continue
        got, want = tool_calls[i], expected_tool_calls[i]
        if got.get("name") != want.get("name"):
            mismatches.append(
                {
                    "call": i,
                    "argument": None,
                    "reason": f"called {got.get('name')}, expected {want.get('name')}",
                }
            )
            continue
        g, w = _arguments(got), _arguments(want)
        before = len(mismatches)
        for key in sorted(g.keys() | w.keys()):
            reason: str | None
            if key not in g:
                reason = "missing"
            elif key not in w:
                reason = "not expected"
            elif key in free_text and isinstance(g[key], str) and isinstance(w[key], str):
                if same_meaning is not None:
                    sim, how = same_meaning(w[key], g[key]), "judged p(same meaning)"
                else:
                    sim, how = (
                        levenshtein_similarity(_norm_text(g[key]), _norm_text(w[key])),
                        "free text similarity",
                    )
                reason = None if sim >= free_text_threshold else f"{how} {sim:.2f}"
            else:
                reason = (
                    None
                    if equivalent(g[key], w[key])
                    else f"expected {json.dumps(w[key])}, got {json.dumps(g[key])}"
                )
            if reason:
                mismatches.append(
                    {"call": i, "name": got.get("name"), "argument": key, "reason": reason}
                )
        matched += len(mismatches) == before
    total = max(len(tool_calls), len(expected_tool_calls))
    value = matched / total if total else 1.0
    errors = tuple(
        f"call {m['call']}"
        + (f" ({m['name']}): argument {m['argument']}: " if m.get("argument") else ": ")
        + m["reason"]
        for m in mismatches
    )
    return Score(
        name="tool_call_accuracy",
        value=value,
        passed=not mismatches,
        errors=errors,
        metadata={"mismatches": mismatches},
    )
