"""The one execution path: run a list of jobs against a model into a results file.

Probes and judges plan jobs (:class:`~jevalkit.runner.Job`); this module does everything else,
once, for both: the results file's lock and resume, ``retry_errors``, the endpoint check, the
target (starting the embedded model when asked), one client and one cache per run, the progress
bar, building each row once from keyword arguments, durable writes, and reading the rows back.
"""

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

import pandas as pd
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
from ..errors import ResultsError, UsageError
from ._columns import KEY_COLUMNS, ResultRow, row_key
from ._drift import warn_of_drift
from ._job import JOB_FIELDS, Job
from ._options import RunSettings
from ._store import (
    ResultsWriter,
    check_results_path,
    latest_rows,
    locked,
    read_results,
    results_frame,
    rewrite_without,
)
from ._target import Target, check_key_variable, endpoint_identity, open_target, row_endpoint


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
        target, client: the endpoint and its client, once open (None for deterministic jobs).
    """

    model: str | None
    asked: str
    path: Path
    settings: RunSettings
    description: str
    price: Price | None
    budget: Budget
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    target: Target | None = None
    client: ChatClient | None = None


def now() -> str:
    """The current UTC time in ISO 8601 with milliseconds (the row timestamps)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


async def execute(
    jobs: Sequence[Job],
    *,
    model: str | None,
    out: str | Path,
    settings: RunSettings | None = None,
    description: str = "requests",
    budget: Budget | None = None,
) -> pd.DataFrame:
    """Execute ``jobs`` against ``model`` and return their rows (one per job) as a DataFrame.

    Rows already in ``out`` are kept and their jobs skipped (resume); with
    ``settings.retry_errors`` error rows are sent again and replaced. ``model`` None runs only
    deterministic jobs (nothing is sent). The label, endpoint and how requests are sent come from
    ``settings`` (:class:`RunSettings`; ``settings.out`` is not used: ``out`` is the resolved
    path). With a budget (``budget``, else one made from
    ``settings``) the run stops starting requests when it is reached: the rows of the jobs done
    are returned, ``attrs["stopped"]`` says why, and re-running resumes.

    Raises:
        ResultsError: ``out`` is not a regular file, is locked by another run, was written for
            another endpoint, or the disk refused a write (rows written before are kept).
        UsageError: a setting is out of range.
    """
    settings = settings or RunSettings()
    budget = budget if budget is not None else settings.new_budget()
    results, keys = await _execute(jobs, model, out, settings, description, budget, read=True)
    warn_of_drift(results)
    mine = rows_of(results, keys).reset_index(drop=True)
    mine.attrs["stopped"] = budget.reached
    mine.attrs["budget_overrun"] = budget.overrun is not None
    return mine


async def execute_unread(
    jobs: Sequence[Job],
    *,
    model: str | None,
    out: str | Path,
    settings: RunSettings | None = None,
    description: str = "requests",
    budget: Budget,
) -> None:
    """:func:`execute` without reading the rows back (for a caller that reads the results file
    itself: a Dask shard, whose part file the driver merges). Why it stopped is in ``budget``."""
    await _execute(jobs, model, out, settings or RunSettings(), description, budget, read=False)


async def _execute(
    jobs: Sequence[Job],
    model: str | None,
    out: str | Path,
    settings: RunSettings,
    description: str,
    budget: Budget,
    *,
    read: bool,
) -> tuple[pd.DataFrame, list[tuple]]:
    """The one body of :func:`execute` and :func:`execute_unread`: the whole results file after
    the run (an empty frame when not ``read``) and the keys of ``jobs``."""
    path = check_results_path(out, writing=True)
    asked = model or "deterministic"
    if model is None and any(job.needs_model for job in jobs):
        raise UsageError("these jobs ask a model: give model= (e.g. 'local')")
    price = settings.price(asked) if model is not None else None
    if budget.usd is not None:
        settings.require_price(asked)
    endpoint = endpoint_identity(model, settings.base_url, api_key_env=settings.api_key_env)
    if model is not None and any(job.needs_model for job in jobs):
        check_key_variable(settings.api_key_env)
    keys = [job.key(asked, settings.label) for job in jobs]
    with locked(path):
        existing = resume_rows(path, jobs, keys, endpoint, retry_errors=settings.retry_errors)
        pending = [job for job, key in zip(jobs, keys, strict=True) if key not in existing]
        if pending:
            run = RunContext(
                model=model,
                asked=asked,
                path=path,
                settings=settings,
                description=description,
                price=price,
                budget=budget,
            )
            await _run_pending(pending, run, done=len(jobs) - len(pending))
        results = read_results(path) if read else results_frame([])
    return results, keys


def resume_rows(
    path: Path,
    jobs: Sequence[Job],
    keys: list[tuple],
    endpoint: str | None,
    *,
    retry_errors: bool,
) -> dict[tuple, dict]:
    """The resume step of every execution path (call it holding ``path``'s lock): the latest
    row of each key already in ``path``, after refusing rows of these ``jobs`` (with their
    ``keys``) written against another endpoint or from other probe content; with
    ``retry_errors`` the error rows of ``keys`` are removed from the file (and from the answer)
    so that they are sent again."""
    existing, _ = latest_rows(path)
    _check_same_endpoint(path, existing, set(keys), endpoint)
    _check_same_content(path, existing, list(jobs), keys)
    if retry_errors:
        failed = {k for k in keys if k in existing and existing[k].get("error")}
        if failed:
            rewrite_without(path, failed)
            existing = {k: v for k, v in existing.items() if k not in failed}
    return existing


def rows_of(results: pd.DataFrame, keys: list[tuple]) -> pd.DataFrame:
    """The rows of ``results`` whose key is one of ``keys`` (this invocation's rows)."""
    wanted = set(keys)
    # the key columns only: converting every column of large rows to dicts costs far more
    return results[[row_key(r) in wanted for r in results[list(KEY_COLUMNS)].to_dict("records")]]


def _check_same_endpoint(
    path: Path, existing: dict[tuple, dict], keys: set[tuple], endpoint: str | None
) -> None:
    if endpoint is None:
        return
    for key in keys & existing.keys():
        theirs = row_endpoint(existing[key])
        if theirs is not None and theirs != endpoint:
            raise ResultsError(
                f"{path} holds rows of this run written against {theirs}, not {endpoint}; "
                "resuming would mix endpoints: write this run to another file with --out"
            )


def _check_same_content(
    path: Path, existing: dict[tuple, dict], jobs: list[Job], keys: list[tuple]
) -> None:
    """Refuse to resume over rows of the same probe version written from other content (an
    unpublished probe or case file edited in place): kept and new rows would answer different
    prompts under one name."""
    for job, key in zip(jobs, keys, strict=True):
        theirs = existing.get(key, {}).get("probe_hash")
        if theirs is not None and job.probe_hash is not None and theirs != job.probe_hash:
            raise ResultsError(
                f"{path} holds rows of {job.probe}@{job.version} written from other content "
                f"(sha256 {theirs[:12]}, now {job.probe_hash[:12]}): the probe or its case file "
                "changed without a new version; publish the change as the next version, or "
                "write this run to another file with --out"
            )


async def _run_pending(pending: list[Job], run: RunContext, *, done: int) -> None:
    needs_target = run.model is not None and any(job.needs_model for job in pending)
    settings = run.settings
    context = (
        open_target(run.model, settings.base_url, api_key_env=settings.api_key_env)
        if needs_target
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
        await _send_all(pending, replace(run, target=target, client=client), done)


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
    counts = {"errors": 0, "retries": 0}
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
        >>> from jevalkit.runner import plan_jobs
        >>> job = plan_jobs([jevalkit.load_probe("schema-ten-records")], 1, {})[0]
        >>> run = RunContext(model="m", asked="m", path=Path("r.jsonl"), settings=RunSettings(),
        ...                  description="requests", price=None, budget=RunSettings().new_budget())
        >>> row = build_row(job, {"output": "[]", "score": 0.0, "passed": False}, [], run,
        ...                 "2026-11-30T00:00:00.000+00:00")
        >>> row.key(), row.passed, row.attempts
        (('schema-ten-records', 3, None, None, 'm', '...', None, None, None, None, 0), False, None)
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
    where = {}
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
        **where,
        **provenance,
        **produced,
        started_at=started,
        finished_at=now(),
        jevalkit_version=__version__,
    )
