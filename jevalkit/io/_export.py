"""Results out, where results are published: the Every Eval Ever record (schema 0.3.x).

One record is one model's evaluation: one ``evaluation_results`` entry per probe version, system
(a ``--label`` configuration) and metric (``pass_rate``, ``mean_score``), each with its score and
``score_details.uncertainty``: the standard error, the confidence interval with its level and
method, and ``num_samples`` (the units the interval is over: cases, or one case's repeats). The
numbers are :func:`jevalkit.metrics.pass_rate` and :func:`jevalkit.metrics.mean_score`, unchanged;
a standard error or an interval that one unit cannot give is left out and said in ``details``,
never written as 0 or NaN. ``model_info.id`` is the datastore's ``developer/model``: a provider
prefix that only routes (``openrouter/``) becomes ``inference_platform``, and the embedded model's
flat id gets its ``developer``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._version import __version__
from ..errors import ImportFormatError
from ..files import write_file
from ..metrics import mean_score, pass_rate
from ..providers import EMBEDDED_MODELS, PROVIDERS
from ..results import RowsResult, rows_of
from ..urls import redact_url
from ._read import read
from ._write import combine_imports

EXPORT_FORMATS = ("every-eval-ever",)
SCHEMA_VERSION = "0.3.0"
CONFIDENCE = 0.95
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
_GROUP = ["system", "probe", "version"]


def export(
    results: pd.DataFrame | RowsResult | str | Path | Sequence[str | Path],
    *,
    to: str = "every-eval-ever",
    out: str | Path | None = None,
    model: str | None = None,
    organization: str = "unknown",
    relationship: str = "third_party",
) -> dict[str, Any]:
    """Write ``results`` (a results frame, a run's result, or files :func:`jevalkit.io.read`
    reads) as an Every Eval Ever record; return the record (a dict), written to ``out`` as JSON
    when given.

    Args:
        to: the format; ``every-eval-ever`` (schema 0.3.x).
        out: the JSON file to write (written whole, replacing an older one), or None.
        model: the model to export when the results hold several (a record is one model's).
        organization: ``source_metadata.source_organization_name``: who ran the evaluation.
        relationship: ``evaluator_relationship``: ``third_party`` (you evaluate someone else's
            model), ``first_party``, ``collaborative`` or ``other``.

    Raises:
        ImportFormatError: an unknown format or relationship, results with several models and
            no ``model``, a model not in them, or a probe version with no scored row.

    Example:
        >>> from jevalkit.reports import open_results
        >>> df, _ = open_results(None, default="unit-conversion__v2__local.jsonl")
        >>> record = export(df)
        >>> first = record["evaluation_results"][0]
        >>> first["evaluation_name"], first["score_details"]["score"]
        ('unit-conversion@2 (T=0)', 0.25)
        >>> sorted(first["score_details"]["uncertainty"])
        ['confidence_interval', 'num_samples', 'standard_error']
    """
    if to not in EXPORT_FORMATS:
        raise ImportFormatError(f"--to {to!r}: export formats are {', '.join(EXPORT_FORMATS)}")
    if relationship not in RELATIONSHIPS:
        raise ImportFormatError(
            f"relationship {relationship!r}: give one of {', '.join(RELATIONSHIPS)}"
        )
    results = rows_of(results)  # a run's result: its rows
    if isinstance(results, pd.DataFrame):
        df = results
    else:
        paths = [results] if isinstance(results, str | Path) else list(results)
        df = combine_imports([read(p) for p in paths], [str(p) for p in paths])
    df = _one_model(df, model)
    record = every_eval_ever_record(df, organization=organization, relationship=relationship)
    if out is not None:
        _write_whole(
            Path(out), json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        )
    return record


def _one_model(df: pd.DataFrame, model: str | None) -> pd.DataFrame:
    probes = df[df["probe"].notna() & df["version"].notna()] if len(df) else df
    if probes.empty:
        raise ImportFormatError("the results hold no probe rows: nothing to export")
    models = sorted(probes["model"].dropna().astype(str).unique())
    if model is not None:
        if model not in models:
            raise ImportFormatError(
                f"--model {model!r} is not in the results; they hold {', '.join(models)}"
            )
        return probes[probes["model"] == model]
    if len(models) != 1:
        raise ImportFormatError(
            f"the results hold {len(models)} models ({', '.join(models[:5])}): an Every Eval Ever "
            "record is one model's; export each with --model NAME"
        )
    return probes


def every_eval_ever_record(
    df: pd.DataFrame, *, organization: str = "unknown", relationship: str = "third_party"
) -> dict[str, Any]:
    """The Every Eval Ever record of one model's probe rows (see :func:`export`)."""
    model = str(df["model"].iloc[0])
    now = time.time()
    names = "+".join(
        sorted({f"{p}@{int(v)}" for p, v in zip(df["probe"], df["version"], strict=True)})
    )
    rates = pass_rate(df, by=_GROUP, confidence=CONFIDENCE).set_index(_GROUP)
    means = mean_score(df, by=_GROUP, confidence=CONFIDENCE, bimodality=False).set_index(_GROUP)
    passed_se = mean_score(
        df, by=_GROUP, score="passed", confidence=CONFIDENCE, bimodality=False
    ).set_index(_GROUP)
    results = []
    for key, rows in df.groupby(_GROUP, sort=True):
        system, probe, version = key[0], key[1], int(key[2])
        name = f"{probe}@{version}"
        base = {
            "evaluation_name": f"{name} ({system})",
            "source_data": {
                "dataset_name": name,
                "source_type": "other",
                "additional_details": _strings(
                    {"probe_sha256": _one(rows, "probe_hash"), "jevalkit_system": system}
                ),
            },
            "evaluation_timestamp": _latest(rows),
            "generation_config": _generation(rows),
        }
        rate, mean = rates.loc[key], means.loc[key]
        if math.isnan(float(rate["value"])) and math.isnan(float(mean["value"])):
            raise ImportFormatError(
                f"{name} on {system!r} has no scored row (every request failed): nothing to "
                "export; re-run its errors with --retry-errors"
            )
        if not math.isnan(float(rate["value"])):
            results.append(
                base
                | _result(
                    f"{name}/{system}/pass_rate",
                    "pass_rate",
                    "pass rate",
                    "the share of samples that pass every check of the probe",
                    rate,
                    se_row=passed_se.loc[key],
                )
            )
        if not math.isnan(float(mean["value"])):
            results.append(
                base
                | _result(
                    f"{name}/{system}/mean_score",
                    "mean_score",
                    "mean score",
                    "the mean of the probe's 0-1 scores, repeats averaged within a case first",
                    mean,
                    se_row=mean,
                )
            )
    local = df["model_sha256"].notna().any() if "model_sha256" in df else False
    resolved = _one(df, "model_resolved")
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{names}/{model}/{int(now)}",
        "evaluation_timestamp": _latest(df),
        "retrieved_timestamp": str(int(now)),
        "source_metadata": {
            "source_name": "jevalkit",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": relationship,
        },
        "eval_library": {"name": "jevalkit", "version": __version__},
        "model_info": {
            "name": model,
            **_identity(model, resolved, _one(df, "base_url")),
            **({"inference_engine": {"name": "llama.cpp"}} if local else {}),
            "additional_details": _strings(
                {
                    "deployment_type": "self_deployed" if local else "externally_managed",
                    "model_availability": "open_weights" if local else "unknown",
                    "model_resolved": resolved,
                    "model_sha256": _one(df, "model_sha256"),
                    # rows an older jevalkit wrote may hold a key in the URL's query
                    "base_url": _redacted(_one(df, "base_url")),
                }
            ),
        },
        "evaluation_results": results,
    }


def _redacted(url: str | None) -> str | None:
    return None if url is None else redact_url(url)


def _identity(model: str, resolved: str | None, base_url: str | None) -> dict[str, str]:
    """EEE's ``id`` (``developer/model``, the datastore's path), with the ``developer`` of a flat
    id and the ``inference_platform``: a provider prefix routes, it is not the developer
    (``openrouter/meta-llama/llama-3.1-8b-instruct`` is meta-llama's model served by OpenRouter)."""
    provider, _, rest = model.partition("/")
    if provider == "openrouter" and rest.strip():
        return {"id": rest, "inference_platform": "openrouter"}
    if provider in PROVIDERS and rest.strip():
        routed = base_url is not None and base_url.rstrip("/") == PROVIDERS[provider]
        return {"id": model, **({"inference_platform": provider} if routed else {})}
    if "/" in model or resolved is None:
        return {"id": model}
    # the embedded models: Gemma 3 270M is Google's, SmolLM2 Hugging Face's
    developer = EMBEDDED_MODELS.get(resolved)
    return {"id": resolved, **({"developer": developer} if developer else {})}


def _result(
    result_id: str, metric: str, label: str, description: str, row: pd.Series, *, se_row: pd.Series
) -> dict[str, Any]:
    se = float(se_row["se"])
    units = int(se_row["n"])
    uncertainty: dict[str, Any] = {"num_samples": units}
    rows = row["n_samples"] if "n_samples" in row else row["n"]  # mean_score's n is its cases
    details = {"n_rows": int(rows), "n_missing": int(row["n_missing"]), "unit": se_row["unit"]}
    low, high = float(row["ci_low"]), float(row["ci_high"])
    if math.isnan(low) or math.isnan(high):  # never NaN in the record: not JSON, and no bound
        details["confidence_interval"] = f"not estimable ({row['method']})"
    else:
        uncertainty["confidence_interval"] = {
            "lower": low,
            "upper": high,
            "confidence_level": CONFIDENCE,
            "method": str(row["method"]),
        }
    if math.isnan(se):
        details["standard_error"] = f"not estimable from {units} unit(s) ({se_row['unit']})"
    else:
        uncertainty["standard_error"] = {
            "value": se,
            "method": f"analytic: sd / sqrt(n) over {se_row['unit']}",
        }
    return {
        "evaluation_result_id": result_id,
        "metric_config": {
            "evaluation_description": description,
            "metric_id": metric,
            "metric_name": label,
            "metric_kind": metric,
            "metric_unit": "proportion",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0,
            "max_score": 1,
        },
        "score_details": {
            "score": float(row["value"]),
            "details": _strings(details),
            "uncertainty": uncertainty,
        },
    }


def _generation(rows: pd.DataFrame) -> dict[str, Any]:
    params = [p for p in rows.get("parameters", pd.Series(dtype=object)) if isinstance(p, dict)]
    shared = (
        {k: params[0][k] for k in params[0] if all(p.get(k) == params[0][k] for p in params)}
        if params
        else {}
    )
    args: dict[str, Any] = {}
    for name in ("temperature", "top_p"):
        if isinstance(shared.get(name), int | float) and not isinstance(shared[name], bool):
            args[name] = float(shared[name])
    if isinstance(shared.get("max_tokens"), int) and shared["max_tokens"] >= 1:
        args["max_tokens"] = int(shared["max_tokens"])
    rest = {k: json.dumps(v) for k, v in shared.items() if k not in args}
    repeats = rows["repeat"].nunique() if "repeat" in rows else None
    return {
        "generation_args": args,
        "additional_details": _strings({**rest, "repeats": repeats}),
    }


def _one(df: pd.DataFrame, column: str) -> str | None:
    if column not in df:
        return None
    values = df[column].dropna().astype(str).unique()
    return values[0] if len(values) == 1 else None


def _latest(df: pd.DataFrame) -> str:
    done = df["finished_at"].dropna().astype(str) if "finished_at" in df else pd.Series([])
    return str(done.max()) if len(done) else "unknown"


def _strings(values: dict[str, Any]) -> dict[str, str]:
    """EEE's ``additional_details``: string values only; None left out."""
    return {k: str(v) for k, v in values.items() if v is not None}


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` by the one rule for outputs (:func:`jevalkit.files.write_file`:
    a temporary file beside it renamed over it, never into a device or a folder, a symlink
    replaced), so a record is never half written."""
    write_file(path, text, ImportFormatError, what="record")
