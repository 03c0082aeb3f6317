"""The one loop that runs a design (:class:`jevalkit.results.Design`): plan every job once, send
what the design names wave by wave through the one execution path, and hand back its outcome.

A run's jobs come from one or more *sources* (:class:`Source`): a model with its planned jobs,
its results file and its settings (one for a probe run; one per judge for a cascade; one per
system for a race). The design sees them all as candidates (the results layer's
:data:`~jevalkit.results.CANDIDATE_COLUMNS`), names the next wave, and sees the wave's rows
(each with its ``candidate``). Each wave is one call of :func:`execute` per source it touches,
under one budget, with the executor the run was opened with (this process or Dask), so resume,
the lock, the budget and the Dask waves are the same as for every run. A design decides from
all of its rows, so a run of one is not split into ``--shard``s.

Before anything is sent, the rows already stored for the candidates are checked: a weighted
design (rows drawn with unequal probabilities) resumes only its own rows, a design with
``own_rows`` (a race) no other design's, and no design reuses rows a weighted design drew; each
way the run is refused naming both designs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import UsageError
from ..local import is_local_model
from ..results import (
    ROW_POSITION,
    Design,
    Stop,
    check_candidates,
    check_wave,
    latest_rows,
    row_key,
)
from ._execute import Executor, execute
from ._job import Job
from ._options import RunSettings
from ._run_result import RunResult
from ._target import open_target


@dataclass(frozen=True)
class Source:
    """One answerer of a design's candidates.

    Attributes:
        name: how the candidates name it (``source``): the model, a judge's name, a system.
        jobs: its planned jobs (every row it may be asked to fill).
        model: the model that answers (None: deterministic jobs, nothing sent).
        out: its results file.
        settings: how its requests are sent (endpoint, label, concurrency, ...); the budget is
            the run's, not the source's.

    Example:
        >>> Source("m", [], "m", Path("r.jsonl"), RunSettings()).name
        'm'
    """

    name: str
    jobs: Sequence[Job]
    model: str | None
    out: Path
    settings: RunSettings


def candidates_of(sources: Sequence[Source]) -> tuple[pd.DataFrame, list[tuple[Source, Job]]]:
    """The candidates of ``sources`` (one row per planned job, in order) and each candidate's
    source and job.

    Example:
        >>> import jevalkit
        >>> from jevalkit.runner import jobs_of
        >>> jobs = jobs_of([jevalkit.load_probe("schema-ten-records")], 2, {})
        >>> frame, _ = candidates_of([Source("m", jobs, "m", Path("r.jsonl"), RunSettings())])
        >>> frame[["source", "probe", "repeat"]].values.tolist()
        [['m', 'schema-ten-records', 0], ['m', 'schema-ten-records', 1]]
    """
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise UsageError(f"a design's sources are named once each, got {names}")
    # two names may write one file (``x/y`` and ``x_y`` are both ``__x_y``; ``A`` and ``a`` on a
    # case-insensitive disk): each source keeps its own file, or its rows are no longer its own
    seen: dict[str, str] = {}
    for source in sources:
        where = os.path.normcase(os.path.abspath(source.out)).casefold()
        if where in seen:
            raise UsageError(
                f"{seen[where]!r} and {source.name!r} would write one results file "
                f"({source.out}): name one of them differently (the file name keeps letters, "
                "digits, '-', '_' and '.', and may ignore case)"
            )
        seen[where] = source.name
    records, owners = [], []
    for source in sources:
        for job in source.jobs:
            records.append(
                {
                    "source": source.name,
                    "probe": job.probe,
                    "version": job.version,
                    "case_id": job.case_id,
                    "variant": job.variant,
                    "system_a": job.system_a,
                    "system_b": job.system_b,
                    "position": job.position,
                    "repeat": job.repeat,
                }
            )
            owners.append((source, job))
    return check_candidates(pd.DataFrame(records)), owners


def refuse_other_designs(design: Design, owners: Sequence[tuple[Source, Job]]) -> None:
    """Refuse stored rows of these candidates that another design drew when either design is
    weighted: resuming them would read one design's draws under the other's probabilities."""
    by_path: dict[Path, list[tuple[Source, Job]]] = {}
    for source, job in owners:
        by_path.setdefault(source.out, []).append((source, job))
    for path, mine in by_path.items():
        if not path.exists():
            continue
        stored = latest_rows(path).rows
        for source, job in mine:
            row = stored.get(job.key(source.model or "deterministic", source.settings.label))
            if row is None:
                continue
            theirs = row.get("design") if isinstance(row.get("design"), Mapping) else None
            name = theirs.get("name") if theirs else None
            if name == design.name:
                continue
            drew = f"the design {name!r}" if name else "a run without a design"
            if design.weighted or (theirs is not None and theirs.get("weighted")):
                raise UsageError(
                    f"{path}: holds rows of these cases drawn by {drew}, not by {design.name!r}: "
                    "their probabilities differ, so the file would no longer say how its rows "
                    "were drawn; write this design to another --out (or run that one again)"
                )
            if design.own_rows and theirs is not None:
                raise UsageError(
                    f"{path}: holds rows drawn by {drew}, not by {design.name!r}: its guarantee "
                    "holds for one question fixed before the first row, not for one changed "
                    "after an answer was seen; run that one again, or write this to another --out"
                )


@contextlib.contextmanager
def _kept_up(sources: Sequence[Source]) -> Iterator[None]:
    """Keep the embedded model up across the waves (started once, not once per wave)."""
    with contextlib.ExitStack() as stack:
        for source in sources:
            s = source.settings
            if source.model is not None and is_local_model(source.model) and s.base_url is None:
                stack.enter_context(open_target(source.model, None))
                break
        yield


async def run_design(
    design: Design,
    sources: Sequence[Source],
    *,
    settings: RunSettings,
    executor: Executor | None = None,
    description: str = "requests",
) -> RunResult:
    """Run ``design`` over the jobs of ``sources``: every wave it names is sent (resumed rows
    are not sent again), its rows shown to it, until it stops or ``settings``' budget is
    reached; return every row sent with the design's outcome in the result's ``design``.

    Raises:
        UsageError: the design refuses the candidates, or the results files hold rows of them
            that another weighted design drew.
    """
    if settings.shard is not None:
        raise UsageError(
            f"{design.name}: a design decides each wave from all of its rows; run it in one "
            "process or on Dask (--scheduler or --workers), not as --shard"
        )
    candidates, owners = candidates_of(sources)
    design.start(candidates, in_flight=settings.concurrency)
    refuse_other_designs(design, owners)
    budget = settings.new_budget()
    parts: list[RunResult] = []
    frames: list[pd.DataFrame] = []
    rows = pd.DataFrame({ROW_POSITION: pd.Series(dtype=int)})
    sent: set[int] = set()
    stop: str | None = None
    waves = 0
    with _kept_up(sources):
        while stop is None:
            step = check_wave(design.next(rows), len(candidates), sent)
            if isinstance(step, Stop):
                stop = step.reason
                break
            by_source: dict[str, list[tuple[int, Job]]] = {}
            for i, position in enumerate(step.rows):
                source, job = owners[position]
                job = dataclasses.replace(
                    job,
                    round=waves,
                    design=design.row_design(step.note(i)),
                    subset=design.subset or job.subset,
                )
                by_source.setdefault(source.name, []).append((position, job))
            for name, chosen in by_source.items():
                source = next(s for s in sources if s.name == name)
                label = f"{description}, {step.label or f'wave {waves}'}"
                part = await execute(
                    [job for _, job in chosen],
                    model=source.model,
                    out=source.out,
                    settings=source.settings,
                    description=label if len(sources) == 1 else f"{label}, {name}",
                    budget=budget,
                    executor=executor,
                )
                parts.append(part)
                where = {
                    job.key(source.model or "deterministic", source.settings.label): p
                    for p, job in chosen
                }
                positions = [where[row_key(r)] for r in part.rows.to_dict("records")]
                frames.append(part.rows.assign(**{ROW_POSITION: positions}))
                if part.stopped:
                    stop = "budget"
                    break
            sent |= set(step.rows)
            rows = pd.concat(frames, ignore_index=True)
            waves += 1
    outcome: Any = design.outcome(rows, stop)
    return RunResult.of(parts, budget, design=outcome)
