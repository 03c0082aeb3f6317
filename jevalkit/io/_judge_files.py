"""LLM-judge grade and game files in the shapes public judge leaderboards publish.

- ``grades``: one grade per line, ``question_id``, ``model``, ``score`` on 1-10 (``judge``,
  ``turn`` when present). A grade of -1 or null (the judge's answer held no grade) becomes an
  error row: a missing value, counted in the metrics' ``n_missing``. Each grade keeps its level (``expected_level``, ``verdict``) and gets ``score = (g - 1) / 9``.
- ``pairwise``: games played in both orders, ``question_id``, ``model_1``, ``model_2``,
  ``g1_winner``, ``g2_winner`` (``model_1`` / ``model_2`` / ``tie``, already in the models'
  order). Each line becomes two rows, one per game.
- ``verdicts``: 5-way verdict games against a baseline, ``question_id``, ``model``, ``games``
  (two, each with a ``score`` of ``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``; game 1 shows the
  baseline as A, game 2 shows the model as A). The baseline is not in the file: name it.
- ``preferences``: preference annotations, ``generator_1``, ``generator_2``, ``preference`` in
  [1, 2] (1: the first output is preferred, 2: the second, 1.5: a tie), ``instruction``.

Pairwise rows (``kind`` = ``pairwise``) name the two systems (``system_a``, ``system_b``), which was
shown first (``position``: ``a_first`` / ``b_first``; None for preference files, which do not
record it: an importer never invents a position), and the verdict mapped back to the systems
(``a>>b``, ``a>b``, ``a=b``, ``b>a``, ``b>>a``); ``score`` is the preference for ``system_a``:
1, 0.75, 0.5, 0.25, 0 on the five verdicts, and 1, 0.5, 0 for a win, tie or loss of a game with
three outcomes. The case is the question (and turn).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ImportFormatError
from ..files import open_regular
from ._frame import results_from_columns
from ._jsonl import load_json, load_jsonl, require_fields

VERDICTS = ("a>>b", "a>b", "a=b", "b>a", "b>>a")
VERDICT_SCORES = {"a>>b": 1.0, "a>b": 0.75, "a=b": 0.5, "b>a": 0.25, "b>>a": 0.0}
GAME_SCORES = {"a>b": 1.0, "a=b": 0.5, "b>a": 0.0}  # a game with three outcomes: win, tie, loss
_LETTER = {"A>>B": "a>>b", "A>B": "a>b", "A=B": "a=b", "B>A": "b>a", "B>>A": "b>>a"}
_SWAPPED = {"a>>b": "b>>a", "a>b": "b>a", "a=b": "a=b", "b>a": "a>b", "b>>a": "a>>b"}


def _judge_names(frame: pd.DataFrame, default: str) -> tuple[np.ndarray, np.ndarray]:
    """(judge model, judge prompt) per row: ``judge`` may be ``[model, prompt]`` or a name."""
    if "judge" not in frame.columns:
        n = len(frame)
        return np.full(n, "judge", dtype=object), np.full(n, default, dtype=object)
    judge = frame["judge"]
    is_pair = judge.map(lambda j: isinstance(j, list | tuple) and len(j) >= 2)
    model = np.where(
        is_pair,
        judge.map(lambda j: str(j[0]) if isinstance(j, list | tuple) and j else j),
        judge.astype(str),
    )
    prompt = np.where(
        is_pair,
        judge.map(lambda j: str(j[1]) if isinstance(j, list | tuple) and len(j) > 1 else default),
        default,
    )
    return model.astype(object), prompt.astype(object)


def _cases(frame: pd.DataFrame) -> np.ndarray:
    qid = frame["question_id"].astype(str).to_numpy(dtype=object)
    if "turn" in frame.columns:
        return (qid + "/" + frame["turn"].astype(str).to_numpy(dtype=object)).astype(object)
    return qid


def _source(frame: pd.DataFrame, used: set[str]) -> list[dict[str, Any]] | None:
    rest = [c for c in frame.columns if c not in used]
    return frame[rest].to_dict("records") if rest else None


def refuse_copies(frame: pd.DataFrame, path: Path) -> None:
    """A judge file holds each judgment once: a record that repeats an earlier one field for
    field is a copy, and counting it would make a game out of nothing. Applied to records that
    carry the judged text or the judge's reasoning (preferences, five-way verdicts), where two
    real judgments are never identical; bare grade and win/tie/loss records can repeat by chance
    (the importer numbers them as repeats).

    Example:
        >>> refuse_copies(pd.DataFrame({"q": [1, 2, 1], "v": ["x", "y", "x"]}), Path("f.jsonl"))
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: f.jsonl: record 3 repeats an earlier record field for field (1 such record(s)): drop the duplicated lines
    """
    copies = frame.astype(str).duplicated().to_numpy()
    if copies.any():
        raise ImportFormatError(
            f"{path}: record {int(copies.argmax()) + 1} repeats an earlier record field for field "
            f"({int(copies.sum())} such record(s)): drop the duplicated lines"
        )


def _repeats(keys: list[np.ndarray]) -> np.ndarray:
    return (
        pd.DataFrame({i: k for i, k in enumerate(keys)})
        .groupby(list(range(len(keys))), sort=False, dropna=False)
        .cumcount()
        .to_numpy()
    )


def read_grades(path: Path, *, scale: tuple[float, float] = (1, 10)) -> pd.DataFrame:
    """Read a single-grade judgment file (see the module docstring).

    Example:
        >>> import tempfile, json
        >>> p = Path(tempfile.mkdtemp()) / "g.jsonl"
        >>> _ = p.write_text(json.dumps({"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"],
        ...                              "turn": 1, "score": 10}) + "\\n")
        >>> read_grades(p)[["probe", "case_id", "system", "expected_level", "score"]].values.tolist()
        [['single-v1', '81/1', 'm', 10.0, 1.0]]
    """
    frame = load_jsonl(path)
    require_fields(frame, ("question_id", "model"), path, "grade")
    if "score" not in frame.columns:  # a null score is a missing grade; no score at all is not
        raise ImportFormatError(
            f"{path}: record 1: no field 'score'; grade records have question_id, model, score"
        )
    low, high = scale
    grade = pd.to_numeric(frame["score"], errors="coerce")
    absent = frame["score"].isna().to_numpy()  # null: no grade, a missing value
    bad = grade.isna().to_numpy() & ~absent
    if bad.any():
        i = int(bad.argmax())
        raise ImportFormatError(
            f"{path}: record {i + 1}: field 'score': {frame['score'].iloc[i]!r} is not a grade"
        )
    failed = (grade == -1).to_numpy() | absent
    outside = ~failed & ((grade < low) | (grade > high)).to_numpy()
    if outside.any():
        i = int(outside.argmax())
        raise ImportFormatError(
            f"{path}: record {i + 1}: field 'score': {grade.iloc[i]:g} is outside the scale {low:g}-{high:g}; pass scale=(low, high)"
        )
    _, prompt = _judge_names(frame, "grades")
    model = frame["model"].astype(str).to_numpy(dtype=object)
    cases = _cases(frame)
    level = grade.to_numpy(dtype=float, copy=True)
    level[failed] = np.nan
    error = np.full(len(frame), None, dtype=object)
    error[failed] = [
        {
            "type": "judge",
            "message": "the judge's answer held no grade (score -1 or null)",
            "status": None,
        }
    ] * int(failed.sum())
    return results_from_columns(
        len(frame),
        {
            "kind": "judge",
            "probe": prompt,
            "case_id": cases,
            "model": model,
            "repeat": _repeats([prompt, cases, model]),
            "expected_level": level,
            "score": (level - low) / (high - low),
            "verdict": np.where(failed, np.asarray(None), level).astype(object),
            "error": error,
            "method": "grade",
            "source": _source(frame, {"question_id", "model", "score"}),
        },
        where=str(path),
    )


def _game_rows(
    frame: pd.DataFrame, path: Path, winners: list[tuple[str, str]], default: str
) -> pd.DataFrame:
    """Two rows per record, one per game, from (winner field, position) pairs."""
    judge_model, prompt = _judge_names(frame, default)
    cases = _cases(frame)
    a = frame["model_1"].astype(str).to_numpy(dtype=object)
    b = frame["model_2"].astype(str).to_numpy(dtype=object)
    parts = []
    for field, position in winners:
        raw = frame[field].astype(str).str.strip().str.lower()
        verdict = raw.map({"model_1": "a>b", "model_2": "b>a", "tie": "a=b"})
        unknown = verdict.isna() & ~raw.isin(["error", "none", "nan"])
        if unknown.any():
            i = int(np.flatnonzero(unknown.to_numpy())[0])
            raise ImportFormatError(
                f"{path}: record {i + 1}: field {field!r}: {frame[field].iloc[i]!r} is not model_1, model_2 or tie"
            )
        failed = verdict.isna().to_numpy()
        error = np.full(len(frame), None, dtype=object)
        error[failed] = [
            {"type": "judge", "message": f"the judge gave no verdict ({field})", "status": None}
        ] * int(failed.sum())
        parts.append(
            {
                "kind": "pairwise",
                "probe": prompt,
                "case_id": cases,
                "model": judge_model,
                "system_a": a,
                "system_b": b,
                "position": position,
                "verdict": verdict.to_numpy(dtype=object),
                "score": verdict.map(GAME_SCORES).to_numpy(dtype=float),
                "error": error,
                "method": "verdict",
            }
        )
    n = len(frame)
    combined: dict[str, Any] = {  # arrays, and the source records as a list
        k: np.concatenate([np.broadcast_to(np.asarray(p[k], dtype=object), (n,)) for p in parts])
        for k in parts[0]
    }
    source = _source(frame, {"question_id", "model_1", "model_2", *(w for w, _ in winners)})
    combined["source"] = (source if source is not None else [None] * n) * len(parts)
    combined["score"] = combined["score"].astype(float)
    keys = [combined[k] for k in ("probe", "case_id", "model", "system_a", "system_b", "position")]
    combined["repeat"] = _repeats(keys)
    return results_from_columns(n * len(parts), combined, where=str(path))


def read_pairwise(path: Path) -> pd.DataFrame:
    """Read pairwise games played in both orders (see the module docstring).

    Example:
        >>> import tempfile, json
        >>> p = Path(tempfile.mkdtemp()) / "p.jsonl"
        >>> _ = p.write_text(json.dumps({"question_id": 1, "model_1": "x", "model_2": "y",
        ...                              "g1_winner": "model_1", "g2_winner": "tie"}) + "\\n")
        >>> read_pairwise(p)[["system_a", "system_b", "position", "verdict", "score"]].values.tolist()
        [['x', 'y', 'a_first', 'a>b', 1.0], ['x', 'y', 'b_first', 'a=b', 0.5]]
    """
    frame = load_jsonl(path)
    require_fields(
        frame,
        ("question_id", "model_1", "model_2", "g1_winner", "g2_winner"),
        path,
        "pairwise game",
    )
    return _game_rows(frame, path, [("g1_winner", "a_first"), ("g2_winner", "b_first")], "pairwise")


def read_verdicts(path: Path, *, baseline: str | None) -> pd.DataFrame:
    """Read 5-way verdict games against a baseline (see the module docstring)."""
    if not baseline:
        raise ImportFormatError(
            f"{path}: 5-way verdict games compare each model with a baseline the file does not "
            "name: pass baseline='<model>' (--verdict-baseline)"
        )
    frame = load_jsonl(path)
    require_fields(frame, ("question_id", "model", "games"), path, "verdict game")
    refuse_copies(frame, path)
    rows: dict[str, list] = {
        k: []
        for k in ("case_id", "system_a", "position", "verdict", "error", "source", "probe", "model")
    }
    judge_model, prompt = _judge_names(frame, "verdicts")
    cases = _cases(frame)
    for i, (games, system) in enumerate(
        zip(frame["games"], frame["model"].astype(str), strict=True)
    ):
        if not isinstance(games, list) or len(games) != 2:
            raise ImportFormatError(
                f"{path}: record {i + 1}: field 'games': expected two games, got {games!r:.60}"
            )
        for g, (game, position) in enumerate(zip(games, ("b_first", "a_first"), strict=True)):
            letter = game.get("score") if isinstance(game, dict) else None
            if letter is not None and letter not in _LETTER:
                raise ImportFormatError(
                    f"{path}: record {i + 1}: games[{g}].score: {letter!r} is not one of {', '.join(_LETTER)}"
                )
            # game 1 shows the baseline as A: its letters are about (baseline, model); flip them
            verdict = (
                None
                if letter is None
                else (_LETTER[letter] if position == "a_first" else _SWAPPED[_LETTER[letter]])
            )
            rows["case_id"].append(cases[i])
            rows["system_a"].append(system)
            rows["position"].append(position)
            rows["verdict"].append(verdict)
            rows["error"].append(
                None
                if verdict
                else {"type": "judge", "message": f"games[{g}] has no verdict", "status": None}
            )
            rows["source"].append(
                {k: v for k, v in (game.items() if isinstance(game, dict) else []) if k != "score"}
            )
            rows["probe"].append(prompt[i])
            rows["model"].append(judge_model[i])
    n = len(rows["case_id"])
    return results_from_columns(
        n,
        {
            **{k: np.asarray(v, dtype=object) for k, v in rows.items() if k != "source"},
            "source": rows["source"],
            "kind": "pairwise",
            "system_b": baseline,
            "method": "verdict",
            "score": np.array(
                [VERDICT_SCORES.get(v, np.nan) if v else np.nan for v in rows["verdict"]]
            ),
        },
        where=str(path),
    )


def read_preferences(path: Path) -> pd.DataFrame:
    """Read preference annotations (a JSON list or JSONL; see the module docstring)."""
    with open_regular(path, ImportFormatError) as fh:
        first = fh.read(1)
    if first == b"[":
        records = load_json(path)
        frame = pd.DataFrame(records)
    else:
        frame = load_jsonl(path)
    require_fields(frame, ("generator_1", "generator_2", "instruction"), path, "preference")
    refuse_copies(frame, path)
    if "preference" not in frame.columns:
        raise ImportFormatError(f"{path}: record 1: no field 'preference'")
    pref = pd.to_numeric(frame["preference"], errors="coerce")
    outside = pref.notna() & ((pref < 1) | (pref > 2))
    if outside.any():
        i = int(np.flatnonzero(outside.to_numpy())[0])
        raise ImportFormatError(
            f"{path}: record {i + 1}: field 'preference': {pref.iloc[i]} is outside [1, 2]"
        )
    score = (2.0 - pref).to_numpy(dtype=float)
    verdict = np.where(
        np.isnan(score),
        np.asarray(None),  # numpy's stubs refuse a bare None
        np.where(score > 0.5, "a>b", np.where(score < 0.5, "b>a", "a=b")),
    )
    error = [
        None if s == s else {"type": "judge", "message": "no preference", "status": None}
        for s in score
    ]
    cases = (
        frame["instruction"].astype(str).map(lambda t: hashlib.sha256(t.encode()).hexdigest()[:12])
    )
    annotator = (
        frame["annotator"].astype(str).to_numpy(dtype=object)
        if "annotator" in frame
        else "annotator"
    )
    return results_from_columns(
        len(frame),
        {
            "kind": "pairwise",
            "probe": "preference",
            "case_id": cases.to_numpy(dtype=object),
            "model": annotator,
            "system_a": frame["generator_1"].astype(str).to_numpy(dtype=object),
            "system_b": frame["generator_2"].astype(str).to_numpy(dtype=object),
            "position": None,  # the file does not say which output was shown first
            "verdict": verdict.astype(object),
            "score": score,
            "error": error,
            "method": "preference",
            "source": _source(frame, {"generator_1", "generator_2", "preference"}),
        },
        where=str(path),
    )
