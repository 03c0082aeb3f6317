"""Budgets: stop a run before it spends more than it was given.

A budget counts what *this invocation* sends (re-running resumes with a fresh budget), per HTTP
attempt: a request retried three times is four requests and four reservations; cache hits send
nothing and cost nothing. Before each attempt its largest possible cost is reserved (every byte
of the prompt a token, plus ``max_tokens``); when the attempt ends the reservation is replaced by
what the endpoint reported it cost, or kept whole when it reported nothing (a timeout, a dropped
connection or an error status may still be billed). An attempt that might not fit waits for the
ones in flight; when nothing is in flight and it still does not fit, the budget is reached: no
further attempt starts, rows already written are kept, and the run says why it stopped.

What this guarantees: at most ``requests`` attempts reach the endpoint, and the dollars booked
never exceed ``usd`` as long as the endpoint bills no more than ``max_tokens`` completion tokens.
What it cannot guarantee: an endpoint that bills beyond ``max_tokens`` (one that ignores it, or
bills hidden reasoning tokens) can overrun the reservation. The first answer that reports more
than was reserved stops the run at once (``overrun`` says so), and the CLI exits 1.

One ledger, one interface: :meth:`Budget.reserve` before an attempt and :meth:`Budget.settle`
after it, in dollars; :class:`BudgetMeter` turns a request body and an answer's token counts
into those dollars for one model's price.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import BudgetReached, UsageError
from ._prices import Price

TOKENS_PER_MESSAGE = 8  # chat-template tokens around each message, counted generously
SLACK_USD = 1e-12  # float rounding of a sum of reservations


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
    """At most ``usd`` dollars and ``requests`` HTTP attempts sent by one invocation: the ledger.

    Call :meth:`reserve` before every attempt and :meth:`settle` exactly once after it.

    Example:
        >>> import asyncio
        >>> b = Budget(usd=1.0, requests=2)
        >>> async def two_attempts():
        ...     await b.reserve(0.4)
        ...     await b.settle(0.4, 0.1)
        ...     await b.reserve(0.4)
        ...     await b.settle(0.4, 0.3)
        >>> asyncio.run(two_attempts())
        >>> b.sent, round(b.spent_usd, 2), b.describe()
        (2, 0.4, 'budget: $1 and 2 requests')
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
    overrun: str | None = None
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

    def spent(self) -> str:
        """What was sent and spent so far, as a phrase."""
        return f"{self.sent} requests sent" + (
            f", ${self.spent_usd:.4f} spent" if self.usd is not None else ""
        )

    def _fits(self, usd: float) -> bool:
        if self.requests is not None and self.sent + self._held_requests + 1 > self.requests:
            return False
        return self.usd is None or self.spent_usd + self._held_usd + usd <= self.usd + SLACK_USD

    async def reserve(self, usd: float) -> None:
        """Hold room for one HTTP attempt costing at most ``usd``; wait for attempts in flight
        when it does not fit yet. Raises :class:`BudgetReached` when it never can."""
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
                    self.reached = (
                        f"stopped at the {self.describe()} ({self.spent()}); rows so far are kept; "
                        "re-run to resume"
                    )
                    raise BudgetReached(self.reached)
                await self._condition.wait()

    async def settle(self, held_usd: float, spent_usd: float, *, why: str = "") -> None:
        """Replace the reservation ``held_usd`` of one attempt that was sent with what it cost;
        ``spent_usd`` NaN (nothing reported) keeps the whole reservation. An attempt that cost
        more than was held overruns the budget: nothing further starts (``why`` says what the
        endpoint reported)."""
        if self._condition is None:
            self._condition = asyncio.Condition()
        async with self._condition:
            self._held_usd -= held_usd
            self._held_requests -= 1
            self.sent += 1
            cost = spent_usd if math.isfinite(spent_usd) else held_usd
            self.spent_usd += cost
            # an overrun only where dollars are limited: a request budget reserves no dollars
            if self.usd is not None and cost > held_usd + SLACK_USD and self.overrun is None:
                self.overrun = (
                    f"budget overrun: an answer cost ${cost:.4f}, more than the ${held_usd:.4f} "
                    f"reserved for it{f' ({why})' if why else ''}; the endpoint bills beyond "
                    f"max_tokens, so the run stopped at once ({self.spent()}, {self.describe()})"
                )
                self.reached = self.overrun
            self._condition.notify_all()


@dataclass
class BudgetMeter:
    """Meters the HTTP attempts of one model against a :class:`Budget`: what to reserve for a
    request body and what an answer's reported tokens cost (``price`` None: requests only).

    The chat client calls :meth:`reserve` before each attempt and :meth:`settle` after it.

    Example:
        >>> import asyncio
        >>> meter = BudgetMeter(Budget(usd=1.0), Price(1000.0, 1000.0, "test"))
        >>> async def one():
        ...     held = await meter.reserve({"messages": [], "max_tokens": 100})
        ...     await meter.settle(held, 5, 10)
        ...     return held
        >>> round(asyncio.run(one()), 3), round(meter.budget.spent_usd, 3)
        (0.108, 0.015)
    """

    budget: Budget
    price: Price | None = None

    async def reserve(self, body: dict[str, Any]) -> float:
        """Reserve the most ``body`` can cost; returns the dollars held."""
        held = 0.0
        if self.budget.usd is not None:
            limit = body.get("max_tokens")
            if self.price is None or limit is None:
                raise UsageError(
                    "--budget-usd needs a price and max_tokens, to bound what a request can cost"
                )
            held = self.price.cost(prompt_token_bound(body), limit)
        await self.budget.reserve(held)
        return held

    async def settle(
        self, held: float, prompt_tokens: float | None, completion_tokens: float | None
    ) -> None:
        """Book one attempt that was sent, at the tokens the endpoint reported (None: unknown)."""
        cost = self.price.cost(prompt_tokens, completion_tokens) if self.price else 0.0
        why = f"{prompt_tokens} prompt and {completion_tokens} completion tokens reported"
        await self.budget.settle(held, cost, why=why)
