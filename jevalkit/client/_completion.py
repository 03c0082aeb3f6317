"""What one request to an OpenAI-compatible endpoint came back with, success or failure.

Whatever an endpoint sends becomes a :class:`Completion`: fields of the wrong type or with
invalid numbers (``usage`` as a list, ``prompt_tokens`` of ``"lots"``, NaN or Infinity, ``model``
as an object) are stored as null, never passed on to break a writer or a metric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

EXCERPT_CHARS = 200
ERROR_TYPES = ("http_status", "timeout", "connection", "invalid_response", "api_error", "too_large")


@dataclass
class Completion:
    """One response (or the error that took its place).

    ``error`` is None on success, else ``{"type", "message", "status"}`` where ``type`` is one of
    ``http_status``, ``timeout``, ``connection``, ``invalid_response``, ``api_error``,
    ``too_large`` (the body exceeded the client's size limit).

    Example:
        >>> Completion(text="hi").ok
        True
    """

    text: str | None = None
    finish_reason: str | None = None
    model_resolved: str | None = None
    system_fingerprint: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    logprobs: Any = None
    raw: dict[str, Any] | None = field(default=None, repr=False)
    status: int | None = None
    latency_s: float | None = None
    attempts: int = 0
    cached: bool = False
    error: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True when a usable response came back."""
        return self.error is None


def error_completion(kind: str, message: str, status: int | None = None) -> Completion:
    """A failed :class:`Completion` carrying a typed error.

    Example:
        >>> error_completion("timeout", "no answer within 5 s").error["type"]
        'timeout'
    """
    return Completion(status=status, error={"type": kind, "message": message, "status": status})


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """A short single-line excerpt of a response body.

    Example:
        >>> excerpt("line one\\nline two " * 50, limit=20)
        'line one line two li…'
    """
    flat = " ".join(text[: limit * 4].split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def token_count(value: Any) -> int | None:
    """A usage count as an int, or None when it is not a finite, non-negative whole number.

    Example:
        >>> token_count(42), token_count(42.0), token_count("lots"), token_count(float("nan")), token_count(True)
        (42, 42, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2**53 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 0:
        return int(value)
    return None


def _text_or_none(value: Any, limit: int = 1000) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _content(value: Any) -> str:
    """Message content as text: a string, or the text parts of a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") for p in value if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def parse_response(payload: Any, status: int, *, chat: bool) -> Completion:
    """Turn a decoded JSON body into a :class:`Completion`, or an ``invalid_response`` /
    ``api_error`` one when it lacks ``choices`` or carries an error object.

    Example:
        >>> body = {"model": "m", "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
        >>> parse_response(body, 200, chat=True).text
        'hi'
        >>> parse_response({"error": {"message": "quota"}}, 200, chat=True).error["type"]
        'api_error'
        >>> parse_response({**body, "usage": [1], "model": {"x": 1}}, 200, chat=True).model_resolved is None
        True
    """
    if not isinstance(payload, dict):
        return error_completion("invalid_response", "body is JSON but not an object", status)
    if payload.get("error"):
        err = payload["error"]
        message = err.get("message", str(err)) if isinstance(err, dict) else str(err)
        return error_completion("api_error", excerpt(str(message)), status)
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return error_completion("invalid_response", "response has no choices", status)
    choice = choices[0]
    if chat:
        message = choice.get("message")
        text = _content(message.get("content")) if isinstance(message, dict) else ""
    else:
        raw_text = choice.get("text")
        text = raw_text if isinstance(raw_text, str) else ""
    usage = payload.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return Completion(
        text=text,
        finish_reason=_text_or_none(choice.get("finish_reason"), 100),
        model_resolved=_text_or_none(payload.get("model")),
        system_fingerprint=_text_or_none(payload.get("system_fingerprint")),
        prompt_tokens=token_count(usage.get("prompt_tokens")),
        completion_tokens=token_count(usage.get("completion_tokens")),
        logprobs=choice.get("logprobs"),
        raw=payload,
        status=status,
    )


def combine(completions: list[Completion]) -> Completion:
    """One provenance record for a job that sent several requests (a sampled judgment, a
    judgment plus its explanation): text and identity of the first, usage, latency and attempts
    summed, cached only when every part was.

    Example:
        >>> c = combine([Completion(text="a", prompt_tokens=3, attempts=1, latency_s=0.5),
        ...              Completion(text="b", prompt_tokens=4, attempts=2, latency_s=0.25)])
        >>> c.text, c.prompt_tokens, c.attempts, c.latency_s
        ('a', 7, 3, 0.75)
    """
    if len(completions) == 1:
        return completions[0]
    first = completions[0]

    def total(name: str) -> Any:
        values = [getattr(c, name) for c in completions]
        return None if any(v is None for v in values) else sum(values)

    return Completion(
        text=first.text,
        finish_reason=first.finish_reason,
        model_resolved=first.model_resolved,
        system_fingerprint=first.system_fingerprint,
        prompt_tokens=total("prompt_tokens"),
        completion_tokens=total("completion_tokens"),
        logprobs=first.logprobs,
        raw=first.raw,
        status=first.status,
        latency_s=total("latency_s"),
        attempts=sum(c.attempts for c in completions),
        cached=all(c.cached for c in completions),
        error=next((c.error for c in completions if c.error is not None), None),
    )
