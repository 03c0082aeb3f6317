"""Strict RFC 8259 JSON parsing: what Python's ``json`` module lets through, refused.

``json.loads`` accepts ``NaN``, ``Infinity`` and duplicate object keys, and crashes with
``RecursionError`` on deep nesting. :func:`parse_strict_json` refuses all of these with a
:class:`StrictJSONError` whose ``reason`` is a one-line explanation.

Two decoders, one definition. The standard library's, with a Python hook on every object that
refuses a repeated key, defines what is accepted and words every refusal; jiter (pydantic's
Rust parser, the one the OpenAI SDK reads with) refuses NaN, Infinity and repeated keys itself,
and reads an output in less than half the time (3.1 against 6.7 microseconds for the seeds'
probe's outputs: the hook cost more than the parse). Every text goes to jiter first and only
what it refuses to the standard library's decoder, which then says why, or reads it after all
(jiter stops at 200 levels of nesting, the standard library goes deeper): a text is accepted,
and read as the same value, exactly when the standard library's strict decoder accepts it
(``tests/scorers/test_strict_json.py`` checks this on generated and hostile texts).
"""

from __future__ import annotations

import json
import re
from typing import Any

import jiter

from ..errors import StrictJSONError

_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_JSON_START = frozenset('[{"-0123456789tfn')


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(f"$: {name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"$: duplicate object key {key!r}")
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)


def _as_text(output: str | bytes) -> str:
    if isinstance(output, bytes | bytearray):
        try:
            return bytes(output).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"$: not valid UTF-8 (byte {exc.start})") from None
    if not isinstance(output, str):
        raise StrictJSONError(f"$: expected text, got {type(output).__name__}")
    return output


def _utf8(text: str, value: Any | None = None) -> bytes:
    """``text`` (or ``value`` as JSON) as UTF-8; a lone surrogate, which has none, refused."""
    try:
        return (text if value is None else json.dumps(value, ensure_ascii=False)).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StrictJSONError(
            f"$: contains a lone surrogate (U+{ord(exc.object[exc.start]):04X}), not valid Unicode"
        ) from None


def parse_strict_json(output: str | bytes, *, bare: bool = True) -> Any:
    """Parse ``output`` as strict JSON.

    Args:
        output: the model's text (bytes are decoded as strict UTF-8).
        bare: when true the text must be JSON and nothing else (surrounding whitespace is fine);
            when false a single code fence or prose around one JSON value is tolerated.

    Raises:
        StrictJSONError: with a one-line ``reason``.

    Example:
        >>> parse_strict_json(' [1, 2] ')
        [1, 2]
        >>> parse_strict_json('{"a": 1, "a": 2}')
        Traceback (most recent call last):
        ...
        jevalkit.errors.StrictJSONError: $: duplicate object key 'a'
        >>> parse_strict_json('```json\\n[1]\\n```', bare=False)
        [1]
    """
    text = _as_text(output)
    data = _utf8(text)
    if not bare:
        text = _extract_json(text)
        data = text.encode("utf-8")
    stripped = text.lstrip(" \t\n\r")
    if not stripped:
        raise StrictJSONError("$: empty output, expected JSON")
    if stripped[0] not in _JSON_START:
        if stripped.startswith("```"):
            raise StrictJSONError("$: JSON is wrapped in a code fence; bare JSON was required")
        raise StrictJSONError(f"$: prose before the JSON (starts with {stripped[:20]!r})")
    try:
        value = jiter.from_json(
            data, allow_inf_nan=False, catch_duplicate_keys=True, cache_mode="keys"
        )
    except ValueError:  # refused, or nested past jiter's limit: the strict decoder decides
        value = _strict_decode(text)
    if _ESCAPED_SURROGATE.search(text):
        _utf8(text, value)
    return value


def _strict_decode(text: str) -> Any:
    """The standard library's strict decoding of ``text``: its value, or the reason it is not
    strict JSON."""
    try:
        return _DECODER.decode(text)
    except StrictJSONError:
        raise
    except RecursionError:
        raise StrictJSONError("$: JSON nested too deeply to parse") from None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise StrictJSONError(
                f"$: text after the JSON at line {exc.lineno} column {exc.colno}"
            ) from None
        raise StrictJSONError(
            f"$: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:  # e.g. an integer longer than Python converts (4,300 digits)
        raise StrictJSONError(f"$: a value cannot be read: {str(exc).splitlines()[0]}") from None


def _extract_json(text: str) -> str:
    """Return the JSON value inside a code fence or surrounded by prose (lenient mode)."""
    fenced = re.search(r"```[a-zA-Z0-9_-]*\s*\n(.*?)```", text, re.DOTALL)
    if fenced:
        return fenced.group(1)
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        return text
    start = min(starts)
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer too long to convert
        return text[start:]
    return text[start:end]
