"""JSON text as jevalkit reads and hashes it: the one strict line reader of every JSONL file
(cases, results, labels, imported logs), the canonical text every content hash is taken over,
and a depth check that needs no recursion. Standard library only, so the lowest layers (the
results layer, the client) can use it.

Example:
    >>> json_line('{"b": 1, "a": 2}', "x.jsonl:1", ValueError) == {"a": 2, "b": 1}
    True
    >>> canonical_json({"b": 1, "a": 2})
    '{"a":2,"b":1}'
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "canonical_json",
    "content_hash",
    "json_line",
    "jsonl_lines",
    "nested_deeper_than",
    "not_json_lines",
]


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether a parsed JSON / YAML value nests lists and mappings more than ``limit`` deep
    (checked without recursion, so any depth is safe to ask about).

    Example:
        >>> nested_deeper_than({"a": [[1]]}, 3), nested_deeper_than({"a": [[1]]}, 2)
        (False, True)
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):  # 1e400: valid JSON syntax, no number a float can hold
        raise ValueError(f"{text[:40]} is too large for a number")
    return value


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL text: split on ``\\n`` only (a ``\\r`` before it dropped), never on
    the other characters :meth:`str.splitlines` treats as breaks (U+2028, U+0085, ...), which
    JSON allows unescaped inside a string.

    Example:
        >>> jsonl_lines('{"q": "a\\u2028b"}\\r\\n{"q": 2}\\n')
        ['{"q": "a\\u2028b"}', '{"q": 2}']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _unique_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # readers disagree on which value counts: refuse, do not pick
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise ValueError(f"the name {name[:40]!r} is given twice in one object")
            seen.add(name)
    return obj


_STRICT = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_names
)
_LENIENT = json.JSONDecoder()


def json_line(
    line: str | bytes,
    where: str,
    error: Callable[[str], Exception],
    *,
    what: str = "JSON",
    fix: str = "",
    nested: str = "nested too deeply",
    not_utf8: str = "not UTF-8 text",
    strict: bool = True,
) -> Any:
    """Parse one line of a JSONL file (the one line reader of cases, results, labels and imported
    files): strict JSON (no NaN or Infinity) unless ``strict=False``; any problem raises
    ``error`` with one line naming ``where`` (file and line): ``{not_utf8} (byte N)`` for bytes
    that are not UTF-8, ``{nested}``, or ``not {what} (reason){fix}``.

    Example:
        >>> json_line('{"id": 1}', "cases.jsonl:1", ValueError)
        {'id': 1}
        >>> json_line('{"x": NaN}', "cases.jsonl:2", ValueError)
        Traceback (most recent call last):
        ...
        ValueError: cases.jsonl:2: not JSON (NaN is not valid JSON)
        >>> json_line(b'{"x": 1', "r.jsonl:3", ValueError, what="a row", fix="; remove it")
        Traceback (most recent call last):
        ...
        ValueError: r.jsonl:3: not a row (Expecting ',' delimiter); remove it
    """
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"{where}: {not_utf8} (byte {exc.start})") from None
    try:
        return (_STRICT if strict else _LENIENT).decode(line)
    except RecursionError:
        raise error(f"{where}: {nested}") from None
    except ValueError as exc:  # JSONDecodeError, a refused constant, an oversized integer
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).split(":")[0]
        raise error(f"{where}: not {what} ({reason}){fix}") from None


def canonical_json(value: Any, *, ensure_ascii: bool = False) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces (what every content hash in
    jevalkit is taken over).

    Example:
        >>> print(canonical_json({"b": 1, "a": "é"}), len(canonical_json({"a": "é"}, ensure_ascii=True)))
        {"a":"é","b":1} 14
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ensure_ascii)


def content_hash(raw: Any) -> str:
    """sha256 of the canonical JSON form (sorted keys, no spaces, UTF-8) of a file's content.

    Formatting, comments and key order in the YAML file do not change it; any change of content does.

    Example:
        >>> content_hash({"b": 1, "a": [1, 2]}) == content_hash({"a": [1, 2], "b": 1})
        True
        >>> content_hash({"a": 1})[:12]
        '015abd7f5cc5'
    """
    return hashlib.sha256(canonical_json(raw).encode("utf-8")).hexdigest()


def not_json_lines(first_line: str | bytes) -> str | None:
    """Why a file whose first non-empty line is ``first_line`` is not JSON lines at all (a
    table, a report: not a row a crash broke), with the reader of tables; None when the line
    starts like JSON.

    Example:
        >>> not_json_lines('{"a": 1') is None
        True
        >>> print(not_json_lines(b"model,item,grade"))
        its first line is 'model,item,grade'; read a table (CSV) with jevalkit.io.from_table(path, case=..., system=..., score=...)
    """
    text = (
        first_line.decode("utf-8", "replace") if isinstance(first_line, bytes) else first_line
    ).strip()
    if text[:1] in ("{", "["):
        return None
    text = text if len(text) <= 60 else text[:57] + "..."
    return (
        f"its first line is {text!r}; read a table (CSV) with "
        "jevalkit.io.from_table(path, case=..., system=..., score=...)"
    )
