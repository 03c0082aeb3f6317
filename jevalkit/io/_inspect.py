"""inspect_ai eval logs (``.eval`` zip archives and ``.json`` logs): one row per sample x epoch x
scorer.

inspect_ai's own reader (``inspect_ai.log.read_eval_log`` for the header and
``read_eval_log_samples`` for the samples, streamed) is used when inspect_ai is installed (the
``inspect`` extra); without it, the documented layout is read directly (a zip holding
``header.json`` and ``samples/<id>_epoch_<n>.json``, or one JSON object with ``eval`` and
``samples``). Either way the rows are the same.

Scores: numbers in [0, 1] are the score; inspect's letters are mapped as inspect's
``value_to_float`` does (``C`` correct 1.0, ``I`` incorrect 0.0, ``P`` partial 0.5, ``N`` no
answer 0.0; ``passed`` is true only for ``C``); a dict of numbers becomes one row per key
(``scorer/key``). Any other value is refused, naming the sample, epoch and scorer. The case is
the sample id, the repeat its epoch - 1, the probe ``task/scorer``, the model the evaluated model.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ImportFormatError
from ._frame import results_from_columns
from ._jsonl import load_json

LETTERS = {"C": (1.0, True), "I": (0.0, False), "P": (0.5, False), "N": (0.0, False)}
WORDS = {
    "correct": "C",
    "incorrect": "I",
    "partial": "P",
    "yes": "C",
    "no": "I",
    "true": "C",
    "false": "I",
}


def _with_inspect() -> bool:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if dump else value


def _header_and_samples(path: Path, engine: str) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    if engine == "inspect":
        from inspect_ai.log import read_eval_log, read_eval_log_samples

        try:
            header = read_eval_log(str(path), header_only=True)
        except Exception as exc:  # inspect raises many types for a damaged log
            raise ImportFormatError(
                f"{path}: inspect_ai cannot read this log ({type(exc).__name__}: {str(exc)[:200]})"
            ) from None
        samples = (_plain(s) for s in read_eval_log_samples(str(path), all_samples_required=False))
        return _plain(header), samples
    if zipfile.is_zipfile(path):
        try:
            archive = zipfile.ZipFile(path)
            header = json.loads(archive.read("header.json"))
        except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
            raise ImportFormatError(
                f"{path}: not a readable inspect_ai .eval archive ({exc})"
            ) from None
        names = sorted(
            n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json")
        )

        def samples() -> Iterator[dict[str, Any]]:
            for name in names:
                try:
                    yield json.loads(archive.read(name))
                except (zipfile.BadZipFile, ValueError, OSError) as exc:
                    raise ImportFormatError(f"{path}: {name}: cannot be read ({exc})") from None

        return header, samples()
    log = load_json(path)
    if not isinstance(log, dict) or "eval" not in log:
        raise ImportFormatError(f"{path}: not an inspect_ai log (no 'eval' header)")
    return log, iter(log.get("samples") or [])


def _value(value: Any, where: str) -> tuple[float, bool | None]:
    if isinstance(value, bool):
        return float(value), value
    if isinstance(value, int | float) and np.isfinite(value):
        if not 0 <= value <= 1:
            raise ImportFormatError(f"{where}: score {value} is outside [0, 1]")
        return float(value), bool(value == 1) if value in (0, 1) else None
    if isinstance(value, str):
        letter = value.strip()
        letter = WORDS.get(letter.lower(), letter.upper())
        if letter in LETTERS:
            return LETTERS[letter]
        try:
            return _value(float(value), where)
        except ValueError:
            pass
    raise ImportFormatError(
        f"{where}: score value {value!r:.60} is of a type jevalkit does not read"
    )


def read_inspect(path: Path, *, engine: str | None = None) -> pd.DataFrame:
    """Read an inspect_ai log (see the module docstring). ``engine``: ``"inspect"`` (inspect_ai's
    reader) or ``"builtin"``; default: inspect_ai's when it is installed."""
    engine = engine or ("inspect" if _with_inspect() else "builtin")
    header, samples = _header_and_samples(path, engine)
    spec = header.get("eval") or {}
    task = spec.get("task") or "task"
    task = task.rsplit("/", 1)[-1]
    version = spec.get("task_version", 0)
    version = version if isinstance(version, int) else 0
    model = spec.get("model") or "model"
    config = {k: v for k, v in (spec.get("model_generate_config") or {}).items() if v is not None}
    cols: dict[str, list] = {
        k: []
        for k in (
            "probe",
            "case_id",
            "repeat",
            "score",
            "passed",
            "output",
            "gold",
            "model_resolved",
            "error",
            "source",
            "prompt_tokens",
            "completion_tokens",
        )
    }
    for sample in samples:
        sid, epoch = sample.get("id"), int(sample.get("epoch") or 1)
        where = f"{path}: sample {sid!r} epoch {epoch}"
        output = sample.get("output") or {}
        text = output.get("completion") if isinstance(output, dict) else None
        usage = next(iter((sample.get("model_usage") or {}).values()), {}) or {}
        target = sample.get("target")
        gold = target if isinstance(target, str | int | float) else json.dumps(target)
        scores = sample.get("scores") or {}
        error = sample.get("error")
        entries: list[tuple[str, Any, dict]] = []
        for scorer, score in scores.items():
            score = score if isinstance(score, dict) else {"value": score}
            value = score.get("value")
            if isinstance(value, dict):
                entries += [(f"{scorer}/{k}", v, score) for k, v in value.items()]
            else:
                entries.append((scorer, value, score))
        if error and not entries:
            entries = [("error", None, {})]
        for name, value, score in entries:
            if error:
                s, passed = np.nan, None
            else:
                s, passed = _value(value, f"{where} scorer {name!r}")
            cols["probe"].append(f"{task}/{name}")
            cols["case_id"].append(str(sid))
            cols["repeat"].append(epoch - 1)
            cols["score"].append(s)
            cols["passed"].append(passed)
            cols["output"].append(text)
            cols["gold"].append(gold)
            cols["model_resolved"].append(output.get("model") if isinstance(output, dict) else None)
            message = error.get("message") if isinstance(error, dict) else error
            cols["error"].append(
                {"type": "sample_error", "message": str(message)[:500], "status": None}
                if error
                else None
            )
            cols["source"].append(
                {
                    "scorer": name,
                    "answer": score.get("answer"),
                    "explanation": score.get("explanation"),
                    "eval_id": spec.get("eval_id"),
                    "run_id": spec.get("run_id"),
                }
            )
            cols["prompt_tokens"].append(usage.get("input_tokens"))
            cols["completion_tokens"].append(usage.get("output_tokens"))
    n = len(cols["probe"])
    return results_from_columns(
        n,
        {
            **{
                k: np.asarray(v, dtype=object)
                for k, v in cols.items()
                if k not in ("source", "score")
            },
            "score": np.asarray(cols["score"], dtype=float),
            "source": cols["source"],
            "version": version,
            "model": model,
            "parameters": [config] * n,
            "started_at": spec.get("created"),
        },
        where=str(path),
    )
