"""What a run returns: its results rows and the facts about the run beside them.

A run's rows are a results frame (the documented columns of :data:`jevalkit.results.COLUMNS`);
what is not a row (why it stopped early, a budget overrun, the adaptive repeats' interval, an
active plan's estimate, the Dask dashboard) is a named field of :class:`RunResult`, never in
``DataFrame.attrs``. Every statistic takes a :class:`RunResult` where it takes a results frame,
so ``metrics.pass_rate(run(...))`` reads its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from ..contract import Result, RowsResult
from ..costs import Budget
from ..items import ActivePlan


@dataclass(frozen=True, eq=False)
class ActiveRun(Result):
    """An active plan's run (``cases="active:K"``): the estimate and the plan behind it.

    Attributes:
        estimate: one row of :data:`jevalkit.runner.ACTIVE_COLUMNS`: the full-benchmark score
            from the draws answered in order, its interval, and why the plan stopped.
        plan: the plan as drawn last (:class:`jevalkit.items.ActivePlan`: its draws, each
            case's probability).
    """

    estimate: pd.DataFrame
    plan: ActivePlan = field(repr=False)

    def table(self) -> pd.DataFrame:
        """The estimate (one row)."""
        return self.estimate


@dataclass(frozen=True, eq=False)
class RunResult(RowsResult):
    """A run's result (:func:`jevalkit.run`, :func:`jevalkit.judges.judge`,
    :func:`jevalkit.runner.execute`): its rows and the facts about the run.

    Every statistic takes it where it takes a results frame (its ``rows``); ``.table()`` is the
    rows; in Jupyter it shows the facts and the first rows, every value escaped. It has no
    length and does not unpack: the rows are ``.rows``.

    Attributes:
        rows: the results rows (the columns of :data:`jevalkit.results.COLUMNS`, then
            ``system``): one per job of the run; for adaptive repeats and active plans, every
            row sent.
        stopped: why the run stopped early (a budget reached or overrun: the rows of the jobs
            done are kept, re-running resumes), else None.
        budget_overrun: an endpoint billed beyond ``max_tokens`` (the run stopped at once).
        adaptive: with ``repeats="auto"``: one row of :data:`jevalkit.runner.ADAPTIVE_COLUMNS`
            (the anytime-valid interval, the rounds, why it stopped), else None.
        active: with ``cases="active:K"``: the estimate and the plan (:class:`ActiveRun`),
            else None.
        dashboard: the address of the Dask dashboard the run was spread from, else None.

    Example:
        >>> r = RunResult(pd.DataFrame({"passed": [True, False]}), stopped="stopped at the budget")
        >>> len(r.rows), r.stopped, r.budget_overrun, r.adaptive is None
        (2, 'stopped at the budget', False, True)
        >>> r.scalars()["budget_overrun"], "<table" in r._repr_html_()
        (False, True)
    """

    stopped: str | None = None
    budget_overrun: bool = False
    adaptive: pd.DataFrame | None = None
    active: ActiveRun | None = None
    dashboard: str | None = None

    @classmethod
    def of(
        cls,
        parts: Sequence[RunResult],
        budget: Budget,
        *,
        adaptive: pd.DataFrame | None = None,
        active: ActiveRun | None = None,
    ) -> RunResult:
        """One result of a run made of several calls of :func:`execute` (rounds, waves) under
        one ``budget``: their rows together, the budget's verdict, the last call's dashboard.

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
            adaptive=adaptive,
            active=active,
            dashboard=parts[-1].dashboard if parts else None,
        )
