"""A job: one results row to fill. Probes and judges plan jobs; the runner executes them.

A job knows its identity (the key columns and the provenance of what it evaluates), the
requests it needs, and how to turn their responses into row fields (:meth:`Job.perform`). It
never sees the client, the cache, the results file or the progress bar: it is handed a ``send``
function, and every completion it sends through it is recorded by the runner for the row's
provenance (resolved model, usage, latency, attempts, cache hits).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..client import Completion, Request
from ..results import KEY_COLUMNS

Send = Callable[[Request], Awaitable[Completion]]

# Row fields a job may return from perform(); everything else the runner fills itself.
JOB_FIELDS = frozenset(
    {
        "output",
        "score",
        "passed",
        "checks",
        "first_failing_item",
        "score_errors",
        "error",
        "probs",
        "expected_level",
        "verdict",
        "coverage",
        "method",
        "explanation",
        "source",
    }
)


@dataclass(frozen=True, kw_only=True)
class Job(ABC):
    """The identity of one row and how to fill it.

    Attributes:
        kind: ``probe`` or ``judge``.
        probe: the probe id or judge evaluator id.
        version: its version.
        probe_hash: sha256 of the probe or judge file's content.
        case_id: the case (a probe's case, a judge's case); None for a probe without cases.
        variant: the probe's wording (``base`` or a variant id) when the run asked for
            variants; else None.
        subset: how the run chose its cases when not all of them; else None.
        parameters: the configuration recorded in the row (the seed as sent for this repeat).
        params_hash: the hash of the configuration (the same for every repeat).
        repeat: the repeat index.
        gold: the gold label of the case, when it has one.
        needs_model: False for deterministic evaluators that send nothing.
        seeded: the job sends a seed and expects the same text for it every time (on the
            embedded model such jobs run one at a time: batching changes the numerics).
        system_a, system_b, position: the systems a pairwise game compares and which was shown
            first (``a_first`` / ``b_first``); None for other jobs.
        round: the wave of the design that sent the job (0 for a run without a design).
        design: the ``design`` column of its row (:meth:`jevalkit.results.Design.row_design`),
            when a design sent it.
    """

    kind: str
    probe: str
    version: int
    probe_hash: str | None
    case_id: str | None = None
    variant: str | None = None
    subset: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    params_hash: str
    repeat: int
    gold: Any = None
    needs_model: bool = True
    seeded: bool = False
    system_a: str | None = None
    system_b: str | None = None
    position: str | None = None
    round: int = 0
    design: dict[str, Any] | None = None

    def key(self, model: str, label: str | None) -> tuple:
        """The row key this job fills (see :data:`jevalkit.results.KEY_COLUMNS`).

        Example:
            >>> import jevalkit.runner
            >>> import jevalkit
            >>> job = jevalkit.runner.jobs_of([jevalkit.load_probe("schema-ten-records")], 1, {})[0]
            >>> job.key("m", None)
            ('schema-ten-records', 4, None, None, 'm', '...', None, None, None, None, 0)
        """
        values = {
            "system_a": self.system_a,
            "system_b": self.system_b,
            "position": self.position,
            "probe": self.probe,
            "version": self.version,
            "case_id": self.case_id,
            "variant": self.variant,
            "model": model,
            "params_hash": self.params_hash,
            "label": label,
            "repeat": self.repeat,
        }
        return tuple(values[c] for c in KEY_COLUMNS)

    @abstractmethod
    async def perform(self, send: Send) -> dict[str, Any]:
        """Send this job's requests through ``send`` and return its row fields (a subset of
        :data:`JOB_FIELDS`; ``error`` set when no usable answer came back). Never raises for
        anything an endpoint sends."""
