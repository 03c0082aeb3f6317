"""Judge rows read as a cascade reads them: which judge a row belongs to, an item's verdict and
confidence from its judgments, and the routing by thresholds (the first judge decides the items
it is sure of, each next judge the ones left, people the rest: Jung, Brahman & Choi, "Trust or
Escalate", ICLR 2025). The thresholds are calibrated on human labels by
:func:`jevalkit.labels.calibrate_cascade`; :class:`jevalkit.labels.CascadeDesign` runs a
cascade lazily.

An *item* is a judged output: ``system`` (the row's ``label``, the name of the judged system;
``all`` when the rows name none, as in a labels file) and ``case_id``. A judge is a ``model``
with one set of judge parameters (``params_hash``): the embedded judge asked in two prompt
styles is two judges.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..contract import not_a_statistic
from ..costs import price_for
from ..errors import JudgeError
from ..judges import JudgeConfig

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


@not_a_statistic("names the judge of each row: a label, not an estimate")
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


@not_a_statistic("names the judged system of each row: a label, not an estimate")
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
    # a distribution, as a judge writes it: [-3, 4] read as confidence 4 was decided by any
    # threshold (the rows of a file are untrusted)
    if (p < 0).any() or (p > 1).any() or abs(math.fsum(p) - 1) > 1e-3:
        raise JudgeError(
            f"judge {judge_name!r}: a probs value {p.round(6).tolist()} is not a probability "
            "distribution over the levels (entries in [0, 1] summing to 1): fix or drop that row"
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


@not_a_statistic("one judge's verdict and confidence per item, read off its rows: no interval")
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


@not_a_statistic("routes items through a cascade's thresholds: a decision rule, not an estimate")
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


@not_a_statistic("one judge of a cascade and its threshold: a setting")
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
