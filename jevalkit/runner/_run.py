"""Run probes against a model: plan one job per (probe, repeat) and execute them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._sync import run_sync
from ..client import DEFAULT_MAX_RESPONSE_BYTES
from ..errors import UsageError
from ..probes import Probe, load_probe
from ._adaptive import AdaptiveRepeats, run_adaptive
from ._distributed import scaled_execute
from ._execute import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    settings_from,
)
from ._plan import default_results_path, plan_jobs


async def arun(
    probes: str | Probe | Sequence[str | Probe],
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    repeats: int | str = 1,
    out: str | Path | None = None,
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    extra_params: dict[str, Any] | None = None,
    label: str | None = None,
    constrained: bool = False,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    retry_errors: bool = False,
    progress: bool = True,
    target_half_width: float = 0.03,
    min_repeats: int = 2,
    max_repeats: int = 20,
    adaptive: AdaptiveRepeats | None = None,
    budget_usd: float | None = None,
    budget_requests: int | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    scheduler: str | None = None,
    cluster: Any = None,
    workers: int | None = None,
    shard: str | tuple[int, int] | None = None,
) -> pd.DataFrame:
    """Async form of :func:`run` (use it with ``await`` inside a running event loop)."""
    settings = settings_from(dict(locals()))
    adaptive_run = repeats == "auto" or adaptive is not None
    if adaptive_run and shard is not None:
        raise UsageError(
            "--repeats auto decides each round on all of its rows: run it on Dask "
            "(--scheduler or --workers), not as --shard"
        )
    probe_list = [p if isinstance(p, Probe) else load_probe(p) for p in _as_list(probes)]
    overrides = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens, "top_p": top_p}
    overrides.update(extra_params or {})
    check_generation(overrides)
    name = "+".join(sorted({p.id for p in probe_list}))
    path = Path(out) if out is not None else default_results_path(name, model, base_url)
    engine = scaled_execute(scheduler=scheduler, cluster=cluster, workers=workers, shard=shard)
    if adaptive_run:
        plan = adaptive or AdaptiveRepeats(
            target_half_width=target_half_width, min_repeats=min_repeats, max_repeats=max_repeats
        )
        async with engine as run_jobs:
            return await run_adaptive(
                probe_list,
                overrides,
                plan,
                model=model,
                out=path,
                label=label,
                base_url=base_url,
                api_key_env=api_key_env,
                settings=settings,
                constrained=constrained,
                run_jobs=run_jobs,
            )
    jobs = plan_jobs(probe_list, repeats, overrides, constrained=constrained)
    async with engine as run_jobs:
        return await run_jobs(
            jobs,
            model=model,
            out=path,
            label=label,
            base_url=base_url,
            api_key_env=api_key_env,
            settings=settings,
        )


def check_generation(overrides: dict[str, Any]) -> None:
    """Refuse generation parameters no endpoint can honour (NaN, negative, not a number).

    Example:
        >>> check_generation({"temperature": float("nan")})
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: temperature must be a finite number from 0 to 2, got nan
    """
    checks = {
        "temperature": (float, 0.0, 2.0, "a finite number from 0 to 2"),
        "top_p": (float, 0.0, 1.0, "a number from 0 to 1"),
        "max_tokens": (int, 1, 10**7, "a whole number of at least 1"),
        "seed": (int, 0, 2**63 - 1, "a whole number of 0 or more"),
    }
    for name, (kind, low, high, what) in checks.items():
        value = overrides.get(name)
        if value is None:
            continue
        ok = not isinstance(value, bool) and isinstance(
            value, int | float if kind is float else int
        )
        if not ok or not (low <= value <= high):
            raise UsageError(f"{name} must be {what}, got {value!r}")


def run(
    probes: str | Probe | Sequence[str | Probe],
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    repeats: int | str = 1,
    out: str | Path | None = None,
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    extra_params: dict[str, Any] | None = None,
    label: str | None = None,
    constrained: bool = False,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    retry_errors: bool = False,
    progress: bool = True,
    target_half_width: float = 0.03,
    min_repeats: int = 2,
    max_repeats: int = 20,
    adaptive: AdaptiveRepeats | None = None,
    budget_usd: float | None = None,
    budget_requests: int | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    scheduler: str | None = None,
    cluster: Any = None,
    workers: int | None = None,
    shard: str | tuple[int, int] | None = None,
) -> pd.DataFrame:
    """Run probes against a model and return their results rows as a DataFrame.

    Works from a plain script and inside Jupyter (where an event loop is already running: the run
    then happens on a worker thread with its own loop, no nest_asyncio needed). Re-running the same
    call resumes: rows already in ``out`` are skipped.

    Args:
        probes: probe names (``"id@N"`` or ``"id"``) or :class:`Probe` objects.
        model: the model to ask (``"openai/gpt-4o-mini"``, ...; ``"local"`` for the embedded model).
        base_url: the OpenAI-compatible endpoint (default ``$JEVALKIT_BASE_URL``, else OpenRouter).
        api_key_env: the environment variable holding the key for ``base_url``.
        repeats: requests per probe (k), or ``"auto"``: adaptive repeats in rounds until the
            anytime-valid interval of the pass rate over the probes is at most
            ``target_half_width`` wide on each side, with ``min_repeats`` to ``max_repeats`` per
            probe (:class:`jevalkit.runner.AdaptiveRepeats`; ``adaptive`` sets every option).
            The result is in ``attrs["adaptive"]``.
        out: results path (default ``runs/<probes>__<model>[__<host>].jsonl``).
        temperature, seed, max_tokens, top_p: generation parameters overriding the probe's
            (repeat r is sent ``seed + r``).
        extra_params: more body fields (e.g. ``response_format``).
        label: a name for this configuration (a "system" in comparisons).
        constrained: send each probe's schema as ``response_format`` (constrained decoding).
        concurrency: requests in flight.
        timeout: seconds one attempt may take in total.
        max_retries: retries of 429, 5xx, timeouts and connection errors.
        max_response_bytes: a larger answer is an error row.
        cache, cache_dir: the response cache (one entry per request and repeat).
        retry_errors: re-run error rows only.
        progress: show a progress bar.
        budget_usd, budget_requests: stop cleanly once this invocation has spent this much,
            counted per HTTP attempt (retries included; rows so far are kept; re-running
            resumes); ``attrs["stopped"]`` says so. An endpoint that bills beyond
            ``max_tokens`` stops the run at once with ``attrs["budget_overrun"]`` True
            (see :mod:`jevalkit.costs`).
        price_in, price_out: dollars per million tokens, overriding ``data/prices.yaml``.
        scheduler, cluster, workers: run on Dask: the scheduler at ``tcp://host:port``, a
            ``distributed.Client`` or cluster object (``LocalCluster``, dask-jobqueue's
            ``SLURMCluster``, ...), or a ``LocalCluster`` of ``workers`` processes on 127.0.0.1.
            The jobs are split into shards by key, one Dask task each, written to part files
            beside ``out`` and merged into it; concurrency and budgets hold for the whole run.
        shard: ``"i/N"``: run only shard i of N into ``<out>.parts/i.jsonl`` (no engine; for
            job arrays); merge the parts with :func:`jevalkit.runner.merge_parts`.

    Returns:
        The rows of this run's (probe, repeat) keys, with the columns of
        :data:`jevalkit.runner.COLUMNS`.

    Example:
        >>> import jevalkit, tempfile
        >>> df = jevalkit.run("schema-ten-records", "m", base_url="http://127.0.0.1:9/v1",
        ...                   max_retries=0, timeout=1, progress=False, cache=False,
        ...                   out=tempfile.mkdtemp() + "/r.jsonl")
        >>> df.loc[0, "error"]["type"]
        'connection'
    """
    options = {k: v for k, v in locals().items() if k not in ("probes", "model")}
    return run_sync(arun(probes, model, **options))


def _as_list(probes: str | Probe | Sequence[str | Probe]) -> list[str | Probe]:
    if isinstance(probes, str | Probe):
        return [probes]
    return list(probes)
