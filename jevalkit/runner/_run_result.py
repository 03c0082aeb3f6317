"""What a run returns: its results rows and the facts about the run beside them.

A run's rows are a results frame (the documented columns of :data:`jevalkit.results.COLUMNS`);
what is not a row (why it stopped early, a budget overrun, a design's outcome, the Dask
dashboard) is a named field of :class:`RunResult`, never in ``DataFrame.attrs``. Every
statistic takes a :class:`RunResult` where it takes a results frame, so
``metrics.pass_rate(run(...))`` reads its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..contract import RowsResult
from ..costs import Budget


@dataclass(frozen=True, eq=False)
class RunResult(RowsResult):
    """A run's result (:func:`jevalkit.run`, :func:`jevalkit.runner.judge`,
    :func:`jevalkit.runner.execute`, :func:`jevalkit.runner.run_design`): its rows and the
    facts about the run.

    Every statistic takes it where it takes a results frame (its ``rows``); ``.table()`` is the
    rows; in Jupyter it shows the facts and the first rows, every value escaped. It has no
    length and does not unpack: the rows are ``.rows``.

    Attributes:
        rows: the results rows (the columns of :data:`jevalkit.results.COLUMNS`, then
            ``system``): one per job of the run; for a design, every row it sent.
        stopped: why the run stopped early (a budget reached or overrun: the rows of the jobs
            done are kept, re-running resumes), else None.
        budget_overrun: an endpoint billed beyond ``max_tokens`` (the run stopped at once).
        design: with ``design=``: its outcome (a results object with ``.table()``: the
            interval of adaptive repeats, an active plan's estimate, a cascade's decisions, a
            race's certified ranks), else None.
        dashboard: the address of the Dask dashboard the run was spread from, else None.

    Example:
        >>> r = RunResult(pd.DataFrame({"passed": [True, False]}), stopped="stopped at the budget")
        >>> len(r.rows), r.stopped, r.budget_overrun, r.design is None
        (2, 'stopped at the budget', False, True)
        >>> r.scalars()["budget_overrun"], "<table" in r._repr_html_()
        (False, True)
    """

    stopped: str | None = None
    budget_overrun: bool = False
    design: Any = None
    dashboard: str | None = None

    @classmethod
    def of(cls, parts: Sequence[RunResult], budget: Budget, *, design: Any = None) -> RunResult:
        """One result of a run made of several calls of :func:`execute` (waves) under one
        ``budget``: their rows together, the budget's verdict, the last call's dashboard.

        Example:
            >>> one = RunResult(pd.DataFrame({"score": [1.0]}), dashboard="http://d")
            >>> r = RunResult.of([one, one], Budget(requests=5))
            >>> len(r.rows), r.stopped, r.dashboard
            (2, None, 'http://d')
        """
        rows = pd.concat([p.rows for p in parts], ignore_index=True) if parts else pd.DataFrame()
        return cls(
            rows,
            stopped=budget.reached,
            budget_overrun=budget.overrun is not None,
            design=design,
            dashboard=parts[-1].dashboard if parts else None,
        )
