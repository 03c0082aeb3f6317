"""When to retry a request and how long to wait: exponential backoff with full jitter, honouring
``Retry-After``."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

from ..errors import UsageError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Retry 429, 5xx, timeouts and connection errors up to ``max_retries`` times.

    The n-th retry waits a uniformly random time in ``[0, min(cap, base * 2**n)]`` (full jitter),
    or what the server asked for in ``Retry-After`` when it said (capped at ``max_retry_after``).

    Example:
        >>> policy = RetryPolicy(max_retries=3, base=0.5, cap=4.0)
        >>> policy.should_retry(429, attempt=0), policy.should_retry(400, attempt=0)
        (True, False)
        >>> policy.delay(attempt=1, retry_after="2")
        2.0
        >>> 0.0 <= policy.delay(attempt=10) <= 4.0
        True
    """

    max_retries: int = 5
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise UsageError(f"max_retries must be a whole number, got {self.max_retries!r}")
        if self.max_retries < 0:
            raise UsageError(f"max_retries must be 0 or more, got {self.max_retries}")

    def should_retry(self, status: int | None, *, attempt: int) -> bool:
        """``status`` None means a timeout or connection error."""
        if attempt >= self.max_retries:
            return False
        return status is None or status in RETRYABLE_STATUS

    def delay(self, *, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return min(asked, self.max_retry_after)
        return random.uniform(0.0, min(self.cap, self.base * 2**attempt))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent/bad.

    Example:
        >>> parse_retry_after("3"), parse_retry_after(None), parse_retry_after("soon")
        (3.0, None, None)
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
