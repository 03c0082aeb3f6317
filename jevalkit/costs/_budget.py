"""Budgets: stop a run cleanly before it spends more than it was given.

A budget counts what *this invocation* sends (re-running resumes with a fresh budget): requests
that reach the endpoint (cache hits are free) and their cost in US dollars. Before a request is
sent, its largest possible cost is reserved (every byte of the prompt a token, plus
``max_tokens``); when it comes back the reservation is replaced by what it cost. A request that
might not fit waits for the ones in flight; when nothing is in flight and it still does not fit,
the budget is reached: no further request starts, rows already written are kept, and the run
says why it stopped. So the budget is never exceeded.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field

from ..errors import BudgetReached, UsageError

TOKENS_PER_MESSAGE = 8  # chat-template tokens around each message, counted generously


def prompt_token_bound(body: dict) -> int:
    """An upper bound on a request's prompt tokens: one per UTF-8 byte of its text, plus the
    chat template's tokens around each message (a token is never shorter than a byte).

    Example:
        >>> prompt_token_bound({"messages": [{"role": "user", "content": "héllo"}]})
        22
    """
    text = body.get("prompt")
    messages = body.get("messages") or []
    size = len(str(text).encode()) if text is not None else 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else message
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        size += len(content.encode()) + TOKENS_PER_MESSAGE
    return size + TOKENS_PER_MESSAGE


@dataclass
class Budget:
    """At most ``usd`` dollars and ``requests`` requests sent by one invocation.

    Example:
        >>> b = Budget(requests=2)
        >>> b.describe()
        'budget: 2 requests'
        >>> Budget(usd=-1)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: --budget-usd must be a number of dollars of 0 or more, got -1
    """

    usd: float | None = None
    requests: int | None = None
    spent_usd: float = 0.0
    sent: int = 0
    reached: str | None = None
    _held_usd: float = 0.0
    _held_requests: int = 0
    _condition: asyncio.Condition | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        u = self.usd
        if u is not None and (
            isinstance(u, bool) or not isinstance(u, int | float) or not math.isfinite(u) or u < 0
        ):
            raise UsageError(f"--budget-usd must be a number of dollars of 0 or more, got {u!r}")
        r = self.requests
        if r is not None and (isinstance(r, bool) or not isinstance(r, int) or r < 0):
            raise UsageError(f"--budget-requests must be a whole number of 0 or more, got {r!r}")

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return self.usd is not None or self.requests is not None

    def describe(self) -> str:
        """The limits, as a phrase."""
        parts = []
        if self.usd is not None:
            parts.append(f"${self.usd:g}")
        if self.requests is not None:
            parts.append(f"{self.requests} requests")
        return "budget: " + (" and ".join(parts) if parts else "none")

    def _fits(self, usd: float) -> bool:
        if self.requests is not None and self.sent + self._held_requests + 1 > self.requests:
            return False
        return self.usd is None or self.spent_usd + self._held_usd + usd <= self.usd + 1e-12

    async def reserve(self, usd: float) -> None:
        """Hold room for one request costing at most ``usd``; wait for requests in flight when
        it does not fit yet. Raises :class:`BudgetReached` when it never can."""
        if self._condition is None:
            self._condition = asyncio.Condition()
        async with self._condition:
            while True:
                if self.reached is not None:
                    raise BudgetReached(self.reached)
                if self._fits(usd):
                    self._held_usd += usd
                    self._held_requests += 1
                    return
                if self._held_requests == 0:
                    spent = f"{self.sent} requests sent" + (
                        f", ${self.spent_usd:.4f} spent" if self.usd is not None else ""
                    )
                    self.reached = (
                        f"stopped at the {self.describe()} ({spent}); rows so far are kept; "
                        "re-run to resume"
                    )
                    raise BudgetReached(self.reached)
                await self._condition.wait()

    async def settle(self, held_usd: float, spent_usd: float, *, sent: bool) -> None:
        """Replace a reservation with what the request cost (``sent`` False: a cache hit)."""
        assert self._condition is not None
        async with self._condition:
            self._held_usd -= held_usd
            self._held_requests -= 1
            if sent:
                self.sent += 1
                self.spent_usd += spent_usd if math.isfinite(spent_usd) else held_usd
            self._condition.notify_all()
