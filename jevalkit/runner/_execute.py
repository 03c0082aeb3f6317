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
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from .._version import __version__
from ..client import (
    DEFAULT_MAX_RESPONSE_BYTES,
    ChatClient,
    Completion,
    Request,
    ResponseCache,
    RetryPolicy,
    combine,
    default_cache_dir,
)
from ..costs import Budget, BudgetMeter, BudgetReached, Price, price_for
from ..errors import ResultsError, UsageError
from ._columns import ResultRow, row_key
from ._drift import describe_drift, model_drift
from ._job import JOB_FIELDS, Job
from ._store import (
    ResultsWriter,
    check_results_path,
    latest_rows,
    locked,
    read_results,
    rewrite_without,
)
from ._target import Target, endpoint_identity, open_target, row_endpoint

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 5


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How a run sends its requests: the one set of defaults for probes and judges alike.

    Example:
        >>> RunSettings().concurrency, RunSettings().timeout, RunSettings().max_retries
        (8, 60.0, 5)
        >>> RunSettings(concurrency=0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: concurrency must be a whole number of at least 1, got 0
    """

    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    cache: bool = True
    cache_dir: str | Path | None = None
    retry_errors: bool = False
    progress: bool = True
    budget_usd: float | None = None
    budget_requests: int | None = None
    price_in: float | None = None
    price_out: float | None = None

    def __post_init__(self) -> None:
        for name in ("concurrency", "max_response_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a whole number of at least 1, got {value!r}")
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0:
            raise UsageError(f"timeout must be a positive number of seconds, got {t!r}")
        RetryPolicy(max_retries=self.max_retries)  # validates it
        self.new_budget()  # validates the limits
        price_for("", price_in=self.price_in, price_out=self.price_out)  # validates the prices

    def new_budget(self) -> Budget:
        """A fresh budget with this run's limits (one per invocation)."""
        return Budget(usd=self.budget_usd, requests=self.budget_requests)

    def price(self, model: str) -> Price | None:
        """The price of ``model``: the overrides, else the price table, else None."""
        return price_for(model, price_in=self.price_in, price_out=self.price_out)

    def require_price(self, model: str) -> Price:
        """The price of ``model``, which a dollar budget needs; refused when unknown."""
        price = self.price(model)
        if price is None:
            raise UsageError(
                f"--budget-usd needs a price for {model!r}: it is not in data/prices.yaml; "
                "give --price-in and --price-out (dollars per million tokens)"
            )
        return price

    def cache_root(self) -> Path:
        """Where responses are cached."""
        return Path(self.cache_dir) if self.cache_dir else default_cache_dir() / "responses"


def settings_from(options: dict[str, Any]) -> RunSettings:
    """Pick the :class:`RunSettings` fields out of keyword arguments (the others stay)."""
    names = {f.name for f in fields(RunSettings)}
    return RunSettings(**{k: options.pop(k) for k in list(options) if k in names})


def now() -> str:
    """The current UTC time in ISO 8601 with milliseconds (the row timestamps)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


async def execute(
    jobs: Sequence[Job],
    *,
    model: str | None,
    out: str | Path,
    label: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    settings: RunSettings | None = None,
    description: str = "requests",
    budget: Budget | None = None,
) -> pd.DataFrame:
    """Execute ``jobs`` against ``model`` and return their rows (one per job) as a DataFrame.

    Rows already in ``out`` are kept and their jobs skipped (resume); with
    ``settings.retry_errors`` error rows are sent again and replaced. ``model`` None runs only
    deterministic jobs (nothing is sent). With a budget (``budget``, else one made from
    ``settings``) the run stops starting requests when it is reached: the rows of the jobs done
    are returned, ``attrs["stopped"]`` says why, and re-running resumes.

    Raises:
        ResultsError: ``out`` is not a regular file, is locked by another run, was written for
            another endpoint, or the disk refused a write (rows written before are kept).
        UsageError: a setting is out of range.
    """
    settings = settings or RunSettings()
    budget = budget if budget is not None else settings.new_budget()
    path = check_results_path(out, writing=True)
    asked = model or "deterministic"
    if model is None and any(job.needs_model for job in jobs):
        raise UsageError("these jobs ask a model: give model= (e.g. 'local')")
    price = settings.price(asked) if model is not None else None
    if budget.usd is not None:
        settings.require_price(asked)
    endpoint = endpoint_identity(model, base_url, api_key_env=api_key_env)
    keys = [job.key(asked, label) for job in jobs]
    with locked(path):
        existing, _ = latest_rows(path)
        _check_same_endpoint(path, existing, set(keys), endpoint)
        if settings.retry_errors:
            failed = {k for k in keys if k in existing and existing[k].get("error")}
            if failed:
                rewrite_without(path, failed)
                existing = {k: v for k, v in existing.items() if k not in failed}
        pending = [job for job, key in zip(jobs, keys, strict=True) if key not in existing]
        if pending:
            await _run_pending(
                pending,
                asked,
                model,
                label,
                base_url,
                api_key_env,
                path,
                settings,
                description,
                done=len(jobs) - len(pending),
                price=price,
                budget=budget,
            )
        results = read_results(path)
    wanted = set(keys)
    mine = results[[row_key(r) in wanted for r in results.to_dict("records")]]
    drift = describe_drift(model_drift(results))
    if drift:
        warnings.warn(drift, stacklevel=2)
    mine = mine.reset_index(drop=True)
    mine.attrs["stopped"] = budget.reached
    mine.attrs["budget_overrun"] = budget.overrun is not None
    return mine


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


async def _run_pending(
    pending: list[Job],
    asked: str,
    model: str | None,
    label: str | None,
    base_url: str | None,
    api_key_env: str | None,
    path: Path,
    settings: RunSettings,
    description: str,
    *,
    done: int,
    price: Price | None,
    budget: Budget,
) -> None:
    needs_target = model is not None and any(job.needs_model for job in pending)
    context = (
        open_target(model, base_url, api_key_env=api_key_env)
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
            client = ChatClient(
                target.endpoint,
                model=target.model,
                concurrency=1 if serial else settings.concurrency,
                timeout=settings.timeout,
                retry=RetryPolicy(max_retries=settings.max_retries),
                cache=ResponseCache(settings.cache_root()) if settings.cache else None,
                max_response_bytes=settings.max_response_bytes,
                meter=BudgetMeter(budget, price) if budget.active else None,
            )
        await _send_all(
            pending, client, target, asked, label, path, settings, description, done, price, budget
        )


async def _send_all(
    jobs: list[Job],
    client: ChatClient | None,
    target: Target | None,
    asked: str,
    label: str | None,
    path: Path,
    settings: RunSettings,
    description: str,
    done: int,
    price: Price | None,
    budget: Budget,
) -> None:
    run_id = uuid.uuid4().hex[:12]
    bar = tqdm(
        total=len(jobs) + done,
        initial=done,
        desc=description,
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
    async with contextlib.AsyncExitStack() as stack:
        if client is not None:
            await stack.enter_async_context(client)
        writer = await stack.enter_async_context(ResultsWriter(path))

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
            row = build_row(job, produced, sent, target, asked, label, run_id, started, price)
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
    job: Job,
    produced: dict[str, Any],
    sent: list[Completion],
    target: Target | None,
    asked: str,
    label: str | None,
    run_id: str,
    started: str,
    price: Price | None = None,
) -> ResultRow:
    """The row of one job, built once from keyword arguments: the job's identity, the target,
    the provenance of every completion it sent, and the fields it produced.

    Example:
        >>> import jevalkit
        >>> from jevalkit.runner import plan_jobs
        >>> job = plan_jobs([jevalkit.load_probe("schema-ten-records")], 1, {})[0]
        >>> row = build_row(job, {"output": "[]", "score": 0.0, "passed": False}, [], None,
        ...                 "m", None, "run1", "2026-11-30T00:00:00.000+00:00")
        >>> row.key(), row.passed, row.attempts
        (('schema-ten-records', 2, None, 'm', '...', None, None, None, None, 0), False, None)
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
        if price is not None:
            cost = price.cost(c.prompt_tokens, c.completion_tokens)
            provenance["cost_usd"] = cost if math.isfinite(cost) else None
    where = {}
    if target is not None and job.needs_model:
        where = dict(model_sha256=target.model_sha256, base_url=target.endpoint.base_url)
    return ResultRow(
        run_id=run_id,
        kind=job.kind,
        probe=job.probe,
        version=job.version,
        probe_hash=job.probe_hash,
        case_id=job.case_id,
        model=asked,
        repeat=job.repeat,
        parameters=job.parameters,
        params_hash=job.params_hash,
        label=label,
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
