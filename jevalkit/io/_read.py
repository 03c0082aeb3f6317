"""Read any supported evaluation log, its format told or detected from its content."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ImportFormatError, JevalkitError, ResultsError
from ..results import read_results
from ._folder import folder_logs
from ._inspect import read_inspect
from ._jsonl import check_file, first_records, head_lines, load_json
from ._judge_files import read_grades, read_pairwise, read_preferences, read_verdicts
from ._lm_eval import SAMPLE_FILE, read_lm_eval
from ._promptfoo import read_promptfoo
from ._write import combine_imports
from ._zip import check_archive, is_zip

MAX_SNIFF_JSON = 64 * 1024 * 1024


def _json_head(path: Path) -> Any:
    if path.suffix.lower() != ".json" or path.stat().st_size > MAX_SNIFF_JSON:
        return None
    try:
        return load_json(path)
    except ImportFormatError:
        return None


def _keys(path: Path) -> set[str]:
    records = first_records(path)
    return set(records[0]) if records else set()


def _is_inspect(path: Path) -> bool:
    if is_zip(path):
        try:
            return "header.json" in [m.filename for m in check_archive(path)]
        except ImportFormatError:
            return False
    doc = _json_head(path)
    return isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and "task" in doc["eval"]


def _is_promptfoo(path: Path) -> bool:
    doc = _json_head(path)
    results = doc.get("results") if isinstance(doc, dict) else None
    return isinstance(results, dict) and isinstance(results.get("results"), list)


def _is_lm_eval(path: Path) -> bool:
    keys = _keys(path)
    return bool(SAMPLE_FILE.match(path.name)) or (
        "doc_id" in keys and ("filtered_resps" in keys or "resps" in keys)
    )


def _is_preferences(path: Path) -> bool:
    doc = _json_head(path)
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        keys = set(doc[0])
    else:
        keys = _keys(path)
    return {"generator_1", "generator_2", "preference"} <= keys


SNIFFERS: dict[str, Callable[[Path], bool]] = {
    "jevalkit": lambda p: {"kind", "probe", "version", "model", "repeat"} <= _keys(p),
    "inspect": _is_inspect,
    "promptfoo": _is_promptfoo,
    "lm_eval": _is_lm_eval,
    "grades": lambda p: {"question_id", "model", "score"} <= _keys(p) and "model_1" not in _keys(p),
    "pairwise": lambda p: (
        {"question_id", "model_1", "model_2", "g1_winner", "g2_winner"} <= _keys(p)
    ),
    "verdicts": lambda p: {"question_id", "model", "games"} <= _keys(p),
    "preferences": _is_preferences,
}
FORMATS = tuple(SNIFFERS)
# the keyword options each format's reader takes (see :func:`read`)
READER_OPTIONS: dict[str, tuple[str, ...]] = {
    "inspect": ("engine",),
    "lm_eval": ("model", "task"),
    "grades": ("scale",),
    "verdicts": ("baseline",),
}


# Files jevalkit writes that are not results, told by their keys, and what to do with them
_NOT_RESULTS = (
    (
        {"case_id", "sampling_probability", "strategy", "order"},
        "a label plan (the queue `jevalkit judge --cascade ... --for-people` writes, or "
        "jevalkit.labels.label_sample's), not results: label it with "
        "jevalkit.widgets.Labeler(pandas.read_json(path, lines=True), levels=[...], "
        'out="labels.jsonl"), then read the labels with jevalkit.labels.read_labels',
    ),
    (
        {"case_id", "level", "labeller", "skipped"},
        "a labels file (what jevalkit.widgets.Labeler writes), not results: read it with "
        "jevalkit.labels.read_labels, and pass it as labels= (or --labels) beside the judged "
        "results",
    ),
)


def not_results(path: str | Path) -> str | None:
    """What a file jevalkit wrote that is not results is, and how to use it (a label plan, a
    labels file), told by the keys of its first record; None for anything else.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "queue.jsonl"
        >>> _ = p.write_text('{"system": "m", "case_id": "c1", "sampling_probability": 1.0, '
        ...                  '"strategy": "cascade", "order": 0, "output": "x"}\\n')
        >>> not_results(p).split(",")[0]
        'a label plan (the queue `jevalkit judge --cascade ... --for-people` writes'
    """
    try:
        keys = _keys(Path(path)) if Path(path).is_file() else set()
    except (ImportFormatError, ValueError, TypeError, RecursionError, OSError):
        return None  # a file it cannot even look at is not one of these
    if {"kind", "probe", "version"} <= keys:
        return None
    return next((what for needs, what in _NOT_RESULTS if needs <= keys), None)


def _fits(sniff: Callable[[Path], bool], path: Path) -> bool:
    """Whether a sniffer says ``path`` fits; a file it cannot even look at does not fit."""
    try:
        return bool(sniff(path))
    except (ImportFormatError, ValueError, TypeError, RecursionError, OSError):
        return False


def detect_format(path: str | Path) -> str:
    """The format of ``path``, told by its content; refused when none or several fit. A folder
    is a folder of inspect_ai logs (:func:`jevalkit.io.folder_logs`).

    Example:
        >>> from jevalkit.reports import example_path
        >>> detect_format(example_path("grades.jsonl"))
        'grades'
    """
    if Path(path).is_dir():
        return "inspect"
    path = check_file(path)
    if not is_zip(path) and not head_lines(path, 1):
        raise ImportFormatError(f"{path}: empty file")
    fits = [name for name, sniff in SNIFFERS.items() if _fits(sniff, path)]
    other = not_results(path) if not fits else None
    if other is not None:
        raise ImportFormatError(f"{path}: {other}")
    if not fits:
        raise ImportFormatError(
            f"{path}: not a format jevalkit reads ({', '.join(FORMATS)}); for any other table use "
            "jevalkit.io.from_table(path, case=..., system=..., score=...)"
        )
    if len(fits) > 1:
        raise ImportFormatError(
            f"{path}: fits several formats ({', '.join(fits)}); pass format= (--format)"
        )
    return fits[0]


def read(
    path: str | Path, format: str | None = None, *, label: str | None = None, **options: Any
) -> pd.DataFrame:
    """Read an evaluation log into the results frame (:data:`jevalkit.COLUMNS`, then ``system``).

    Args:
        path: the file.
        format: one of ``jevalkit``, ``inspect``, ``promptfoo``, ``lm_eval``, ``grades``,
            ``pairwise``, ``verdicts``, ``preferences``; default: detected from the content
            (refused when two fit).
        label: the system name for every row (its ``label`` and ``system``; ``label · system``
            when the log holds several), so two logs of the same task and model stay apart;
            refused for pairwise games, whose rows name two systems each.
        **options: for the format's reader: ``baseline=`` (``verdicts``), ``model=`` and
            ``task=`` (``lm_eval``), ``scale=`` (``grades``), ``engine=`` (``inspect``).

    Raises:
        ImportFormatError: one line naming the file, the record and the field.

    Example:
        >>> from jevalkit.reports import example_path
        >>> df = read(example_path("pairwise.jsonl"))
        >>> sorted(df["position"].unique()), len(df)
        (['a_first', 'b_first'], 480)
    """
    if Path(path).is_dir():
        return _read_folder(Path(path), format, label=label, **options)
    path = check_file(path)
    fmt = format or detect_format(path)
    readers: dict[str, Callable[..., pd.DataFrame]] = {
        "jevalkit": lambda p: _read_jevalkit(p),
        "inspect": lambda p, engine=None: read_inspect(p, engine=engine),
        "promptfoo": read_promptfoo,
        "lm_eval": lambda p, model=None, task=None: read_lm_eval(p, model=model, task=task),
        "grades": lambda p, scale=(1, 10): read_grades(p, scale=scale),
        "pairwise": read_pairwise,
        "verdicts": lambda p, baseline=None: read_verdicts(p, baseline=baseline),
        "preferences": read_preferences,
    }
    if fmt not in readers:
        raise ImportFormatError(f"format {fmt!r} is not one of {', '.join(readers)}")
    try:
        frame = readers[fmt](path, **options)
    except JevalkitError:
        raise
    except TypeError as exc:
        if "unexpected keyword" in str(exc):
            raise ImportFormatError(
                f"format {fmt!r} takes no option {str(exc).split()[-1]}"
            ) from None
        raise _malformed(path, fmt, exc) from None
    except HOSTILE_FILE_ERRORS as exc:
        raise _malformed(path, fmt, exc) from None
    if frame.empty:
        raise ImportFormatError(
            f"{path}: no {fmt} records found in it (0 rows); check --format and that the file "
            "is a complete log"
        )
    return frame if label is None else labelled(frame, label, path)


def _read_folder(
    folder: Path, format: str | None, *, label: str | None, **options: Any
) -> pd.DataFrame:
    """A folder of inspect_ai logs: each merged log or its shards, never both
    (:func:`jevalkit.io.folder_logs`), read as one frame."""
    if format not in (None, "inspect"):
        raise ImportFormatError(
            f"{folder}: a folder is read as inspect_ai logs; give the {format} file itself"
        )
    chosen = folder_logs(folder)
    frames = [read(p, "inspect", **options) for p in chosen.logs]
    frame = combine_imports(frames, [str(p) for p in chosen.logs])
    return frame if label is None else labelled(frame, label, folder)


# What a field of the wrong type, a number too large or a structure too deep raises in a reader
# written for well-formed logs: the file is the user's, so it is refused in one line, never a
# traceback (the fuzz corpus in tests/io/test_hostile_files.py holds every reader to this).
HOSTILE_FILE_ERRORS = (
    ValueError,
    AttributeError,
    KeyError,
    IndexError,
    RecursionError,
    OverflowError,
)


def _malformed(path: Path, fmt: str, exc: BaseException) -> ImportFormatError:
    reason = " ".join(str(exc).split())[:160] or type(exc).__name__
    return ImportFormatError(
        f"{path}: not a valid {fmt} log: a field has a value of the wrong type or size "
        f"({type(exc).__name__}: {reason})"
    )


def labelled(frame: pd.DataFrame, label: str, path: Path) -> pd.DataFrame:
    """``frame`` with every row's ``label`` and ``system`` set to ``label`` (``label · system``
    when the log holds several systems, so they stay apart).

    Example:
        >>> labelled(pd.DataFrame({"kind": ["import"], "label": [None], "system": ["m"]}), "v2",
        ...          Path("x.eval"))["system"].tolist()
        ['v2']
    """
    if not isinstance(label, str) or not label.strip():
        raise ImportFormatError(f"{path}: label must be a non-empty name, got {label!r}")
    if "kind" in frame and frame["kind"].eq("pairwise").any():
        raise ImportFormatError(
            f"{path}: holds pairwise games (two systems per row); a label names one system"
        )
    systems = frame["system"].astype(str) if "system" in frame else pd.Series("", frame.index)
    # several systems in one log (promptfoo's prompts) stay apart under the label
    several = systems.nunique() > 1
    name = label + " · " + systems if several else pd.Series(label, index=frame.index)
    return frame.assign(label=name, system=name)


def _read_jevalkit(path: Path) -> pd.DataFrame:
    try:
        return _results_file(path)
    except ResultsError as exc:
        raise ImportFormatError(str(exc)) from None


def _results_file(path: str | Path) -> pd.DataFrame:
    """A jevalkit results file; a row the results reader cannot check (its schema validator
    gives up on a value nested hundreds deep) is refused in one line naming the file."""
    try:
        return read_results(path)
    except JevalkitError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ResultsError(
            f"{path}: not a valid results file: a row holds a value nested too deeply or of the "
            f"wrong kind ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
        ) from None


def sniff_format(path: str | Path) -> str | None:
    """The format of the file at ``path`` told by its content, as :func:`detect_format` tells
    it; None when no format fits a text file (read it as jevalkit results, whose reader names the
    field at fault). An archive no format fits is refused as such, never "not UTF-8". A folder
    holding ``.eval`` logs is ``inspect`` (read as :func:`folder_logs` chooses); any other folder
    gives None (a command reading results refuses it as not a file).

    Example:
        >>> from jevalkit.reports import example_path
        >>> sniff_format(example_path("grades.jsonl"))
        'grades'
    """
    if Path(path).is_dir():
        logs = (p for p in Path(path).rglob("*.eval") if p.is_file())
        return "inspect" if next(logs, None) is not None else None
    try:
        return detect_format(path)
    except ImportFormatError:
        # only a regular file is opened: reading a FIFO would wait for a writer forever
        if Path(path).is_file() and is_zip(path):
            raise
        return None


def read_source(
    path: str | Path, format: str | None = None, *, label: str | None = None, **options: Any
) -> pd.DataFrame:
    """The results at ``path``, whatever wrote them. ``format`` None means what it means for
    :func:`read`: told by the content (``"auto"``, the command line's spelling, is the same); a
    text file no format fits is read as jevalkit results, whose reader names the field at fault.
    Other tools' logs are read by :func:`read` with those of ``options`` their format takes
    (:data:`READER_OPTIONS`; None and the options of other formats are left out, so one set of
    command-line options serves every format).

    Example:
        >>> from jevalkit.reports import example_path
        >>> df = read_source(example_path("grades.jsonl"), baseline="gpt-4", scale=(1, 10))
        >>> sorted(df["system"].unique())[:2], int(df["score"].between(0, 1).all())
        (['alpha', 'bravo'], 1)
    """
    fmt = None if format == "auto" else format
    if fmt is None:
        fmt = sniff_format(path)
    if fmt is None:
        other = not_results(path)
        if other is not None:
            raise ImportFormatError(f"{path}: {other}")
        fmt = "jevalkit"
    if fmt == "jevalkit" and label is None:
        return _results_file(path)
    takes = READER_OPTIONS.get(fmt, ())
    return read(
        path,
        format=fmt,
        label=label,
        **{k: v for k, v in options.items() if k in takes and v is not None},
    )


SAME_ROWS = "give each run once (a file and its copy hold one run twice)"


def read_sources(
    paths: Sequence[str | Path], format: str | None = None, **options: Any
) -> pd.DataFrame:
    """Several results files (or other tools' logs) as one frame, each read by
    :func:`read_source` with ``format`` and ``options``; refused in one line when a file is
    given twice or two files hold the same row key (:data:`jevalkit.results.KEY_COLUMNS`).

    Raises:
        ImportFormatError: no path, a path given twice, or rows of two files sharing a key.

    Example:
        >>> from jevalkit.reports import example_path
        >>> a, b = example_path("cascade_judged.jsonl"), example_path("cascade_new.jsonl")
        >>> len(read_sources([a])) == len(read_source(a))
        True
        >>> read_sources([a, a])
        Traceback (most recent call last):
        ...
        jevalkit.errors.ImportFormatError: ...cascade_judged.jsonl: given twice; give each results file once
    """
    names = [str(p) for p in paths]
    if not names:
        raise ImportFormatError("no results file given; give one or several")
    seen: set[Path] = set()
    for path in names:
        key = Path(path).resolve()
        if key in seen:
            raise ImportFormatError(f"{path}: given twice; give each results file once")
        seen.add(key)
    frames = [read_source(path, format, **options) for path in names]
    return frames[0] if len(frames) == 1 else combine_imports(frames, names, advice=SAME_ROWS)
