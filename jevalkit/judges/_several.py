"""Several judge models over the same outputs: the judge model as a facet of the results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import UsageError
from ..runner import RunResult
from ._run import judge


def judge_models(
    evaluator: str,
    data: Any,
    models: list[str],
    *,
    out: str | Path | None = None,
    **options: Any,
) -> RunResult:
    """Judge the same cases with each of ``models`` in turn (each its own results file: ``out``
    with ``__<model>`` before the suffix) and return the rows together, so the judge model is a
    facet for :func:`jevalkit.stats.variance_components` (``facets=["case", "model"]``).

    ``options`` are :func:`judge`'s (repeats, base_url, config, ...), the same for every model
    (a budget holds for each model's run). The result's ``stopped`` names each model a budget
    stopped (``"<model>: <why>"``, joined by ``"; "``), ``budget_overrun`` is any model's, and
    with ``repeats="auto"`` ``adaptive`` has one row per model (``model`` first).

    Example:
        >>> judge_models("tool_call_accuracy", "tool_call_accuracy", ["a", "a"])
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: models lists judge models once each, got ['a', 'a']
    """
    if len(models) < 1 or len(set(models)) != len(models):
        raise UsageError(f"models lists judge models once each, got {list(models)!r}")
    if not all(isinstance(m, str) and m for m in models):
        raise UsageError(f"models must be model names, got {list(models)!r}")
    runs = []
    for name in models:
        path = None if out is None else results_path_for(out, name)
        runs.append(judge(evaluator, data, name, out=path, **options))
    named = list(zip(models, runs, strict=True))
    adaptive = [r.adaptive.assign(model=m) for m, r in named if r.adaptive is not None]
    return RunResult(
        pd.concat([r.rows for r in runs], ignore_index=True),
        stopped="; ".join(f"{m}: {r.stopped}" for m, r in named if r.stopped) or None,
        budget_overrun=any(r.budget_overrun for r in runs),
        adaptive=(
            pd.concat(adaptive, ignore_index=True).pipe(lambda t: t[["model", *t.columns[:-1]]])
            if adaptive
            else None
        ),
        dashboard=runs[-1].dashboard,
    )


def results_path_for(out: str | Path, name: str) -> Path:
    """One judge's results file beside ``out``: ``__<name>`` before the suffix, the name's
    characters other than letters, digits, ``-``, ``_`` and ``.`` written as ``_``.

    Example:
        >>> results_path_for("runs/judged.jsonl", "local[prompt_style=chat]").as_posix()
        'runs/judged__local_prompt_style_chat_.jsonl'
    """
    out_path = Path(out)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return out_path.with_name(f"{out_path.stem}__{safe}{out_path.suffix or '.jsonl'}")
