"""Run probes against a model: plan one job per (probe, case, variant, repeat) and execute them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Unpack

from .._sync import run_sync
from ..client import GENERATION, check_generation, take_generation
from ..errors import UsageError
from ..probes import Probe
from ._active_cases import ActiveCases, active_cases, run_active_cases
from ._execute import execute
from ._executors import open_executor
from ._options import ProbeOptions, RunSettings
from ._plan import Choices, ProbeChoices, default_results_path, jobs_of, probes_of
from ._rounds import run_adaptive
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
        active: the active plan ``cases="active:K"`` asks for (its jobs are planned for every
            case; the plan chooses which to send), else None.

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
    active: ActiveCases | None = None

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
        selection = choices.selection
        active = active_cases(
            selection.cases,
            choices.prior,
            seed=selection.sample_seed,
            target_half_width=settings.target_half_width,
        )
        settings.check_target(active=active is not None)
        if active is not None:
            if selection.sample is not None or selection.variants is not None:
                raise UsageError(
                    "--cases active:K chooses the cases itself: drop --sample and --variants"
                )
            if settings.repeats == "auto" or settings.adaptive is not None:
                raise UsageError(
                    "--cases active:K runs fixed repeats of each drawn case: drop --repeats auto"
                )
            if settings.shard is not None:
                raise UsageError(
                    "--cases active:K draws each wave from the answers to the last: one process "
                    "runs the plan, not shards of it; drop --shard"
                )
            choices = replace(choices, selection=replace(selection, cases=None))
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
            active=active,
        )


async def arun(
    probes: str | Probe | Sequence[str | Probe], model: str, **options: Unpack[ProbeOptions]
) -> RunResult:
    """Async form of :func:`run` (use it with ``await`` inside a running event loop)."""
    r = ProbeRun.of(probes, model, dict(options))
    settings = r.settings
    adaptive = settings.adaptive_plan()
    repeats = adaptive.max_repeats if adaptive else settings.repeats
    jobs = jobs_of(
        r.probes,
        repeats,
        r.overrides,
        constrained=r.choices.constrained,
        selection=r.choices.selection,
    )
    async with open_executor(settings) as executor:  # here, on Dask, or one shard
        if r.active is not None:
            return await run_active_cases(
                jobs, r.active, model=model, out=r.path, settings=settings, executor=executor
            )
        if adaptive is not None:
            return await run_adaptive(
                jobs, adaptive, model=model, out=r.path, settings=settings, executor=executor
            )
        return await execute(jobs, model=model, out=r.path, settings=settings, executor=executor)


def run(
    probes: str | Probe | Sequence[str | Probe], model: str, **options: Unpack[ProbeOptions]
) -> RunResult:
    """Run probes against a model and return their results rows with the facts of the run
    (:class:`jevalkit.runner.RunResult`: ``.rows``, ``.stopped``, ``.adaptive``, ...).

    Works from a plain script and inside Jupyter (where an event loop is already running: the run
    then happens on a worker thread with its own loop, no nest_asyncio needed). Re-running the same
    call resumes: rows already in ``out`` are skipped.

    Args:
        probes: probe names (``"id@N"`` or ``"id"``) or :class:`Probe` objects.
        model: the model to ask (``"openai/gpt-4o-mini"``, ...; ``"local"`` for the embedded model).
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
            ``"active:K"``: an active plan (:func:`jevalkit.items.select` with
            ``method="active"``): K cases drawn in waves from the item model ``prior``, each
            wave from the model's answers so far, the estimate of its full-benchmark score and
            the plan in the result's ``active`` (:class:`jevalkit.runner.ActiveRun`); each row's
            ``subset`` names the plan and the probability its case had when drawn; a re-run
            resumes the same draws. With ``target_half_width`` the plan stops after the first
            wave whose anytime-valid interval is at most that wide on each side (K the most
            it draws), and reports that interval.
        prior: with ``cases="active:K"``: the item model (:func:`jevalkit.items.fit_irt`,
            or the path of one written by ``IrtFit.save``) fitted on past systems' results
            of the same probes and versions.
        sample, sample_seed: then a simple random sample of ``sample`` of them, drawn with
            ``sample_seed`` (default ``seed``; one of them is required).
        variants: ``"all"`` to send every wording of each probe (``base`` and its declared
            variants) or a list of variant ids; each row's ``variant`` says which. Default:
            the probe's own messages, ``variant`` null.
        run options: shared with judges (:class:`jevalkit.runner.RunOptions`, each with its
            default and help): ``base_url``, ``api_key_env``, ``out`` (default
            ``runs/<probes>__<model>[__<host>].jsonl``), ``label``, ``repeats`` (k, or
            ``"auto"``: adaptive repeats in rounds until the anytime-valid interval of the pass
            rate over the cases is at most ``target_half_width`` wide on each side, with
            ``min_repeats`` to ``max_repeats`` per probe, or as ``adaptive`` says; the interval
            is the result's ``adaptive``), ``target_half_width`` (0.03 for adaptive repeats;
            an active plan's stop, see ``cases``), ``concurrency``, ``timeout``, ``max_retries``,
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
        variant, repeat) keys with the columns of :data:`jevalkit.results.COLUMNS` (for
        adaptive repeats and active plans, every row sent), and the facts of the run
        (``stopped``, ``budget_overrun``, ``adaptive``, ``active``, ``dashboard``). Every
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
