"""What one request to an OpenAI-compatible endpoint came back with, success or failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXCERPT_CHARS = 200


@dataclass
class Completion:
    """One response (or the error that took its place).

    ``error`` is None on success, else ``{"type", "message", "status"}`` where ``type`` is one of
    ``http_status``, ``timeout``, ``connection``, ``invalid_response``, ``api_error``.

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
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def parse_response(payload: Any, status: int, *, chat: bool) -> Completion:
    """Turn a decoded JSON body into a :class:`Completion`, or an ``invalid_response`` /
    ``api_error`` one when it lacks ``choices`` or carries an error object.

    Example:
        >>> body = {"model": "m", "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
        >>> parse_response(body, 200, chat=True).text
        'hi'
        >>> parse_response({"error": {"message": "quota"}}, 200, chat=True).error["type"]
        'api_error'
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
        message = choice.get("message") or {}
        text = message.get("content") if isinstance(message, dict) else None
    else:
        text = choice.get("text")
    usage = payload.get("usage") or {}
    return Completion(
        text=text if isinstance(text, str) else "",
        finish_reason=choice.get("finish_reason"),
        model_resolved=payload.get("model"),
        system_fingerprint=payload.get("system_fingerprint"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        logprobs=choice.get("logprobs"),
        raw=payload,
        status=status,
    )
