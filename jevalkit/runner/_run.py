"""Run probes against a model: plan one job per (probe, case, variant, repeat) and execute them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Unpack

import pandas as pd

from .._sync import run_sync
from ..errors import UsageError
from ..probes import Probe
from ._execute import execute
from ._executors import open_executor
from ._options import RunOptions, RunSettings
from ._plan import Selection, default_results_path, plan_jobs, probes_of
from ._rounds import run_adaptive


async def arun(
    probes: str | Probe | Sequence[str | Probe],
    model: str,
    *,
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    extra_params: dict[str, Any] | None = None,
    constrained: bool = False,
    cases: str | None = None,
    sample: int | None = None,
    sample_seed: int | None = None,
    variants: str | Sequence[str] | None = None,
    **options: Unpack[RunOptions],
) -> pd.DataFrame:
    """Async form of :func:`run` (use it with ``await`` inside a running event loop)."""
    settings = RunSettings.of(options)
    probe_list = probes_of(probes)
    overrides = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens, "top_p": top_p}
    overrides.update(extra_params or {})
    check_generation(overrides)
    name = "+".join(sorted({p.id for p in probe_list}))
    out = settings.out
    path = Path(out) if out is not None else default_results_path(name, model, settings.base_url)
    adaptive = settings.adaptive_plan()
    repeats = adaptive.max_repeats if adaptive else settings.repeats
    selection = Selection(
        cases=cases,
        sample=sample,
        sample_seed=seed if sample_seed is None else sample_seed,
        variants=variants,
    )
    jobs = plan_jobs(probe_list, repeats, overrides, constrained=constrained, selection=selection)
    async with open_executor(settings) as executor:  # here, on Dask, or one shard
        if adaptive is not None:
            return await run_adaptive(
                jobs, adaptive, model=model, out=path, settings=settings, executor=executor
            )
        return await execute(jobs, model=model, out=path, settings=settings, executor=executor)


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
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    extra_params: dict[str, Any] | None = None,
    constrained: bool = False,
    cases: str | None = None,
    sample: int | None = None,
    sample_seed: int | None = None,
    variants: str | Sequence[str] | None = None,
    **options: Unpack[RunOptions],
) -> pd.DataFrame:
    """Run probes against a model and return their results rows as a DataFrame.

    Works from a plain script and inside Jupyter (where an event loop is already running: the run
    then happens on a worker thread with its own loop, no nest_asyncio needed). Re-running the same
    call resumes: rows already in ``out`` are skipped.

    Args:
        probes: probe names (``"id@N"`` or ``"id"``) or :class:`Probe` objects.
        model: the model to ask (``"openai/gpt-4o-mini"``, ...; ``"local"`` for the embedded model).
        temperature, seed, max_tokens, top_p: generation parameters overriding the probe's
            (repeat r is sent ``seed + r``).
        extra_params: more body fields (e.g. ``response_format``).
        constrained: send each probe's schema as ``response_format`` (constrained decoding).
        cases: for probes with cases, the 1-based positions to run (``"1-50"``,
            ``"1-10,20"``); default every case. Recorded in each row's ``subset``.
        sample, sample_seed: then a simple random sample of ``sample`` of them, drawn with
            ``sample_seed`` (default ``seed``; one of them is required).
        variants: ``"all"`` to send every wording of each probe (``base`` and its declared
            variants) or a list of variant ids; each row's ``variant`` says which. Default:
            the probe's own messages, ``variant`` null.
        **options: the run options shared with judges (:class:`jevalkit.runner.RunOptions`,
            each with its default and help): ``base_url``, ``api_key_env``, ``out`` (default
            ``runs/<probes>__<model>[__<host>].jsonl``), ``label``, ``repeats`` (k, or
            ``"auto"``: adaptive repeats in rounds until the anytime-valid interval of the pass
            rate over the cases is at most ``target_half_width`` wide on each side, with
            ``min_repeats`` to ``max_repeats`` per probe, or as ``adaptive`` says; the result is
            in ``attrs["adaptive"]``), ``concurrency``, ``timeout``, ``max_retries``,
            ``max_response_bytes``, ``cache``, ``cache_dir``, ``retry_errors``, ``progress``,
            ``budget_usd`` / ``budget_requests`` (stop cleanly once this invocation has spent
            this much, counted per HTTP attempt, retries included; rows so far are kept,
            re-running resumes, ``attrs["stopped"]`` says so; an endpoint that bills beyond
            ``max_tokens`` stops the run at once with ``attrs["budget_overrun"]`` True, see
            :mod:`jevalkit.costs`),
            ``price_in`` / ``price_out`` (dollars per million tokens, overriding
            ``data/prices.yaml``).

    Returns:
        The rows of this run's (probe, case, variant, repeat) keys, with the columns of
        :data:`jevalkit.results.COLUMNS`.

    Example:
        >>> import jevalkit, tempfile
        >>> df = jevalkit.run("schema-ten-records", "m", base_url="http://127.0.0.1:9/v1",
        ...                   max_retries=0, timeout=1, progress=False, cache=False,
        ...                   out=tempfile.mkdtemp() + "/r.jsonl")
        >>> df.loc[0, "error"]["type"]
        'connection'
    """
    generation = {k: v for k, v in locals().items() if k not in ("probes", "model", "options")}
    return run_sync(arun(probes, model, **generation, **options))
