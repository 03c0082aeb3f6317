"""Run probes against a model: plan one job per (probe, case, variant, repeat) and execute them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

from .._sync import run_sync
from ..client import GENERATION, check_generation, take_generation
from ..errors import UsageError
from ..probes import Probe
from ..results import Arm
from ._arms import arm_source
from ._design_run import Source, run_design
from ._execute import execute
from ._executors import open_executor
from ._options import ProbeOptions, RunSettings
from ._plan import Choices, ProbeChoices, default_results_path, jobs_of, probes_of
from ._run_result import RunResult


@dataclass(frozen=True, kw_only=True)
class ProbeRun:
    """The keywords of a probe run taken apart and checked once, for ``run``, ``arun`` and
    ``plan`` alike.

    Attributes:
        probes: the probes, loaded.
        settings: the run options.
        overrides: the generation parameters set and ``extra_params``, overriding the probes'.
        choices: the cases, wordings and ``constrained``.
        path: the results file (``settings.out``, else the default path of probes and model).

    Example:
        >>> r = ProbeRun.of("schema-ten-records", "m", {"top_p": 0.5, "cases": None, "repeats": 2})
        >>> r.overrides, r.settings.repeats, r.path.name
        ({'top_p': 0.5}, 2, 'schema-ten-records__m.jsonl')
    """

    probes: list[Probe]
    settings: RunSettings
    overrides: dict[str, Any]
    choices: Choices
    path: Path

    @classmethod
    def of(
        cls, probes: str | Probe | Sequence[str | Probe], model: str, options: dict[str, Any]
    ) -> ProbeRun:
        """Take ``options`` (the keywords of :class:`ProbeOptions`) apart and check them."""
        options = dict(options)
        generation = take_generation(options)
        choices = Choices.take(options, seed=generation.get("seed"))
        settings = RunSettings.of(options, others=[*GENERATION, *ProbeChoices.__annotations__])
        overrides = {**generation, **choices.extra_params}
        check_generation(overrides)  # extra_params may set them too
        probe_list = probes_of(probes)
        name = "+".join(sorted({p.id for p in probe_list}))
        out = settings.out
        path = (
            Path(out) if out is not None else default_results_path(name, model, settings.base_url)
        )
        return cls(
            probes=probe_list,
            settings=settings,
            overrides=overrides,
            choices=choices,
            path=path,
        )


async def arun(
    probes: str | Probe | Sequence[str | Probe],
    model: str | None,
    **options: Unpack[ProbeOptions],
) -> RunResult:
    """Async form of :func:`run` (use it with ``await`` inside a running event loop)."""
    r = ProbeRun.of(probes, model or "", dict(options))
    settings = r.settings
    design = settings.design
    arms = getattr(design, "arms", None)
    if arms:
        return await _run_arms(r, model, arms)
    if not isinstance(model, str) or not model:
        raise UsageError(
            f"give the model to run (e.g. local, openai/gpt-4o-mini), got {model!r}; only a "
            "design that names its own models (metrics.Race) runs without one"
        )
    jobs = jobs_of(
        r.probes,
        settings.planned_repeats(),
        r.overrides,
        constrained=r.choices.constrained,
        selection=r.choices.selection,
    )
    async with open_executor(settings) as executor:  # here, on Dask, or one shard
        if design is not None:
            source = Source(model, jobs, model, r.path, settings)
            return await run_design(design, [source], settings=settings, executor=executor)
        return await execute(jobs, model=model, out=r.path, settings=settings, executor=executor)


async def _run_arms(r: ProbeRun, model: str | None, arms: Sequence[Arm]) -> RunResult:
    """A design that names its own models (a race's systems): the same jobs for each, each
    into its own results file (``out`` with ``__<model>`` before the suffix)."""
    settings, design = r.settings, r.settings.design
    assert design is not None  # the caller found its arms
    if model is not None:
        raise UsageError(
            f"{design.name} names its own models ({', '.join(a.name for a in arms)}): give "
            "None as the model"
        )
    if settings.label is not None:
        raise UsageError(
            f"{design.name}: each system is named by its model; drop label={settings.label!r}"
        )
    name = "+".join(sorted({p.id for p in r.probes}))
    sources = []
    for arm in arms:
        repeats = arm.repeats if arm.repeats is not None else settings.planned_repeats()
        jobs = jobs_of(
            r.probes,
            repeats,
            r.overrides,
            constrained=r.choices.constrained,
            selection=r.choices.selection,
        )
        sources.append(arm_source(arm, jobs, settings, name))
    async with open_executor(settings) as executor:  # here, or on Dask
        return await run_design(design, sources, settings=settings, executor=executor)


def run(
    probes: str | Probe | Sequence[str | Probe],
    model: str | None,
    **options: Unpack[ProbeOptions],
) -> RunResult:
    """Run probes against a model and return their results rows with the facts of the run
    (:class:`jevalkit.runner.RunResult`: ``.rows``, ``.stopped``, ``.design``, ...).

    Works from a plain script and inside Jupyter (where an event loop is already running: the run
    then happens on a worker thread with its own loop, no nest_asyncio needed). Re-running the same
    call resumes: rows already in ``out`` are skipped.

    Args:
        probes: probe names (``"id@N"`` or ``"id"``) or :class:`Probe` objects.
        model: the model to ask (``"openai/gpt-4o-mini"``, ...; ``"local"`` for the embedded model);
            None for a design that names its own models (:class:`jevalkit.metrics.Race`:
            each system into its own results file, ``out`` with ``__<model>`` before the
            suffix, default ``runs/<probes>__<model>.jsonl``).
        **options: the keywords of :class:`jevalkit.runner.ProbeOptions`, each with its type
            and help: the generation parameters (:class:`jevalkit.client.GenerationOptions`:
            ``temperature``, ``max_tokens``, ``seed``, ``stop``, ``frequency_penalty``, ...),
            overriding the probe's (each case's repeat r is sent its own seed,
            :func:`jevalkit.client.request_seed`);
            what to send of each probe (:class:`jevalkit.runner.ProbeChoices`, below); and the
            run options shared with judges (:class:`jevalkit.runner.RunOptions`, further below).
        extra_params: more body fields (e.g. ``response_format``).
        constrained: send each probe's schema as ``response_format`` (constrained decoding).
        cases: for probes with cases, the 1-based positions to run (``"1-50"``,
            ``"1-10,20"``); default every case. Recorded in each row's ``subset``.
        sample, sample_seed: then a simple random sample of ``sample`` of them, drawn with
            ``sample_seed`` (default ``seed``; one of them is required).
        variants: ``"all"`` to send every wording of each probe (``base`` and its declared
            variants) or a list of variant ids; each row's ``variant`` says which. Default:
            the probe's own messages, ``variant`` null.
        run options: shared with judges (:class:`jevalkit.runner.RunOptions`, each with its
            default and help): ``base_url``, ``api_key_env``, ``out`` (default
            ``runs/<probes>__<model>[__<host>].jsonl``), ``label``, ``repeats`` (k),
            ``design`` (a :class:`jevalkit.results.Design` that decides what to send from the
            answers so far: :class:`jevalkit.stats.AdaptiveRepeats`, repeats in rounds until
            an anytime-valid interval is narrow enough; :class:`jevalkit.items.ActiveCases`, K
            cases of a benchmark drawn in waves from an item model;
            :class:`jevalkit.metrics.Race`, several systems on shared cases until their
            ranking is certified; its outcome is the result's ``design``; a re-run resumes
            the same draws), ``concurrency``,
            ``timeout``, ``max_retries``,
            ``max_response_bytes``, ``cache``, ``cache_dir``, ``retry_errors``, ``progress``,
            ``budget_usd`` / ``budget_requests`` (stop cleanly once this invocation has spent
            this much, counted per HTTP attempt, retries included; rows so far are kept,
            re-running resumes, the result's ``stopped`` says so; an endpoint that bills beyond
            ``max_tokens`` stops the run at once with ``budget_overrun`` True, see
            :mod:`jevalkit.costs`),
            ``price_in`` / ``price_out`` (dollars per million tokens, overriding
            ``data/prices.yaml``).

    Returns:
        A :class:`jevalkit.runner.RunResult`: ``rows``, the rows of this run's (probe, case,
        variant, repeat) keys with the columns of :data:`jevalkit.results.COLUMNS` (for a
        design, every row it sent), and the facts of the run (``stopped``,
        ``budget_overrun``, ``design``, ``dashboard``). Every
        statistic takes it as it takes the rows: ``metrics.pass_rate(run(...))``.

    Example:
        >>> import jevalkit, tempfile
        >>> result = jevalkit.run("schema-ten-records", "m", base_url="http://127.0.0.1:9/v1",
        ...                       max_retries=0, timeout=1, progress=False, cache=False,
        ...                       out=tempfile.mkdtemp() + "/r.jsonl")
        >>> result.rows.loc[0, "error"]["type"], result.stopped
        ('connection', None)
    """
    return run_sync(arun(probes, model, **options))
