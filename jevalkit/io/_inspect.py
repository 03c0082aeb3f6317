"""inspect_ai eval logs (``.eval`` zip archives and ``.json`` logs): one row per sample x epoch x
scorer.

inspect_ai's own reader (``inspect_ai.log.read_eval_log`` for the header and
``read_eval_log_samples`` for the samples, streamed) is used when inspect_ai is installed (the
``inspect`` extra); without it, the documented layout is read directly (a zip holding
``header.json`` and ``samples/<id>_epoch_<n>.json``, or one JSON object with ``eval`` and
``samples``; zstd members, which inspect_ai writes, are inflated with ``zstandard``). Either way
the rows are the same: both engines refuse an archive holding samples its header does not list,
a member inflating past :data:`~jevalkit.io.MAX_INFLATED_BYTES`, and a field the rows are read
from (id, epoch, output, scores, target, error, model_usage) of the wrong type; inspect_ai's
reader also refuses damage in fields jevalkit does not read (messages, events, ...).

Scores: numbers in [0, 1] are the score; inspect's letters are mapped as inspect's
``value_to_float`` does (``C`` correct 1.0, ``I`` incorrect 0.0, ``P`` partial 0.5, ``N`` no
answer 0.0; ``passed`` is true only for ``C``); a dict of numbers becomes one row per key
(``scorer/key``). Any other value is refused, naming the sample, epoch and scorer. The case is
the sample id, the repeat its epoch - 1, the probe ``task/scorer``, the model the evaluated model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ImportFormatError
from ._frame import results_from_columns
from ._jsonl import check_json_size, load_json
from ._zip import check_archive, is_zip, read_zip_member

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
    if is_zip(path):
        members = _sample_members(path)
        if engine == "inspect":
            return _with_inspect_reader(path, streamed=True)
        header = _json_member(path, "header.json")
        if not isinstance(header, dict):
            raise ImportFormatError(f"{path}: header.json is not a JSON object")

        def samples() -> Iterator[dict[str, Any]]:
            for name in members:
                yield _json_member(path, name)

        return header, samples()
    if engine == "inspect":
        check_json_size(path)
        return _with_inspect_reader(path, streamed=False)
    log = load_json(path)
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise ImportFormatError(f"{path}: not an inspect_ai log (no 'eval' header)")
    listed = log.get("samples") or []
    if not isinstance(listed, list):
        raise ImportFormatError(f"{path}: 'samples' is not a list")
    return log, iter(listed)


def _sample_members(path: Path) -> list[str]:
    """The sample members of an archive; refused when it holds samples its header does not list
    (inspect_ai's reader reads only the listed ones: both engines must read the same rows)."""
    names = sorted(
        m.filename
        for m in check_archive(path)
        if m.filename.startswith("samples/") and m.filename.endswith(".json")
    )
    header = _json_member(path, "header.json")
    spec = header.get("eval") if isinstance(header, dict) else None
    dataset = spec.get("dataset") if isinstance(spec, dict) else None
    ids = dataset.get("sample_ids") if isinstance(dataset, dict) else None
    if ids is None:
        return names  # an older log: every sample member is read, by both engines
    config = c if isinstance(spec, dict) and isinstance(c := spec.get("config"), dict) else {}
    epochs = config.get("epochs") or 1
    if not isinstance(ids, list) or not isinstance(epochs, int) or isinstance(epochs, bool):
        raise ImportFormatError(
            f"{path}: header.json: eval.dataset.sample_ids or epochs is malformed"
        )
    listed = {f"samples/{i}_epoch_{e}.json" for i in ids for e in range(1, epochs + 1)}
    unlisted = [n for n in names if n not in listed]
    if unlisted:
        raise ImportFormatError(
            f"{path}: {len(unlisted)} sample member(s) not listed in header.json (e.g. "
            f"{unlisted[0]}): a damaged or crafted log; re-write it with `inspect log convert`"
        )
    return names


def _json_member(path: Path, name: str) -> Any:
    try:
        return json.loads(read_zip_member(path, name))
    except RecursionError:
        raise ImportFormatError(f"{path}: {name}: nested too deeply") from None
    except ValueError as exc:  # not JSON, not UTF-8, or an integer of over 4,300 digits
        raise ImportFormatError(f"{path}: {name}: not JSON ({str(exc)[:120]})") from None


def _with_inspect_reader(
    path: Path, *, streamed: bool
) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """inspect_ai's own reader; whatever it raises on a damaged log becomes one line."""
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    def refused(exc: BaseException) -> ImportFormatError:
        reason = " ".join(str(exc).split())[:200]
        return ImportFormatError(
            f"{path}: inspect_ai cannot read this log ({type(exc).__name__}: {reason}); "
            "engine='builtin' reads the documented layout without it"
        )

    try:
        log = read_eval_log(str(path), header_only=streamed)
    except Exception as exc:  # inspect raises many types for a damaged log
        raise refused(exc) from None
    if not streamed or log.eval.dataset.sample_ids is None:
        if streamed:  # an older archive without sample ids: read it whole, as builtin does
            try:
                log = read_eval_log(str(path))
            except Exception as exc:
                raise refused(exc) from None
        return _plain(log), (_plain(s) for s in (log.samples or []))

    def samples() -> Iterator[dict[str, Any]]:
        try:
            for sample in read_eval_log_samples(str(path), all_samples_required=False):
                yield _plain(sample)
        except Exception as exc:  # pydantic errors for a sample of the wrong type, and more
            raise refused(exc) from None

    return _plain(log), samples()


# The fields this reader uses, typed as inspect_ai's EvalSample types them: the builtin engine
# refuses what inspect_ai's reader refuses in them, so the two engines read the same rows.
_SAMPLE_FIELDS: dict[str, tuple[type, ...]] = {
    "id": (str, int),
    "epoch": (int,),
    "output": (dict, type(None)),
    "scores": (dict, type(None)),
    "target": (str, list),
    "error": (dict, str, type(None)),
    "model_usage": (dict,),
}
_OUTPUT_FIELDS: dict[str, tuple[type, ...]] = {"completion": (str,), "model": (str,)}


def _check_sample(sample: Any, path: Path) -> None:
    if not isinstance(sample, dict):
        raise ImportFormatError(f"{path}: a sample is {type(sample).__name__}, not an object")
    where = f"{path}: sample {sample.get('id')!r:.40}"
    checks = [(k, sample[k], t) for k, t in _SAMPLE_FIELDS.items() if k in sample]
    if isinstance(sample.get("output"), dict):
        output = sample["output"]
        checks += [(f"output.{k}", output[k], t) for k, t in _OUTPUT_FIELDS.items() if k in output]
    for scorer, score in (sample.get("scores") or {}).items():
        checks.append((f"scores.{scorer}", score, (dict,)))
    for model, usage in (sample.get("model_usage") or {}).items():
        checks.append((f"model_usage.{model}", usage, (dict,)))
    for field, value, types in checks:
        if isinstance(value, bool) or not isinstance(value, types):
            raise ImportFormatError(
                f"{where}: {field} is {type(value).__name__}, not "
                + " or ".join("null" if t is type(None) else t.__name__ for t in types)
            )
    if sample.get("epoch", 1) < 1:
        raise ImportFormatError(f"{where}: epoch {sample['epoch']} is not 1 or more")


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
        _check_sample(sample, path)
        sid, epoch = sample.get("id"), sample.get("epoch", 1)
        where = f"{path}: sample {sid!r} epoch {epoch}"
        output = sample.get("output") or {}
        text = output.get("completion") if isinstance(output, dict) else None
        usage: dict[str, Any] = next(iter((sample.get("model_usage") or {}).values()), {}) or {}
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
                    "input": _input_text(sample.get("input")),
                    "target": target,
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
            "started_at": spec.get("created") if isinstance(spec.get("created"), str) else None,
        },
        where=str(path),
    )


def _input_text(value: Any) -> str | None:
    """A sample's input as text: a string, or its messages' text one per line.

    Example:
        >>> _input_text([{"role": "user", "content": [{"type": "text", "text": "2+2?"}]}])
        'user: 2+2?'
    """
    if isinstance(value, str) or value is None:
        return value
    if not isinstance(value, list):
        return json.dumps(value)
    lines = []
    for message in value:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(
                str(part.get("text", "")) for part in content if isinstance(part, dict)
            )
        lines.append(f"{message.get('role', '?')}: {content}")
    return "\n".join(lines)
