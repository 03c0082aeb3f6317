"""Run probes against a model: k repeats, bounded concurrency, retries, cache, resumable results."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from .._sync import run_sync
from .._version import __version__
from ..client import ChatClient, Endpoint, ResponseCache, RetryPolicy, default_cache_dir
from ..client import resolve_endpoint as resolve_remote
from ..local import is_local_model, local_endpoint
from ..probes import Probe, load_probe
from ._columns import ResultRow, row_key
from ._drift import describe_drift, model_drift
from ._plan import Job, default_results_path, plan_jobs
from ._store import ResultsWriter, latest_rows, read_results, rewrite_without


@dataclass(frozen=True)
class Target:
    """Where requests go: the endpoint, the model name to send, and the model file's sha256
    when jevalkit serves the model itself."""

    endpoint: Endpoint
    model: str
    model_sha256: str | None = None


@contextlib.contextmanager
def open_target(model: str, base_url: str | None) -> Iterator[Target]:
    """Resolve ``model`` to an endpoint; ``local`` starts the embedded server if needed and
    leaves it as it found it."""
    if is_local_model(model) and base_url is None:
        with local_endpoint() as server:
            yield Target(Endpoint(server.base_url), server.model_name, server.model_sha256)
        return
    yield Target(resolve_remote(base_url), model)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


async def arun(
    probes: str | Probe | Sequence[str | Probe],
    model: str,
    *,
    base_url: str | None = None,
    repeats: int = 1,
    concurrency: int = 8,
    out: str | Path | None = None,
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    extra_params: dict[str, Any] | None = None,
    label: str | None = None,
    constrained: bool = False,
    timeout: float = 60.0,
    max_retries: int = 5,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    retry_errors: bool = False,
    progress: bool = True,
) -> pd.DataFrame:
    """Async form of :func:`run` (use it with ``await`` inside a running event loop)."""
    probe_list = [p if isinstance(p, Probe) else load_probe(p) for p in _as_list(probes)]
    overrides = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens, "top_p": top_p}
    overrides.update(extra_params or {})
    jobs = plan_jobs(probe_list, repeats, overrides, constrained=constrained)
    path = Path(out) if out is not None else default_results_path(probe_list, model)
    existing = latest_rows(path)
    keys = {job.key(model, label) for job in jobs}
    if retry_errors:
        failed = {k for k, row in existing.items() if k in keys and row.get("error")}
        if failed:
            rewrite_without(path, failed)
            existing = {k: v for k, v in existing.items() if k not in failed}
    pending = [job for job in jobs if job.key(model, label) not in existing]

    with open_target(model, base_url) if pending else contextlib.nullcontext() as target:
        if pending:
            await _send_all(
                pending,
                target,
                asked_model=model,
                label=label,
                path=path,
                concurrency=concurrency,
                timeout=timeout,
                retry=RetryPolicy(max_retries=max_retries),
                cache=ResponseCache(cache_dir or default_cache_dir() / "responses")
                if cache
                else None,
                progress=progress,
                already_done=len(jobs) - len(pending),
            )
    results = read_results(path)
    mine = results[[row_key(r) in keys for r in results.to_dict("records")]].reset_index(drop=True)
    drift = describe_drift(model_drift(results))
    if drift:
        warnings.warn(drift, stacklevel=2)
    return mine


async def _send_all(
    jobs: list[Job],
    target: Target,
    *,
    asked_model: str,
    label: str | None,
    path: Path,
    concurrency: int,
    timeout: float,
    retry: RetryPolicy,
    cache: ResponseCache | None,
    progress: bool,
    already_done: int,
) -> None:
    run_id = uuid.uuid4().hex[:12]
    bar = tqdm(
        total=len(jobs) + already_done,
        initial=already_done,
        desc="requests",
        unit="req",
        disable=not progress,
        dynamic_ncols=True,
    )
    counts = {"errors": 0, "retries": 0}

    def on_retry() -> None:
        counts["retries"] += 1
        bar.set_postfix(counts, refresh=False)

    client = ChatClient(
        target.endpoint,
        concurrency=concurrency,
        timeout=timeout,
        retry=retry,
        cache=cache,
        on_retry=on_retry,
    )
    async with client, ResultsWriter(path) as writer:

        async def one(job: Job) -> None:
            started = _now()
            body = {"model": target.model, "messages": job.probe.chat_messages(), **job.sent}
            completion = await client.chat(body, repeat=job.repeat)
            row = ResultRow(
                run_id=run_id,
                kind="probe",
                probe=job.probe.id,
                version=job.probe.version,
                probe_hash=job.probe.content_hash,
                model=asked_model,
                repeat=job.repeat,
                model_resolved=completion.model_resolved,
                system_fingerprint=completion.system_fingerprint,
                model_sha256=target.model_sha256,
                base_url=target.endpoint.base_url,
                parameters={
                    **job.parameters,
                    **({"seed": job.sent["seed"]} if "seed" in job.sent else {}),
                },
                params_hash=job.params_hash,
                label=label,
                output=completion.text,
                finish_reason=completion.finish_reason,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                latency_s=completion.latency_s,
                attempts=completion.attempts,
                cached=completion.cached,
                error=completion.error,
                started_at=started,
                jevalkit_version=__version__,
            )
            if completion.ok:
                score = job.probe.score(completion.text or "")
                row.score, row.passed = score.value, score.passed
                row.checks = [c.__dict__ for c in score.checks]
                row.first_failing_item = score.first_failing_item
                row.score_errors = list(score.errors)
            else:
                counts["errors"] += 1
            row.finished_at = _now()
            await writer.write(row)
            bar.set_postfix(counts, refresh=False)
            bar.update(1)

        try:
            await asyncio.gather(*(one(job) for job in jobs))
        finally:
            bar.close()


def run(
    probes: str | Probe | Sequence[str | Probe],
    model: str,
    **options: Any,
) -> pd.DataFrame:
    """Run probes against a model and return their results rows as a DataFrame.

    Works from a plain script and inside Jupyter (where an event loop is already running: the run
    then happens on a worker thread with its own loop, no nest_asyncio needed). Re-running the same
    call resumes: rows already in ``out`` are skipped.

    Args:
        probes: probe names (``"id@N"`` or ``"id"``) or :class:`Probe` objects.
        model: the model to ask (``"openai/gpt-4o-mini"``, ...; ``"local"`` for the embedded model).
        **options: ``base_url``, ``repeats`` (k), ``concurrency`` (8), ``out`` (results path,
            default ``runs/<probes>__<model>.jsonl``), ``temperature``, ``seed`` (repeat r sends
            ``seed + r``), ``max_tokens``, ``top_p``, ``extra_params`` (more body fields, e.g.
            ``response_format``), ``label`` (a name for this configuration), ``constrained`` (send
            each probe's schema as ``response_format`` for constrained decoding), ``timeout`` (s, per
            request), ``max_retries`` (5), ``cache`` (True), ``cache_dir``, ``retry_errors``
            (re-run error rows only), ``progress`` (True).

    Returns:
        The rows of this run's (probe, repeat) keys, with the columns of
        :data:`jevalkit.runner.COLUMNS`.

    Example:
        >>> import jevalkit
        >>> df = jevalkit.run("schema-ten-records", "m", base_url="http://127.0.0.1:9/v1",
        ...                   max_retries=0, timeout=1, progress=False, cache=False,
        ...                   out=__import__("tempfile").mkdtemp() + "/r.jsonl")
        >>> df.loc[0, "error"]["type"]
        'connection'
    """
    return run_sync(arun(probes, model, **options))


def _as_list(probes: str | Probe | Sequence[str | Probe]) -> list[str | Probe]:
    if isinstance(probes, str | Probe):
        return [probes]
    return list(probes)
