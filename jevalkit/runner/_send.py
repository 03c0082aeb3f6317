"""Sending jobs in this process: one target, one client and one cache per run, the progress bar,
building each row once from keyword arguments, and durable writes (the executor's own way of
sending; on Dask every task sends its shard this way)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from .._version import __version__
from ..client import (
    ChatClient,
    Completion,
    Request,
    ResponseCache,
    RetryPolicy,
    combine,
)
from ..costs import Budget, BudgetMeter, BudgetReached, Price
from ..errors import UsageError
from ..results import ResultRow, ResultsWriter, RunConfig
from ._job import JOB_FIELDS, Job
from ._options import RunSettings
from ._target import Target, open_target


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """Everything one invocation of :func:`execute` shares across its jobs, fixed when it starts
    (the target and client once they are open): the one thing the steps of a run hand on.

    Attributes:
        model: the model to send to (None: deterministic jobs only).
        asked: the model as the rows record it (``deterministic`` for None).
        path: the results file.
        settings: the run's options (label, endpoint, concurrency, cache, budget, ...).
        description: the progress bar's label.
        price: the model's price, when known.
        budget: this invocation's budget (one per invocation, shared by its rounds).
        run_id: recorded in every row this invocation writes.
        config: the run's configuration, as its part files record it (None: not recorded).
        target, client: the endpoint and its client, once open (None for deterministic jobs).
    """

    model: str | None
    asked: str
    path: Path
    settings: RunSettings
    description: str
    price: Price | None
    budget: Budget
    config: RunConfig | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    target: Target | None = None
    client: ChatClient | None = None


def now() -> str:
    """The current UTC time in ISO 8601 with milliseconds (the row timestamps)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


async def send_jobs(pending: Sequence[Job], run: RunContext, *, done: int) -> None:
    """Send ``pending`` in this process and append a row for each to ``run.path``: one target
    (the embedded model started when asked), one client and one cache, the progress bar
    starting at ``done``. A budget reached stops starting jobs (``run.budget`` says why)."""
    settings = run.settings
    context = (
        open_target(run.model, settings.base_url, api_key_env=settings.api_key_env)
        if run.model is not None and any(job.needs_model for job in pending)
        else contextlib.nullcontext()
    )
    with context as target:
        client = None
        if target is not None:
            # llama.cpp batches concurrent requests and batching changes the numerics: the same
            # seed gave different text at 4 concurrent requests than alone. Seeded jobs on the
            # embedded model therefore run one at a time, so a seed reproduces its text.
            serial = target.local and any(job.seeded for job in pending)
            # more requests than the embedded model has slots would wait in its queue
            slots = min(settings.concurrency, target.slots or settings.concurrency)
            client = ChatClient(
                target.endpoint,
                model=target.model,
                concurrency=1 if serial else slots,
                timeout=settings.timeout,
                retry=RetryPolicy(max_retries=settings.max_retries),
                cache=ResponseCache(settings.cache_root()) if settings.cache else None,
                max_response_bytes=settings.max_response_bytes,
                meter=BudgetMeter(run.budget, run.price) if run.budget.active else None,
                paced=target.local,
            )
        await _send_all(list(pending), replace(run, target=target, client=client), done)


async def _send_all(jobs: list[Job], run: RunContext, done: int) -> None:
    client, budget, settings = run.client, run.budget, run.settings
    bar = tqdm(
        total=len(jobs) + done,
        initial=done,
        desc=run.description,
        unit="req",
        disable=not settings.progress,
        dynamic_ncols=True,
    )
    counts: dict[str, float] = {"errors": 0, "retries": 0}  # and tokens, tok/s when streamed
    if client is not None:

        def on_retry() -> None:
            counts["retries"] += 1
            bar.set_postfix(counts, refresh=False)

        client.on_retry = on_retry
        shown = [0.0]

        def on_tokens(n: int) -> None:  # streamed answers: show the tokens as they arrive
            counts["tokens"] = client.streamed_tokens
            if client.tokens_per_second:
                counts["tok/s"] = round(client.tokens_per_second, 1)
            now = time.monotonic()
            refresh = now - shown[0] >= 1.0  # a long answer moves no bar: redraw once a second
            shown[0] = now if refresh else shown[0]
            bar.set_postfix(counts, refresh=refresh)

        client.on_tokens = on_tokens
    async with contextlib.AsyncExitStack() as stack:
        if client is not None:
            await stack.enter_async_context(client)
        writer = await stack.enter_async_context(ResultsWriter(run.path))

        # with a budget, at most `concurrency` jobs hold a reservation at a time
        gate = (
            asyncio.Semaphore(settings.concurrency) if budget.active else contextlib.nullcontext()
        )

        async def one(job: Job) -> None:
            started = now()
            sent: list[Completion] = []

            async def send(request: Request) -> Completion:
                if client is None:
                    raise UsageError(f"{job.probe} needs a model to send requests to")
                if run.target is not None and run.target.local and "seed" in request.body:
                    # llama-server's prompt cache changes the numerics too: the same seed gave
                    # one text on a cold prompt and another once the prompt was cached
                    request = replace(request, body={**request.body, "cache_prompt": False})
                completion = await client.send(request)
                sent.append(completion)
                return completion

            async with gate:
                if budget.reached:
                    return
                try:
                    produced = await job.perform(send)
                except (BudgetReached, UsageError):
                    if budget.reached:
                        return  # not started: no row; re-running resumes it
                    raise
                except Exception as exc:  # never let one odd answer stop the other requests
                    message = f"{type(exc).__name__} while evaluating the answer: {exc}"
                    produced = {
                        "error": {"type": "internal", "message": message[:500], "status": None}
                    }
            row = build_row(job, produced, sent, run, started)
            if client is not None:
                row = ResultRow(**client.endpoint.redact_value(row.__dict__))
            counts["errors"] += row.error is not None
            await writer.write(row)
            bar.set_postfix(counts, refresh=False)
            bar.update(1)

        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            bar.close()


def build_row(
    job: Job, produced: dict[str, Any], sent: list[Completion], run: RunContext, started: str
) -> ResultRow:
    """The row of one job, built once from keyword arguments: the job's identity, the target,
    the provenance of every completion it sent, and the fields it produced.

    Example:
        >>> import jevalkit
        >>> from jevalkit.runner import jobs_of
        >>> job = jobs_of([jevalkit.load_probe("schema-ten-records")], 1, {})[0]
        >>> run = RunContext(model="m", asked="m", path=Path("r.jsonl"), settings=RunSettings(),
        ...                  description="requests", price=None, budget=RunSettings().new_budget())
        >>> row = build_row(job, {"output": "[]", "score": 0.0, "passed": False}, [], run,
        ...                 "2026-11-30T00:00:00.000+00:00")
        >>> row.key(), row.passed, row.attempts
        (('schema-ten-records', 4, None, None, 'm', '...', None, None, None, None, 0), False, None)
    """
    unknown = set(produced) - JOB_FIELDS
    if unknown:
        raise TypeError(f"{type(job).__name__}.perform returned unknown field(s) {sorted(unknown)}")
    provenance: dict[str, Any] = {}
    if sent:
        c = combine(sent)
        provenance = dict(
            model_resolved=c.model_resolved,
            system_fingerprint=c.system_fingerprint,
            finish_reason=c.finish_reason,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            latency_s=c.latency_s,
            attempts=c.attempts,
            cached=c.cached,
        )
        if run.price is not None:
            cost = run.price.cost(c.prompt_tokens, c.completion_tokens)
            provenance["cost_usd"] = cost if math.isfinite(cost) else None
    where: dict[str, Any] = {}
    if run.target is not None and job.needs_model:
        where = dict(model_sha256=run.target.model_sha256, base_url=run.target.endpoint.base_url)
    return ResultRow(
        run_id=run.run_id,
        kind=job.kind,
        probe=job.probe,
        version=job.version,
        probe_hash=job.probe_hash,
        case_id=job.case_id,
        variant=job.variant,
        subset=job.subset,
        model=run.asked,
        repeat=job.repeat,
        parameters=job.parameters,
        params_hash=job.params_hash,
        label=run.settings.label,
        gold=job.gold,
        system_a=job.system_a,
        system_b=job.system_b,
        position=job.position,
        round=job.round,
        design=job.design,
        **where,
        **provenance,
        **produced,
        started_at=started,
        finished_at=now(),
        jevalkit_version=__version__,
    )
