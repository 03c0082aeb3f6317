"""What a probe run will send: one job per (probe, case, variant, repeat), with its parameters
and row key."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

from ..client import CHAT, COMPLETIONS, DEFAULT_BASE_URL, Request, check_generation, request_seed
from ..errors import UsageError
from ..probes import Case, Probe, load_probe, select_cases
from ..results import MAX_REPEATS, params_hash
from ._job import Job, Send


def score_fields(probe: Probe, text: str, case: Case | None = None) -> dict[str, Any]:
    """Row fields of a probe's score of ``text`` for ``case`` (the scorer never raises on any
    string).

    Example:
        >>> import jevalkit
        >>> score_fields(jevalkit.load_probe("schema-ten-records"), "[]")["passed"]
        False
    """
    score = probe.score(text, case)
    return {
        "output": text,
        "score": score.value,
        "passed": score.passed,
        "checks": [c.__dict__ for c in score.checks],
        "first_failing_item": score.first_failing_item,
        "score_errors": list(score.errors),
    }


@dataclass(frozen=True, kw_only=True)
class ProbeJob(Job):
    """One request of a probe run, scored by the probe's deterministic scorer."""

    spec: Probe
    request: Request
    case: Case | None = None

    async def perform(self, send: Send) -> dict[str, Any]:
        """Send the probe's messages (filled from the case) and score the answer."""
        completion = await send(self.request)
        if not completion.ok:
            return {"error": completion.error}
        return score_fields(self.spec, completion.text or "", self.case)


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which cases and wordings of each probe a run sends.

    Attributes:
        cases: 1-based positions (``"1-50"``, ``"1-10,20"``); None for every case.
        sample: then a simple random sample of this many of them, drawn with ``sample_seed``.
        sample_seed: the seed of the draw (the same seed, the same cases).
        variants: None (the probe's own messages; rows carry no variant), ``"all"`` (``base``
            and every declared variant), or a list of variant ids (``base`` is the probe's own).

    Example:
        >>> import jevalkit
        >>> probe = jevalkit.load_probe("unit-conversion")
        >>> units, subset = Selection(cases="1-3").units(probe)
        >>> [(c.id, v) for c, v in units], subset
        ([('km-to-m-1', None), ('km-to-m-2', None), ('km-to-m-3', None)], 'cases 1-3 of 40')
    """

    cases: str | None = None
    sample: int | None = None
    sample_seed: int | None = None
    variants: str | list[str] | tuple[str, ...] | None = None

    def variant_ids(self, probe: Probe) -> list[str | None]:
        """The variants of ``probe`` to send (``[None]``: its own messages, no variant)."""
        if self.variants is None:
            return [None]
        if self.variants == "all":
            return list(probe.variant_ids)
        wanted = [self.variants] if isinstance(self.variants, str) else list(self.variants)
        if not wanted:
            raise UsageError("variants: give 'all' or at least one variant id")
        for v in wanted:
            if v not in probe.variant_ids:
                raise UsageError(
                    f"variants: {probe.name} has no variant {v!r}; it has "
                    f"{', '.join(probe.variant_ids)}"
                )
        return list(dict.fromkeys(wanted))

    def units(self, probe: Probe) -> tuple[list[tuple[Case | None, str | None]], str | None]:
        """Every (case, variant) of ``probe`` to send, and how its cases were chosen."""
        cases: tuple[Case | None, ...]
        if probe.cases:
            cases, subset = select_cases(
                probe.cases, cases_spec=self.cases, sample=self.sample, seed=self.sample_seed
            )
        elif self.cases is not None or self.sample is not None:
            raise UsageError(f"--cases/--sample: {probe.name} has no cases to choose from")
        else:
            cases, subset = (None,), None
        return [(c, v) for c in cases for v in self.variant_ids(probe)], subset


class ProbeChoices(TypedDict, total=False):
    """What a probe run sends of each probe, besides its generation parameters: the keywords
    of ``run``, ``arun`` and ``plan`` that become its :class:`Selection` and its request body.

    Attributes:
        cases, sample, sample_seed, variants: as :class:`Selection` (``sample_seed`` defaults
            to the run's ``seed``). An active plan (the command line's ``--cases active:K``)
            is a design: ``design=jevalkit.items.ActiveCases(...)``.
        extra_params: more body fields (e.g. ``response_format``).
        constrained: send each probe's schema as ``response_format`` (constrained decoding).
    """

    cases: str | None
    sample: int | None
    sample_seed: int | None
    variants: str | Sequence[str] | None
    extra_params: dict[str, Any] | None
    constrained: bool


@dataclass(frozen=True, kw_only=True)
class Choices:
    """:class:`ProbeChoices` taken out of a run's keywords (:meth:`take`)."""

    selection: Selection
    extra_params: dict[str, Any]
    constrained: bool

    @classmethod
    def take(cls, options: dict[str, Any], seed: int | None) -> Choices:
        """Remove the :class:`ProbeChoices` keywords from ``options``; ``seed``: the run's.

        Example:
            >>> options = {"cases": "1-3", "concurrency": 2}
            >>> Choices.take(options, seed=4).selection.sample_seed, options
            (4, {'concurrency': 2})
        """
        taken = {
            name: options.pop(name) for name in ProbeChoices.__annotations__ if name in options
        }
        sample_seed = taken.get("sample_seed")
        cases = taken.get("cases")
        if isinstance(cases, str) and cases.startswith("active:"):
            raise UsageError(
                f"cases={cases!r} is the command line's way to ask for an active plan; in "
                "Python give design=jevalkit.items.ActiveCases(k=..., prior=fit)"
            )
        selection = Selection(
            cases=taken.get("cases"),
            sample=taken.get("sample"),
            sample_seed=seed if sample_seed is None else sample_seed,
            variants=taken.get("variants"),
        )
        return cls(
            selection=selection,
            extra_params=dict(taken.get("extra_params") or {}),
            constrained=bool(taken.get("constrained", False)),
        )


def probes_of(probes: str | Probe | Sequence[str | Probe]) -> list[Probe]:
    """The probes a run names: ids (``"id@N"`` or ``"id"``) loaded, :class:`Probe` objects kept.

    Example:
        >>> [p.name for p in probes_of("schema-ten-records@2")]
        ['schema-ten-records@2']
    """
    names = [probes] if isinstance(probes, str | Probe) else list(probes)
    return [p if isinstance(p, Probe) else load_probe(p) for p in names]


def effective_parameters(probe: Probe, overrides: dict[str, Any]) -> dict[str, Any]:
    """The probe's parameters with the non-None overrides applied.

    Example:
        >>> import jevalkit
        >>> effective_parameters(jevalkit.load_probe("schema-ten-records"), {"max_tokens": 300, "seed": None})
        {'max_tokens': 300, 'temperature': 0}
    """
    params = dict(probe.parameters)
    params.update({k: v for k, v in overrides.items() if v is not None})
    return params


def constrained_format(probe: Probe) -> dict[str, Any]:
    """``response_format`` asking the endpoint to constrain decoding to the probe's JSON Schema
    (llama.cpp, vLLM and others turn it into a grammar).

    Example:
        >>> import jevalkit
        >>> constrained_format(jevalkit.load_probe("schema-ten-records"))["type"]
        'json_object'
    """
    if probe.scoring["type"] != "json_schema":
        raise UsageError(
            f"{probe.name} is scored by {probe.scoring['type']}, not a JSON Schema: it cannot be "
            "constrained; drop --constrained"
        )
    return {"type": "json_object", "schema": probe.scoring["schema"]}


def jobs_of(
    probes: list[Probe],
    repeats: int,
    overrides: dict[str, Any],
    *,
    constrained: bool = False,
    selection: Selection | None = None,
) -> list[ProbeJob]:
    """Every (probe, case, variant, repeat) request. With a ``seed``, each case's repeat r is sent
    a seed of its own (:func:`jevalkit.client.request_seed`; ``seed + r`` for a probe without
    cases), so cases and repeats are independent samples that are still reproducible.
    ``constrained`` adds each probe's schema as ``response_format`` (recorded in the parameters
    like any other); ``selection`` chooses cases and variants.

    Example:
        >>> import jevalkit
        >>> jobs = jobs_of([jevalkit.load_probe("schema-ten-records")], 3, {"seed": 10})
        >>> [j.parameters["seed"] for j in jobs], len({j.params_hash for j in jobs})
        ([10, 11, 12], 1)
        >>> jobs = jobs_of([jevalkit.load_probe("unit-conversion")], 2, {})
        >>> len(jobs), jobs[0].case_id, jobs[1].repeat
        (80, 'km-to-m-1', 1)
    """
    check_repeats(repeats)
    selection = selection or Selection()
    jobs = []
    for probe in probes:
        params = probe_parameters(probe, overrides, constrained=constrained)
        units, subset = selection.units(probe)
        for case, variant in units:
            filled = probe.request_input(case, variant)  # filled once, shared by the repeats
            jobs += [
                probe_job(
                    probe, params, r, case=case, variant=variant, subset=subset, filled=filled
                )
                for r in range(repeats)
            ]
    return jobs


def probe_parameters(
    probe: Probe, overrides: dict[str, Any], *, constrained: bool = False
) -> dict[str, Any]:
    """The parameters a probe is sent with: its own (the generation parameters among them
    checked against :data:`jevalkit.client.GENERATION`), the overrides, and with ``constrained``
    its schema as ``response_format``.

    Example:
        >>> import jevalkit
        >>> sorted(probe_parameters(jevalkit.load_probe("schema-ten-records"), {}, constrained=True))
        ['max_tokens', 'response_format', 'temperature']
    """
    check_generation(probe.parameters, where=f"{probe.name}: parameters")
    params = effective_parameters(probe, overrides)
    if constrained:
        params["response_format"] = constrained_format(probe)
    return params


def probe_job(
    probe: Probe,
    params: dict[str, Any],
    repeat: int,
    round: int = 0,
    *,
    case: Case | None = None,
    variant: str | None = None,
    subset: str | None = None,
    filled: dict[str, Any] | None = None,
) -> ProbeJob:
    """The job of one repeat of a probe's case in one wording (with a seed, the seed
    :func:`jevalkit.client.request_seed` derives for the case, wording and repeat): a chat request, or a completion request for a completion-style probe.
    ``filled``: the probe's :meth:`~jevalkit.probes.Probe.request_input` when the caller has it.

    Example:
        >>> import jevalkit
        >>> job = probe_job(jevalkit.load_probe("schema-ten-records"), {"seed": 5}, 2, round=1)
        >>> job.parameters["seed"], job.repeat, job.round, job.case_id
        (7, 2, 1, None)
    """
    sent = dict(params)
    if "seed" in sent:
        sent["seed"] = request_seed(
            sent["seed"], repeat, case.id if case is not None else None, variant
        )
    if filled is None:
        filled = probe.request_input(case, variant)
    body = {**filled, **sent}
    return ProbeJob(
        kind="probe",
        probe=probe.id,
        version=probe.version,
        probe_hash=probe.content_hash,
        case_id=None if case is None else case.id,
        variant=variant,
        subset=subset,
        gold=None if case is None else case.gold,
        parameters=sent,
        params_hash=params_hash(params),
        repeat=repeat,
        round=round,
        seeded="seed" in sent,
        spec=probe,
        case=case,
        request=Request(COMPLETIONS if probe.prompt_style == "completion" else CHAT, body, repeat),
    )


def check_repeats(repeats: Any) -> None:
    """Refuse a repeat count that is not a whole number from 1 to
    :data:`jevalkit.results.MAX_REPEATS` (checked before a job is planned).

    Example:
        >>> check_repeats(0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: repeats must be a whole number of at least 1 or 'auto', got 0
        >>> check_repeats(10**9)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: repeats must be a whole number from 1 to 10,000 or 'auto', got 1000000000
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise UsageError(f"repeats must be a whole number of at least 1 or 'auto', got {repeats!r}")
    if repeats > MAX_REPEATS:
        raise UsageError(
            f"repeats must be a whole number from 1 to {MAX_REPEATS:,} or 'auto', got {repeats!r}"
        )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def default_results_path(
    name: str, model: str | None, base_url: str | None = None, root: Path = Path("runs")
) -> Path:
    """``runs/<name>__<model>[__<host>].jsonl``: the same command always resumes the same file,
    and a run against another endpoint gets a file of its own (the host is added when the base
    URL is given and is not the default one).

    Example:
        >>> default_results_path("schema-ten-records", "openai/gpt-4o")
        PosixPath('runs/schema-ten-records__openai-gpt-4o.jsonl')
        >>> default_results_path("judge__faithfulness", "m", "http://127.0.0.1:8123/v1")
        PosixPath('runs/judge__faithfulness__m__127.0.0.1-8123.jsonl')
    """
    parts = [name, _slug(model or "deterministic")]
    if base_url and base_url.rstrip("/") != DEFAULT_BASE_URL:
        try:
            where = urlsplit(base_url)
            parts.append(_slug(f"{where.hostname or ''}-{where.port or ''}"))
        except ValueError:
            parts.append(_slug(base_url))
    return root / ("__".join(parts) + ".jsonl")
