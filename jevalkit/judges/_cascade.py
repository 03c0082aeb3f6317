"""How a cascade of judges decides, and running one lazily: the first judge judges every item,
each next judge only the items the judges before it were not confident enough about, and people
the rest (Jung, Brahman & Choi, "Trust or Escalate", ICLR 2025).

This module holds the mechanics (which judge a row belongs to, an item's verdict and confidence,
the routing by thresholds, the lazy run); the thresholds are calibrated on human labels
downstream, by :func:`jevalkit.labels.calibrate_cascade`, which writes the cascade file.

An *item* is a judged output: ``system`` (the row's ``label``, the name of the judged system;
``all`` when the rows name none, as in a labels file) and ``case_id``. A judge is a ``model``
with one set of judge parameters (``params_hash``): the embedded judge asked in two prompt
styles is two judges.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..contract import Result
from ..costs import price_for
from ..errors import JudgeError, UsageError
from ..runner import default_results_path
from ._evaluate import JudgeConfig
from ._jobs import TOOL_CALL_EVALUATOR
from ._prompts import load_judge_prompt
from ._run import _cases, judge
from ._several import results_path_for

PERSON = "person"
PENDING = "pending: "
NO_SYSTEM = "all"  # the labels file's name for "no system named"
ITEM = ["system", "case_id"]
_VERDICT_COLUMNS = [
    *ITEM,
    "verdict",
    "confidence",
    "probs",
    "cost_usd",
    "n_repeats",
    "n_errors",
    "error",
]


def _params_key(row_params: Any, digest: Any) -> str:
    """A judge's parameter set as one string: its ``params_hash`` when recorded, else its
    parameters as canonical JSON."""
    if isinstance(digest, str) and digest:
        return digest
    if isinstance(row_params, dict):
        return json.dumps(row_params, sort_keys=True, default=str)
    return ""


def _param_sets(rows: pd.DataFrame) -> pd.Series:
    params = rows["parameters"] if "parameters" in rows else pd.Series(None, index=rows.index)
    digests = rows["params_hash"] if "params_hash" in rows else pd.Series(None, index=rows.index)
    return pd.Series(
        [_params_key(p, d) for p, d in zip(params, digests, strict=True)],
        index=rows.index,
        dtype=object,
    )


def judge_names(rows: pd.DataFrame) -> pd.Series:
    """The judge of each judge row: its ``model``, or, when a model appears with several sets of
    judge parameters (two prompt styles, two temperatures), the model and the parameters that
    differ: ``local[prompt_style=chat]``.

    Example:
        >>> rows = pd.DataFrame({"model": ["local", "local", "gpt"], "params_hash": ["a", "b", "c"],
        ...     "parameters": [{"prompt_style": "chat"}, {"prompt_style": "completion"}, {}]})
        >>> judge_names(rows).tolist()
        ['local[prompt_style=chat]', 'local[prompt_style=completion]', 'gpt']
    """
    if "model" not in rows.columns:
        raise JudgeError("no 'model' column: the judge rows must say which judge judged them")
    models = rows["model"].astype(object).where(rows["model"].notna(), None)
    keys = _param_sets(rows)
    params = rows["parameters"] if "parameters" in rows else pd.Series(None, index=rows.index)
    names = models.astype(str).copy()
    for model in sorted({m for m in models if m is not None}, key=str):
        mine = models == model
        distinct = keys[mine].unique()
        if len(distinct) < 2:
            continue
        sets = {k: params[mine][keys[mine] == k].iloc[0] for k in distinct}
        sets = {k: (p if isinstance(p, dict) else {}) for k, p in sets.items()}
        varying = sorted(
            {name for p in sets.values() for name in p}
            - {
                name
                for name in set.intersection(*(set(p) for p in sets.values()))
                if len({json.dumps(p[name], sort_keys=True, default=str) for p in sets.values()})
                == 1
            }
        )
        for key, p in sets.items():
            shown = ",".join(
                f"{name}={json.dumps(p.get(name), default=str).strip(chr(34))}" for name in varying
            )
            names[mine & (keys == key)] = f"{model}[{shown or key[:12]}]"
    return names


def item_systems(rows: pd.DataFrame) -> pd.Series:
    """The judged system of each judge row: its ``label`` (the name the run gave the outputs'
    system), else a ``system`` column of rows that have no ``label`` column, else ``all``; never
    the judge's own ``model``.

    Example:
        >>> item_systems(pd.DataFrame({"model": ["j", "j"], "label": ["sys-a", None]})).tolist()
        ['sys-a', 'all']
    """
    if "label" in rows.columns:
        source = rows["label"]
    elif "system" in rows.columns:
        source = rows["system"]
    else:
        return pd.Series(NO_SYSTEM, index=rows.index, dtype=object)
    source = source.astype(object)
    return source.where(source.notna(), NO_SYSTEM).astype(str)


def _probs(value: Any, k: int, judge_name: str) -> np.ndarray:
    p = np.asarray(value, dtype=float).ravel()
    if p.size != k or not np.isfinite(p).all():
        raise JudgeError(
            f"judge {judge_name!r}: a probs value has {p.size} entries for {k} levels; pass the "
            "judge's levels (levels=[...]) or a confidence column"
        )
    return p


def _row_costs(frame: pd.DataFrame) -> np.ndarray:
    """Each row's ``cost_usd``; a row without one (imported rows) is priced from its
    ``prompt_tokens`` and ``completion_tokens`` by the price table (``data/prices.yaml``) when
    its ``model`` is there, else NaN (never a guess)."""
    cost = (
        pd.to_numeric(frame["cost_usd"], errors="coerce").to_numpy(dtype=float, copy=True)
        if "cost_usd" in frame
        else np.full(len(frame), np.nan)
    )
    if not np.isnan(cost).any() or not {"model", "prompt_tokens"} <= set(frame.columns):
        return cost
    prompt = pd.to_numeric(frame["prompt_tokens"], errors="coerce").to_numpy(dtype=float)
    completion = (
        pd.to_numeric(frame["completion_tokens"], errors="coerce").to_numpy(dtype=float)
        if "completion_tokens" in frame
        else np.zeros(len(frame))
    )
    models = frame["model"].astype(str).to_numpy()
    prices = {m: price_for(m) for m in set(models[np.isnan(cost)])}
    for i in np.flatnonzero(np.isnan(cost) & ~np.isnan(prompt)):
        price = prices[models[i]]
        if price is not None:
            cost[i] = price.cost(prompt[i], 0.0 if np.isnan(completion[i]) else completion[i])
    return cost


def item_verdicts(
    rows: pd.DataFrame,
    levels: Sequence[str],
    *,
    confidence_column: str | None = None,
    judge_name: str = "the judge",
) -> pd.DataFrame:
    """One row per item that one judge's ``rows`` cover, sorted by item: ``system``,
    ``case_id``, ``verdict`` (the level of highest probability, ``probs`` averaged over the
    repeats; ties: the lower level), ``confidence`` (that probability, or the mean of the declared
    ``confidence_column``), ``probs`` (the averaged distribution), ``cost_usd`` (summed over
    every row; a row without one priced from its tokens by the price table; NaN when none is
    known), ``n_repeats`` (rows with a judgment), ``n_errors`` and
    ``error`` (the first error message). An item whose every row is an error has no verdict and
    a NaN confidence: it is judged, and not confidently (a cascade sends it on).

    Raises:
        JudgeError: the same repeat of an item twice; a probs value of the wrong length.

    Example:
        >>> rows = pd.DataFrame({"model": "j", "case_id": ["a", "a", "b"], "repeat": [0, 1, 0],
        ...                      "probs": [[0.2, 0.8], [0.4, 0.6], None],
        ...                      "error": [None, None, {"message": "no logprobs"}]})
        >>> item_verdicts(rows, ["no", "yes"])[["case_id", "verdict", "confidence", "n_errors"]].values.tolist()
        [['a', 'yes', 0.7, 0], ['b', None, nan, 1]]
    """
    k = len(levels)
    if rows.empty:
        return pd.DataFrame(columns=_VERDICT_COLUMNS, dtype=object).astype(
            {"confidence": float, "cost_usd": float, "n_repeats": int, "n_errors": int}
        )
    frame = rows.assign(system=item_systems(rows), case_id=rows["case_id"].astype(str))
    if "repeat" in frame.columns:
        twice = frame.duplicated([*ITEM, "repeat"], keep=False)
        if twice.any():
            first = frame.loc[twice, [*ITEM, "repeat"]].iloc[0].tolist()
            raise JudgeError(
                f"judge {judge_name!r}: item {first[0]!r}/{first[1]!r} has repeat {first[2]} "
                "more than once in the rows (a results file read twice?); give each row once"
            )
    column = confidence_column or "probs"
    if column not in frame.columns:
        raise JudgeError(f"judge {judge_name!r}: no {column!r} column to read its confidence from")
    failed = frame[column].isna()
    if "error" in frame.columns:
        failed = failed | frame["error"].notna()
    failed = failed.to_numpy(dtype=bool)
    ok = frame[~failed]
    errors = frame["error"].tolist() if "error" in frame.columns else [None] * len(frame)
    cost = _row_costs(frame)
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for key, where in frame.groupby(ITEM, sort=True).indices.items():
        bad = where[failed[where]]
        message = None
        if bad.size:
            first = next((errors[i] for i in bad if isinstance(errors[i], dict | str)), None)
            message = str(first.get("message")) if isinstance(first, dict) else first
            message = str(message) if message else "no judgment"
        known = cost[where][~np.isnan(cost[where])]
        records[key] = {
            "system": key[0],
            "case_id": key[1],
            "verdict": None,
            "confidence": np.nan,
            "probs": None,
            "cost_usd": float(known.sum()) if known.size else np.nan,
            "n_repeats": 0,
            "n_errors": int(bad.size),
            "error": message,
        }
    if len(ok):
        if confidence_column is None:
            probs = np.array([_probs(p, k, judge_name) for p in ok["probs"]])
            for key, index in ok.groupby(ITEM, sort=True).indices.items():
                mean = probs[index].mean(axis=0)
                top = int(np.argmax(mean))  # ties: the lowest level, as Judgment.verdict
                records[key].update(
                    verdict=str(levels[top]),
                    confidence=float(mean[top]),
                    probs=[float(x) for x in mean],
                    n_repeats=len(index),
                )
        else:
            if "verdict" not in ok.columns:
                raise JudgeError(
                    f"judge {judge_name!r}: no 'verdict' column beside {confidence_column!r}"
                )
            verdicts = ok["verdict"].astype(str)
            outside = sorted(set(verdicts) - {str(level) for level in levels})
            if outside:
                raise JudgeError(
                    f"judge {judge_name!r}: verdict {outside[0]!r} (column 'verdict', beside "
                    f"{confidence_column!r}) is not one of the judge's levels "
                    f"{[str(level) for level in levels]}; give each verdict as one of them, or "
                    "the judge's levels (levels=[...], --levels)"
                )
            values = pd.to_numeric(ok[confidence_column], errors="coerce")
            if values.isna().any() or not np.isfinite(values.to_numpy(dtype=float)).all():
                raise JudgeError(
                    f"judge {judge_name!r}: column {confidence_column!r} holds values that are "
                    "not finite numbers"
                )
            for key, group in ok.assign(_c=values).groupby(ITEM, sort=True):
                counts = group["verdict"].astype(str).value_counts()
                modal = sorted(counts[counts == counts.max()].index)[0]
                records[key].update(
                    verdict=modal, confidence=float(group["_c"].mean()), n_repeats=len(group)
                )
    out = pd.DataFrame(
        [records[key] for key in sorted(records)], columns=_VERDICT_COLUMNS, dtype=object
    )
    return out.astype({"confidence": float, "cost_usd": float, "n_repeats": int, "n_errors": int})


def route(
    items: pd.DataFrame, verdicts: Sequence[pd.DataFrame], judges: Sequence[CascadeStage]
) -> pd.DataFrame:
    """Which judge decides each item: the first whose confidence in it is at least its
    threshold, in order; ``person`` when none is; ``pending: <judge>`` when the item reaches a
    judge whose verdicts (``verdicts``, one :func:`item_verdicts` table per judge) do not cover
    it yet. A judge with threshold inf decides nothing and is passed (never pending).

    Returns one row per row of ``items`` (``system``, ``case_id``), in their order:
    ``verdict``, ``decided_by``, ``confidence`` (the deciding judge's; NaN for a person).

    Example:
        >>> items = pd.DataFrame({"system": "all", "case_id": ["a", "b", "c"]})
        >>> v = pd.DataFrame({"system": "all", "case_id": ["a", "b", "c"],
        ...                   "verdict": ["yes", "no", None], "confidence": [0.9, 0.6, np.nan]})
        >>> stage = CascadeStage(name="j", model="j", threshold=0.8)
        >>> route(items, [v], [stage])["decided_by"].tolist()
        ['j', 'person', 'person']
    """
    out = items[ITEM].reset_index(drop=True).astype(str)
    out = out.assign(verdict=None, decided_by=None, confidence=np.nan)
    open_ = np.ones(len(out), dtype=bool)
    for stage, table in zip(judges, verdicts, strict=True):
        if math.isinf(stage.threshold):  # it decides nothing: the items pass it unjudged
            continue
        joined = out[ITEM].merge(
            table[[*ITEM, "verdict", "confidence"]].assign(_judged=True), on=ITEM, how="left"
        )
        judged = joined["_judged"].eq(True).to_numpy()
        conf = joined["confidence"].to_numpy(dtype=float)
        sure = judged & (conf >= stage.threshold)  # NaN (no judgment) is never sure
        take = open_ & sure
        if take.any():
            out.loc[take, "verdict"] = joined.loc[take, "verdict"].to_numpy()
            out.loc[take, "decided_by"] = stage.name
            out.loc[take, "confidence"] = conf[take]
        out.loc[open_ & ~judged, "decided_by"] = PENDING + stage.name
        open_ &= judged & ~sure
    out.loc[open_, "decided_by"] = PERSON
    return out


@dataclass(frozen=True, kw_only=True)
class CascadeStage:
    """One judge of a cascade and its threshold.

    Attributes:
        name: the judge's name (:func:`judge_names`).
        model: the model that judges (``local`` for the embedded one).
        threshold: it decides the items whose confidence is at least this (inf: none).
        config: how it is asked (None: the rows did not record a jevalkit judge's parameters,
            so the cascade can be applied to judged rows but not run).
        params_hash: the ``params_hash`` of its rows (None: match its rows by model only).
        base_url: its endpoint (None: the default, or the embedded server for ``local``).
        repeats: judgments per item, as in calibration (their probabilities are averaged).
    """

    name: str
    model: str
    threshold: float
    config: JudgeConfig | None = None
    params_hash: str | None = None
    base_url: str | None = None
    repeats: int = 1

    def rows_of(self, rows: pd.DataFrame) -> pd.DataFrame:
        """This judge's rows among ``rows``."""
        if "model" not in rows.columns:
            raise JudgeError("no 'model' column: the judge rows must say which judge judged them")
        mine = rows["model"].astype(str) == self.model
        if self.params_hash is not None and "params_hash" in rows.columns:
            mine &= rows["params_hash"].astype(str) == self.params_hash
        return rows[mine]


@dataclass(frozen=True)
class CascadeRun(Result):
    """A cascade run lazily (:func:`judge_cascade`).

    Attributes:
        decisions: one row per case: ``system``, ``case_id``, ``verdict``, ``decided_by`` (a
            judge, ``person``, or ``pending: <judge>`` when a budget stopped the run before that
            judge), ``confidence``.
        rows: every judge's results rows (each judge's also in its own results file), with
            ``cascade_judge``, the judge's name in the cascade.
        stages: one row per judge: ``judge``, ``threshold``, ``n_sent`` (cases sent to it),
            ``n_errors`` (of those, without a judgment), ``n_decided``, ``out`` (its results
            file).
        n_items, n_people: cases, and those left for people.
        stopped: why the run stopped early (a budget), else None.
        method: what was run.
    """

    decisions: pd.DataFrame = field(repr=False)
    rows: pd.DataFrame = field(repr=False)
    stages: pd.DataFrame = field(repr=False)
    n_items: int
    n_people: int
    stopped: str | None
    method: str

    def table(self) -> pd.DataFrame:
        """The stages (one row per judge)."""
        return self.stages.copy()

    def sent(self, judge_name: str) -> list[str]:
        """The case ids sent to ``judge_name``, sorted."""
        if judge_name not in set(self.stages["judge"]):
            raise UsageError(
                f"no judge {judge_name!r} in this cascade: {list(self.stages['judge'])}"
            )
        rows = self.rows[self.rows["cascade_judge"] == judge_name] if len(self.rows) else self.rows
        return sorted(set(rows["case_id"].astype(str))) if len(rows) else []


def _check_stages(stages: Sequence[CascadeStage]) -> list[CascadeStage]:
    stages = list(stages)
    if not stages:
        raise UsageError("a cascade needs at least one judge")
    names = [s.name for s in stages]
    if len(set(names)) != len(names):
        raise UsageError(f"a cascade names each judge once, got {names}")
    for s in stages:
        if s.config is None:
            raise UsageError(
                f"judge {s.name!r}: the cascade does not say how to ask it (its calibration rows "
                "recorded no judge parameters), so it cannot be run; apply it to judged rows "
                "instead (Cascade.apply)"
            )
        if isinstance(s.repeats, bool) or not isinstance(s.repeats, int) or s.repeats < 1:
            raise UsageError(f"judge {s.name!r}: repeats must be a whole number >= 1")
        if not (math.isinf(s.threshold) or 0 <= s.threshold <= 1):
            raise UsageError(f"judge {s.name!r}: threshold {s.threshold} is not a probability")
    return stages


def judge_cascade(
    evaluator: str,
    data: str | Path | list[dict[str, Any]],
    stages: Sequence[CascadeStage],
    *,
    out: str | Path | None = None,
    criteria: str | None = None,
    seed: int | None = None,
    **options: Any,
) -> CascadeRun:
    """Judge every case with the first judge of ``stages``, send to each next judge only the
    cases the judges before it were not confident enough about (confidence below their
    threshold, or no judgment), and leave the rest for people. A judge certified for nothing
    (threshold inf) is not asked.

    Each judge's rows are written as :func:`judge` writes them, to its own results file:
    ``out`` with ``__<judge>`` before the suffix (default: ``runs/judge__<evaluator>__<judge>``),
    so running again resumes every judge where it stopped.

    Args:
        evaluator: the judge prompt (``security``, ``faithfulness@1``, ...); not ``pairwise`` or
            ``tool_call_accuracy``.
        data: the case file (or a list of case dicts).
        stages: the judges in order, cheapest first, each with its threshold and how to ask it
            (:class:`CascadeStage`; a calibrated cascade's ``stages_to_run``).
        out: where the rows go (one file per judge, named from it).
        criteria, seed: as for :func:`judge`.
        **options: run options as for :func:`judge` (``label``, ``concurrency``, ``timeout``,
            ``budget_usd``, ...), for every judge; ``base_url`` replaces every judge's own
            endpoint; ``repeats`` is each judge's own (as calibrated) and cannot be given. A
            budget is spent across the judges: each gets what the ones before it left.

    Returns:
        :class:`CascadeRun`: ``decisions``, ``rows``, ``stages``, ``n_people``, ``sent(judge)``.

    Example:
        >>> judge_cascade("security", "security", [])
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: a cascade needs at least one judge
    """
    stages = _check_stages(stages)
    if "repeats" in options or "adaptive" in options:
        raise UsageError(
            "repeats: each judge of a cascade is asked as often per item as in its calibration "
            "(its confidence is the average over those repeats); do not give repeats"
        )
    if evaluator == TOOL_CALL_EVALUATOR:
        raise UsageError(f"{evaluator} is deterministic: it needs no cascade")
    prompt = load_judge_prompt(evaluator)
    if prompt.kind == "pairwise":
        raise UsageError(
            f"{evaluator}: a cascade decides single items; a pairwise judge plays games in both "
            "orders (not supported)"
        )
    cases = _cases(evaluator, data, criteria)
    levels = prompt.labels
    system = options.get("label") or NO_SYSTEM
    items = pd.DataFrame({"system": system, "case_id": [str(c["id"]) for c in cases]})
    by_id = {str(c["id"]): c for c in cases}
    base_url = options.pop("base_url", None)
    budget_usd, budget_requests = options.get("budget_usd"), options.get("budget_requests")
    frames, tables, summary, stopped = [], [], [], None
    for i, stage in enumerate(stages):
        decided = route(items, tables, stages[:i])
        pending = decided.loc[decided["decided_by"] == PERSON, "case_id"].tolist()
        path = (
            results_path_for(out, stage.name)
            if out is not None
            else default_results_path(f"judge__{prompt.id}", stage.name, base_url)
        )
        if stopped is None and (budget_usd == 0 or budget_requests == 0):
            stopped = f"the budget was spent before judge {stage.name!r}"
        if stopped is not None or not pending or math.isinf(stage.threshold):
            # a judge certified for nothing is not asked: it would decide nothing
            tables.append(item_verdicts(pd.DataFrame(), levels))
            summary.append(_stage_row(stage, 0, 0, 0, path))
            continue
        judged = judge(
            evaluator,
            [by_id[c] for c in pending],
            stage.model,
            config=stage.config,
            seed=seed,
            out=path,
            repeats=stage.repeats,
            **{
                **options,
                "base_url": base_url or stage.base_url,
                "budget_usd": budget_usd,
                "budget_requests": budget_requests,
            },
        )
        stopped = judged.stopped or None
        rows = judged.rows
        budget_usd, budget_requests = _left(rows, budget_usd, budget_requests)
        rows = rows.assign(cascade_judge=stage.name)
        frames.append(rows)
        table = item_verdicts(rows, levels, judge_name=stage.name)
        tables.append(table)
        sure = table["confidence"].to_numpy(dtype=float) >= stage.threshold
        summary.append(
            _stage_row(
                stage, len(pending), int(table["verdict"].isna().sum()), int(sure.sum()), path
            )
        )
    decisions = route(items, tables, stages)
    all_rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    n_people = int((decisions["decided_by"] == PERSON).sum())
    return CascadeRun(
        decisions=decisions,
        rows=all_rows,
        stages=pd.DataFrame(summary),
        n_items=len(items),
        n_people=n_people,
        stopped=stopped,
        method=(
            f"cascade of {len(stages)} judge(s) over {len(items)} case(s) of {prompt.name}, "
            "each judge sent only the cases the judges before it were not confident about"
        ),
    )


def _stage_row(stage: CascadeStage, sent: int, errors: int, decided: int, path: Path) -> dict:
    return {
        "judge": stage.name,
        "threshold": stage.threshold,
        "n_sent": sent,
        "n_errors": errors,
        "n_decided": decided,
        "out": str(path),
    }


def _left(
    rows: pd.DataFrame, budget_usd: float | None, budget_requests: int | None
) -> tuple[float | None, int | None]:
    """What a budget leaves after one judge's rows (cached rows cost nothing)."""
    fresh = rows[~rows["cached"].fillna(False).astype(bool)] if "cached" in rows else rows
    if budget_usd is not None:
        spent = pd.to_numeric(fresh.get("cost_usd"), errors="coerce")
        budget_usd = max(0.0, budget_usd - (float(np.nansum(spent)) if spent is not None else 0.0))
    if budget_requests is not None:
        attempts = pd.to_numeric(fresh.get("attempts"), errors="coerce")
        used = int(np.nansum(attempts)) if attempts is not None else len(fresh)
        budget_requests = max(0, budget_requests - used)
    return budget_usd, budget_requests
