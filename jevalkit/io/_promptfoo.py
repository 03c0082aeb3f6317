"""promptfoo results (``promptfoo eval --output results.json``): one row per test x prompt x
provider x repeat.

The file's ``results.results`` list holds one entry per (test, prompt, provider) run. With
``--repeat N`` each repeat is written as its own ``testIdx`` with no repeat index, so a case is
the test's ``vars`` (its identity), and the repeat is the order of runs of the same
(vars, prompt, provider). ``score`` is promptfoo's score (the assertions' weighted score),
``passed`` its ``success``; named assertion scores (``namedScores``) and each assertion's result
are kept in ``source``; a run that errored (``failureReason`` 2) is an error row, a failed
assertion (``failureReason`` 1) a scored row that did not pass. The system is the provider, with the prompt's label when the file has
more than one prompt. Output schema read from promptfoo 0.121 (``results.version`` 3); see
https://www.promptfoo.dev/docs/configuration/outputs/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ImportFormatError
from ._frame import results_from_columns
from ._jsonl import load_json


def _case_id(vars_: Any) -> str:
    return json.dumps(vars_, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def read_promptfoo(path: Path) -> pd.DataFrame:
    """Read a promptfoo results file (see the module docstring)."""
    doc = load_json(path)
    results = doc.get("results") if isinstance(doc, dict) else None
    runs = results.get("results") if isinstance(results, dict) else None
    if not isinstance(results, dict) or not isinstance(runs, list):
        raise ImportFormatError(f"{path}: not a promptfoo results file (no results.results list)")
    prompts = {
        (p.get("raw"), p.get("label")) for p in results.get("prompts") or [] if isinstance(p, dict)
    }
    several_prompts = len(prompts) > 1
    cols: dict[str, list] = {
        k: []
        for k in (
            "case_id",
            "model",
            "label",
            "probe",
            "score",
            "passed",
            "output",
            "error",
            "source",
            "latency_s",
            "prompt_tokens",
            "completion_tokens",
        )
    }
    seen: dict[tuple, int] = {}
    repeats = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise ImportFormatError(f"{path}: results.results[{i}] is not an object")
        for field in ("vars", "provider", "prompt"):
            if field not in run:
                raise ImportFormatError(f"{path}: results.results[{i}]: no field {field!r}")
        provider = run["provider"] if isinstance(run["provider"], dict) else {"id": run["provider"]}
        prompt = run["prompt"] if isinstance(run["prompt"], dict) else {"raw": run["prompt"]}
        model = str(provider.get("label") or provider.get("id"))
        prompt_name = str(prompt.get("label") or prompt.get("raw") or run.get("promptIdx"))
        case = _case_id(run["vars"])
        key = (case, model, prompt_name)
        repeats.append(seen.get(key, 0))
        seen[key] = repeats[-1] + 1
        score = run.get("score")
        if score is not None and not (isinstance(score, int | float) and 0 <= score <= 1):
            raise ImportFormatError(
                f"{path}: results.results[{i}]: score {score!r} is outside [0, 1]"
            )
        response = run.get("response") or {}
        grading = run.get("gradingResult") or {}
        # failureReason: 0 none, 1 an assertion failed (a scored row), 2 an error (no score)
        error = run.get("error") if run.get("failureReason") == 2 else None
        usage = run.get("tokenUsage") or {}
        cols["case_id"].append(case)
        cols["model"].append(model)
        cols["label"].append(f"{model} · {prompt_name}" if several_prompts else None)
        cols["probe"].append("promptfoo")
        cols["score"].append(np.nan if error else float(score) if score is not None else np.nan)
        cols["passed"].append(None if error else bool(run.get("success")))
        cols["output"].append(
            response.get("output")
            if isinstance(response.get("output"), str)
            else json.dumps(response.get("output"))
        )
        cols["error"].append(
            {"type": "promptfoo", "message": str(error)[:500], "status": None} if error else None
        )
        cols["latency_s"].append((run.get("latencyMs") or 0) / 1000)
        cols["prompt_tokens"].append(usage.get("prompt"))
        cols["completion_tokens"].append(usage.get("completion"))
        cols["source"].append(
            {
                "testIdx": run.get("testIdx"),
                "promptIdx": run.get("promptIdx"),
                "prompt": prompt_name,
                "vars": run["vars"],
                "input": _prompt_text(run),
                "target": _text((run.get("testCase") or {}).get("vars", {}).get("expected"))
                if isinstance((run.get("testCase") or {}).get("vars"), dict)
                else None,
                "namedScores": run.get("namedScores") or {},
                "assertions": [
                    {
                        "type": (c.get("assertion") or {}).get("type"),
                        "metric": (c.get("assertion") or {}).get("metric"),
                        "pass": c.get("pass"),
                        "score": c.get("score"),
                        "reason": c.get("reason"),
                    }
                    for c in grading.get("componentResults") or []
                    if isinstance(c, dict)
                ],
            }
        )
    n = len(runs)
    return results_from_columns(
        n,
        {
            **{
                k: np.asarray(v, dtype=object)
                for k, v in cols.items()
                if k not in ("source", "score", "latency_s")
            },
            "score": np.asarray(cols["score"], dtype=float),
            "latency_s": np.asarray(cols["latency_s"], dtype=float),
            "source": cols["source"],
            "repeat": np.asarray(repeats),
            "method": "promptfoo",
            "started_at": _text((doc.get("metadata") or {}).get("evaluationCreatedAt")),
        },
        where=str(path),
    )


def _text(value: object) -> str | None:
    """A timestamp kept only when it is text (a crafted log may put an object there)."""
    return value if isinstance(value, str) else None


def _prompt_text(run: dict) -> str | None:
    """The prompt promptfoo sent (``prompt.raw``), else the test's vars, one ``name: value`` a line."""
    prompt = run.get("prompt")
    if isinstance(prompt, dict) and isinstance(prompt.get("raw"), str):
        return prompt["raw"]
    variables = run.get("vars")
    if isinstance(variables, dict) and variables:
        return "\n".join(f"{k}: {v}" for k, v in variables.items())
    return None
