"""The sources of a design that names its own models (its ``arms``: a cascade's judges, a
race's systems): each arm's jobs into a results file of its own, at its own endpoint."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ..client import check_file_endpoint
from ..results import Arm
from ._design_run import Source
from ._job import Job
from ._options import RunSettings
from ._plan import default_results_path


def arm_source(arm: Arm, jobs: Sequence[Job], settings: RunSettings, name: str) -> Source:
    """One arm a design names, planned ``jobs``: its results file beside ``settings.out``
    (:func:`results_path_for`), else ``runs/<name>__<arm>[__<host>].jsonl``, and its endpoint
    (the caller's ``base_url`` wins over the arm's; an endpoint named only in a file, such as a
    cascade file's, is refused when a key would go there unconfirmed:
    :func:`jevalkit.client.check_file_endpoint`).

    Example:
        >>> source = arm_source(Arm("big", "m"), [], RunSettings(out="runs/r.jsonl"), "p")
        >>> source.name, source.model, source.out.as_posix()
        ('big', 'm', 'runs/r__big.jsonl')
    """
    if arm.base_url and settings.base_url is None and arm.endpoint_from != "caller":
        # an endpoint only a file names gets no key the user did not send there
        check_file_endpoint(arm.base_url, arm.endpoint_from, api_key_env=settings.api_key_env)
    base_url = settings.base_url or arm.base_url
    out = (
        results_path_for(settings.out, arm.name)
        if settings.out is not None
        else default_results_path(name, arm.name, base_url)
    )
    mine = dataclasses.replace(settings, base_url=base_url, out=out)
    return Source(arm.name, jobs, arm.model, Path(out), mine)


def results_path_for(out: str | Path, name: str) -> Path:
    """One model's results file beside ``out``: ``__<name>`` before the suffix, the name's
    characters other than letters, digits, ``-``, ``_`` and ``.`` written as ``_``.

    Example:
        >>> results_path_for("runs/judged.jsonl", "local[prompt_style=chat]").as_posix()
        'runs/judged__local_prompt_style_chat_.jsonl'
    """
    out_path = Path(out)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return out_path.with_name(f"{out_path.stem}__{safe}{out_path.suffix or '.jsonl'}")
