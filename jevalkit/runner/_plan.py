"""What a run will send: one request per (probe, repeat), with its parameters and row key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..probes import Probe
from ._columns import params_hash

OVERRIDABLE = ("temperature", "max_tokens", "seed", "top_p")


@dataclass(frozen=True)
class Job:
    """One request of a run."""

    probe: Probe
    repeat: int
    parameters: dict[str, Any]  # the configuration: probe parameters with overrides
    sent: dict[str, Any]  # what is sent for this repeat (the seed advanced by the repeat index)
    params_hash: str

    def key(self, model: str, label: str | None) -> tuple:
        """The row key this job fills (see :data:`jevalkit.runner.KEY_COLUMNS`)."""
        p = self.probe
        return (p.id, p.version, None, model, self.params_hash, label, self.repeat)


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
        raise ValueError(f"{probe.name} is not scored by a JSON Schema; it cannot be constrained")
    return {"type": "json_object", "schema": probe.scoring["schema"]}


def plan_jobs(
    probes: list[Probe], repeats: int, overrides: dict[str, Any], *, constrained: bool = False
) -> list[Job]:
    """Every (probe, repeat) request. With a ``seed``, repeat r is sent ``seed + r`` so repeats
    are independent samples that are still reproducible. ``constrained`` adds each probe's
    schema as ``response_format`` (recorded in the parameters like any other).

    Example:
        >>> import jevalkit
        >>> jobs = plan_jobs([jevalkit.load_probe("schema-ten-records")], 3, {"seed": 10})
        >>> [j.sent["seed"] for j in jobs], len({j.params_hash for j in jobs})
        ([10, 11, 12], 1)
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    jobs = []
    for probe in probes:
        params = effective_parameters(probe, overrides)
        if constrained:
            params["response_format"] = constrained_format(probe)
        digest = params_hash(params)
        for r in range(repeats):
            sent = dict(params)
            if "seed" in sent:
                sent["seed"] = int(sent["seed"]) + r
            jobs.append(Job(probe, r, params, sent, digest))
    return jobs


def default_results_path(probes: list[Probe], model: str, root: Path = Path("runs")) -> Path:
    """``runs/<probe ids>__<model>.jsonl``: the same command always resumes the same file.

    Example:
        >>> import jevalkit
        >>> default_results_path([jevalkit.load_probe("schema-ten-records")], "openai/gpt-4o")
        PosixPath('runs/schema-ten-records__openai-gpt-4o.jsonl')
    """
    ids = "+".join(sorted({p.id for p in probes}))
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")
    return root / f"{ids}__{slug}.jsonl"
