"""One budget for a run spread over Dask workers: a ledger kept on the scheduler.

Every ledger operation is one function run on the scheduler (``Client.run_on_scheduler``): it
runs on the scheduler's event loop without awaiting, so it is atomic and there is no lock to
lose when a worker dies. The rule is the single-process one (:class:`jevalkit.costs.Budget`):
before a request is sent its largest possible cost is held; when it returns the hold becomes
what it cost. A hold is recorded under the task that made it; when Dask re-runs a task whose
worker died, the dead attempt's holds are counted as spent (they may have reached the endpoint),
so the budget is never exceeded. A task whose request does not fit waits for its own requests in
flight; with none of its own but others' in flight it *yields* (it stops, its jobs stay pending,
and the driver runs another wave for them once those have settled: a task never waits on another,
which could be queued behind it on the same worker); with none in flight anywhere the budget is
reached for the whole run.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from ..costs import Budget, BudgetReached

SLACK_USD = 1e-12  # float rounding of a sum of reservations (as in jevalkit.costs)
_LEDGERS: dict[str, dict[str, Any]] = {}  # on the scheduler: ledger name -> state


def ledger_op(
    op: str,
    name: str,
    holder: str = "",
    usd: float = 0.0,
    spent: float = 0.0,
    why: str = "",
    limits: tuple[float | None, int | None] = (None, None),
    dask_scheduler: Any = None,
) -> dict[str, Any]:
    """One atomic operation on a ledger (``open``, ``begin``, ``reserve``, ``settle``,
    ``close``); returns ``{"status", "reached", "sent", "spent"}``. Runs on the scheduler.

    Example:
        >>> ledger_op("open", "doc", limits=(None, 1))["status"]
        'ok'
        >>> ledger_op("reserve", "doc", "t0")["status"], ledger_op("reserve", "doc", "t0")["status"]
        ('ok', 'wait')
        >>> _ = ledger_op("settle", "doc", "t0")
        >>> ledger_op("reserve", "doc", "t0")["status"], ledger_op("close", "doc")["sent"]
        ('reached', 1)
    """
    if op == "open":
        _LEDGERS.setdefault(
            name,
            {"usd": limits[0], "requests": limits[1], "spent": 0.0, "sent": 0, "held": {}},
        )
        _LEDGERS[name].setdefault("reached", None)
        _LEDGERS[name].setdefault("overrun", None)
    state = _LEDGERS.get(name) if op != "close" else _LEDGERS.pop(name, None)
    if state is None:
        return {"status": "closed", "reached": "the run's budget ledger is closed", "overrun": None}
    held = state["held"]
    status = "ok"
    if op == "begin":  # a (re-)started task: holds of an earlier attempt may have been sent
        old_usd, old_n = held.pop(holder, (0.0, 0))
        state["spent"] += old_usd
        state["sent"] += old_n
    elif op == "reserve":
        status = _reserve(state, holder, usd)
    elif op == "settle":  # one attempt that was sent: what it cost (NaN: unknown, the hold)
        h_usd, h_n = held.get(holder, (0.0, 0))
        held[holder] = (h_usd - usd, h_n - 1)
        cost = spent if math.isfinite(spent) else usd
        state["sent"] += 1
        state["spent"] += cost
        if state["usd"] is not None and cost > usd + SLACK_USD and state["overrun"] is None:
            state["overrun"] = state["reached"] = (
                f"budget overrun: an answer cost ${cost:.4f}, more than the ${usd:.4f} reserved "
                f"for it ({why}); the endpoint bills beyond max_tokens, so the run stopped at once"
            )
    return {
        "status": status,
        "reached": state["reached"],
        "overrun": state["overrun"],
        "sent": state["sent"],
        "spent": state["spent"],
    }


def _reserve(state: dict[str, Any], holder: str, usd: float) -> str:
    if state["reached"] is not None:
        return "reached"
    held_usd = sum(u for u, _ in state["held"].values())
    held_n = sum(n for _, n in state["held"].values())
    fits = (state["requests"] is None or state["sent"] + held_n + 1 <= state["requests"]) and (
        state["usd"] is None or state["spent"] + held_usd + usd <= state["usd"] + 1e-12
    )
    if fits:
        u, n = state["held"].get(holder, (0.0, 0))
        state["held"][holder] = (u + usd, n + 1)
        return "ok"
    if state["held"].get(holder, (0.0, 0))[1] > 0:
        return "wait"  # this task's own requests in flight may free room
    if any(n > 0 for _, n in state["held"].values()):
        return "busy"  # other tasks' requests may free room: this task yields (see LedgerBudget)
    limits = Budget(usd=state["usd"], requests=state["requests"]).describe()
    spent = f"{state['sent']} requests sent" + (
        f", ${state['spent']:.4f} spent" if state["usd"] is not None else ""
    )
    state["reached"] = (
        f"stopped at the {limits} ({spent}, across all workers); rows so far are kept; "
        "re-run to resume"
    )
    return "reached"


class LedgerBudget(Budget):
    """A :class:`~jevalkit.costs.Budget` whose counts live in the scheduler's ledger: what one
    Dask task reserves and settles counts for the whole run."""

    def __init__(
        self, client: Any, name: str, holder: str, *, usd: float | None, requests: int | None
    ):
        super().__init__(usd=usd, requests=requests)
        self._client = client
        self._name = name
        self._holder = holder
        self._settled = 0
        self._event: asyncio.Event | None = None
        self.yielded = False  # stopped for others' requests in flight, not at the budget
        self.run_reached: str | None = None  # the run's budget is reached (the ledger says)

    def call(self, op: str, **kwargs: Any) -> dict[str, Any]:
        """Run one ledger operation for this task (blocking)."""
        answer = self._client.run_on_scheduler(ledger_op, op, self._name, self._holder, **kwargs)
        self.run_reached = answer["reached"]
        self.reached = self.run_reached or self.reached
        self.overrun = answer["overrun"]
        self.sent, self.spent_usd = answer.get("sent", self.sent), answer.get("spent", 0.0)
        return answer

    async def reserve(self, usd: float) -> None:
        """Hold room for one request in the run's ledger (see the module docstring)."""
        if self._event is None:
            self._event = asyncio.Event()
        while True:
            seen = self._settled
            answer = await asyncio.to_thread(self.call, "reserve", usd=usd)
            if answer["status"] == "ok":
                return
            if answer["status"] == "busy":
                self.yielded = True
                self.reached = "yielded to other workers' requests in flight"
            if answer["status"] != "wait":
                raise BudgetReached(self.reached or "the budget is reached")
            while self._settled == seen:
                self._event.clear()
                await self._event.wait()

    async def settle(self, held_usd: float, spent_usd: float, *, why: str = "") -> None:
        """Replace this task's hold for one attempt that was sent with what it cost (NaN: the
        whole hold); an answer that cost more than its hold stops the whole run (``overrun``)."""
        await asyncio.to_thread(self.call, "settle", usd=held_usd, spent=spent_usd, why=why)
        self._settled += 1
        if self._event is not None:
            self._event.set()
