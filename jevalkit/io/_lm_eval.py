"""lm-evaluation-harness ``--log_samples`` output: ``samples_<task>_<date>.jsonl`` beside the run's
``results_<date>.json``; one row per document x metric x filter.

Each sample line carries ``doc_id``, ``filter``, the metric values under their names, and (in
recent versions) ``metrics``, the list of those names; without that list the metric names come
from the results file's ``higher_is_better[<task>]``. The probe is ``<task>/<metric>,<filter>``
(lm-eval's own naming), the case the ``doc_id``. A metric in [0, 1] is the score (``passed`` for
0/1 metrics); a metric outside it (perplexity, BLEU on 0-100) keeps its value in ``source`` and
has no score. The model comes from the results file (``model_name``, or ``pretrained=`` in
``config.model_args``), or is given as ``model=``. Format documented in lm-eval's
``docs/interface.md`` (``--log_samples``) and written by ``lm_eval/loggers/evaluation_tracker.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ImportFormatError
from ._frame import results_from_columns
from ._jsonl import load_json, load_jsonl, require_fields

SAMPLE_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
BOOKKEEPING = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
}


def _results_file(path: Path, date: str | None) -> dict[str, Any] | None:
    candidates = sorted(path.parent.glob(f"results_{date}*.json" if date else "results_*.json"))
    return load_json(candidates[-1]) if candidates else None


def _model_of(results: dict[str, Any] | None) -> str | None:
    if not results:
        return None
    if results.get("model_name"):
        return str(results["model_name"])
    args = str((results.get("config") or {}).get("model_args") or "")
    found = re.search(r"(?:pretrained|model)=([^,]+)", args)
    return found.group(1) if found else None


def read_lm_eval(path: Path, *, model: str | None = None, task: str | None = None) -> pd.DataFrame:
    """Read an lm-eval samples file (see the module docstring)."""
    match = SAMPLE_FILE.match(path.name)
    task = task or (match.group("task") if match else None)
    if task is None:
        raise ImportFormatError(
            f"{path}: the task is named by a samples_<task>_<date>.jsonl file name; pass task="
        )
    results = _results_file(path, match.group("date") if match else None)
    model = model or _model_of(results)
    if model is None:
        raise ImportFormatError(
            f"{path}: no results_<date>.json beside it names the model: pass model= (--model)"
        )
    frame = load_jsonl(path)
    require_fields(frame, ("doc_id",), path, "lm-eval sample")
    if "metrics" in frame.columns:
        names = sorted({m for ms in frame["metrics"].dropna() for m in ms})
    else:
        names = sorted(((results or {}).get("higher_is_better") or {}).get(task, {}))
    names = [m for m in names if m in frame.columns]
    if not names:
        raise ImportFormatError(
            f"{path}: record 1: no metric values (no 'metrics' list and no results file naming them)"
        )
    filters = (
        frame["filter"].astype(str) if "filter" in frame else pd.Series("none", index=frame.index)
    )
    parts = []
    for metric in names:
        raw = frame[metric]
        value = pd.to_numeric(
            raw.map(lambda v: float(v) if isinstance(v, bool) else v), errors="coerce"
        )
        bad = raw.notna() & value.isna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ImportFormatError(
                f"{path}: record {i + 1}: field {metric!r}: {raw.iloc[i]!r:.60} is not a number"
            )
        present = value.notna().to_numpy().copy()
        if "metrics" in frame.columns:  # a listed metric reported as NaN is a missing value, kept
            listed = frame["metrics"].map(lambda ms, m=metric: isinstance(ms, list) and m in ms)
            present |= listed.to_numpy(dtype=bool)
        v = value.to_numpy(dtype=float)[present]
        inside = (v >= 0) & (v <= 1)
        binary = np.isin(v, (0.0, 1.0))
        parts.append(
            pd.DataFrame(
                {
                    "probe": (task + "/" + metric + "," + filters[present]).to_numpy(dtype=object),
                    "case_id": frame["doc_id"][present].astype(str).to_numpy(dtype=object),
                    "score": np.where(inside, v, np.nan),
                    "passed": np.where(binary, v == 1.0, np.asarray(None)).astype(object),
                    "value": v,
                    "missing": np.isnan(v),
                    "row": np.flatnonzero(present),
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    kept = [c for c in ("filter", "doc_hash", "prompt_hash", "target_hash") if c in frame.columns]
    extra = frame[kept].to_dict("records") if kept else [{}] * len(frame)
    source = [
        {
            **extra[r],
            "doc_id": int(frame["doc_id"].iloc[r])
            if str(frame["doc_id"].iloc[r]).isdigit()
            else frame["doc_id"].iloc[r],
            "value": val,
            "doc": frame["doc"].iloc[r] if "doc" in frame.columns else None,
            "input": _first_argument(frame["arguments"].iloc[r])
            if "arguments" in frame.columns
            else None,
            "target": _plain(frame["target"].iloc[r]) if "target" in frame.columns else None,
        }
        for r, val in zip(table["row"], table["value"], strict=True)
    ]
    output = (
        frame["filtered_resps"].map(
            lambda r: r[0] if isinstance(r, list) and r and isinstance(r[0], str) else None
        )
        if "filtered_resps" in frame
        else None
    )
    gold = (
        frame["target"].map(lambda t: t if isinstance(t, str | int | float) else str(t))
        if "target" in frame
        else None
    )
    return results_from_columns(
        len(table),
        {
            "probe": table["probe"].to_numpy(dtype=object),
            "case_id": table["case_id"].to_numpy(dtype=object),
            "model": model,
            "score": table["score"].to_numpy(dtype=float),
            "passed": table["passed"].to_numpy(dtype=object),
            "output": output.to_numpy(dtype=object)[table["row"]] if output is not None else None,
            "gold": gold.to_numpy(dtype=object)[table["row"]] if gold is not None else None,
            "source": source,
            "error": [
                {"type": "missing_value", "message": "lm-eval reported no value", "status": None}
                if missing
                else None
                for missing in table["missing"]
            ],
            "method": "lm_eval",
        },
        where=str(path),
    )


def _first_argument(arguments: object) -> str | None:
    """The prompt lm-eval sent: the first string of the first request's arguments."""
    first = arguments[0] if isinstance(arguments, list) and arguments else arguments
    if isinstance(first, dict):  # lm-eval >= 0.4 logs {"gen_args_0": {"arg_0": prompt, ...}}
        first = next(iter(first.values()), None)
        first = next(iter(first.values()), None) if isinstance(first, dict) else first
    if isinstance(first, list | tuple) and first:
        first = first[0]
    return first if isinstance(first, str) else None


def _plain(value: object) -> object:
    """A JSON-ready value (numpy scalars as Python ones)."""
    return value.item() if isinstance(value, np.generic) else value
