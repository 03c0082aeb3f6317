"""``jevalkit probes new``: a skeleton probe (format 2) for a user's case file, to edit."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .._paths import probes_dir as bundled_probes_dir
from ..errors import ProbeError, UsageError
from ..files import read_file, write_file
from ._cases import MAX_CASE_FILE_BYTES, SCORING_FIELDS, Case, csv_separator, read_case_file
from ._loader import PROBES_ENV, read_probe_file

__all__ = [
    "ANSWER_COLUMNS",
    "GOLD_WORDS",
    "SKELETON_SCORERS",
    "NewProbe",
    "new_probe",
    "placeholders",
    "user_probes_dir",
]

SKELETON_SCORERS = ("exact_match", "levenshtein", "json_similarity", "json_schema", "constraints")
# the columns read as a case's expected answer, in this order of preference (any letter case);
# none of them ever reaches the prompt
ANSWER_COLUMNS = ("expected", "answer", "target", "label")
# a column with one of these words in its name (``correct_answer``, ``Gold``, ``ground truth``)
# is answer-like: kept out of the prompt; the first is the expected answer when no column is
# one of ANSWER_COLUMNS
GOLD_WORDS = frozenset(
    {
        *("expected", "answer", "answers", "target", "targets", "label", "labels", "gold"),
        *("reference", "references", "truth", "solution", "solutions", "correct", "ideal"),
    }
)
_FIELD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class NewProbe:
    """What ``jevalkit probes new`` wrote, and what it decided about the case file.

    Attributes:
        path: the skeleton, ``<folder>/<id>/v1.yaml``.
        expected_column: the case file's column read as the expected answer (copied as
            ``expected``), or None.
        left_out: the other answer-like columns, kept in the cases but out of the prompt.
        numbered: the case file had no ``id``: its cases are numbered 1, 2, ... in file order.
        prompt_fields: the case fields the user message shows.
        todo: the fields still holding a ``TODO`` to write (:func:`placeholders`).
        renamed: (column, field) for the columns whose names cannot be ``{{placeholders}}``
            (``Question Text`` -> ``Question_Text``), renamed in the copy.
        separator: the case file's CSV separator (``;`` or a tab: the copy uses commas).
        twins: (first, again) ids of cases whose fields are all the same (kept; said).
    """

    path: Path
    expected_column: str | None = None
    left_out: tuple[str, ...] = ()
    numbered: bool = False
    prompt_fields: tuple[str, ...] = ()
    todo: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    separator: str = ","
    twins: tuple[tuple[str, str], ...] = ()


def user_probes_dir(probes_dir: str | Path | None = None) -> Path | None:
    """The user's probe folder: ``probes_dir``, else the first folder in ``$JEVALKIT_PROBES``,
    else None (the bundled probes).

    Example:
        >>> user_probes_dir("my-probes")
        PosixPath('my-probes')
    """
    if probes_dir is not None:
        return Path(probes_dir)
    first = os.environ.get(PROBES_ENV, "").split(os.pathsep)[0].strip()
    return Path(first) if first else None


_PLACEHOLDER = re.compile(r"^TODO(:|$)")


def placeholders(data: Any, where: str = "") -> list[str]:
    """The fields of a probe's data still holding a ``jevalkit probes new`` placeholder (text
    that is ``TODO`` or begins with ``TODO:``), as dotted paths.

    Example:
        >>> placeholders({"title": "TODO: a title", "rubric": [{"text": "Cites a source."}],
        ...               "examples": [{"output": "TODO"}, {"output": "TODO list: milk"}]})
        ['title', 'examples.0.output']
    """
    if isinstance(data, str):
        return [where or "<probe>"] if _PLACEHOLDER.match(data) else []
    if isinstance(data, dict):
        items: Iterable[tuple[Any, Any]] = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return []
    return [
        path
        for key, value in items
        for path in placeholders(value, f"{where}.{key}" if where else str(key))
    ]


def _scoring(kind: str, first: Case) -> tuple[dict[str, Any], str, str]:
    """The skeleton's scoring section and a passing and a failing output for the first case."""
    if kind == "json_schema":
        schema = first.fields.get("schema")
        scoring: dict[str, Any] = {"type": kind, "bare_json": True}
        if schema is None:
            scoring["schema"] = {"type": "object"}
        return scoring, "{}", "not JSON"
    if kind == "constraints":
        return {"type": kind, "constraints": {"max_words": 50}}, "A short answer.", "word " * 60
    expected = first.expected
    scoring = {"type": kind} if expected is not None else {"type": kind, "expected": "TODO"}
    if kind == "exact_match":
        scoring["strip"] = True
    if expected is None:
        expected = "TODO"
    text = expected if isinstance(expected, str) else json.dumps(expected, separators=(",", ":"))
    wrong = "[]" if kind == "json_similarity" else text + " and more"
    return scoring, text, wrong


def new_probe(
    probe_id: str,
    *,
    cases: str | Path | None = None,
    scoring: str = "exact_match",
    probes_dir: str | Path | None = None,
) -> NewProbe:
    """Write ``<probes_dir>/<probe_id>/v1.yaml`` (and a copy of the case file beside it): a
    probe that loads and checks as it stands, with a template using every case field but the
    answers, for the user to edit and then publish with ``jevalkit probes lock``.

    The case file's expected answer is its ``expected`` column, else ``answer``, ``target`` or
    ``label`` (:data:`ANSWER_COLUMNS`, any letter case), else the first column with a word of
    :data:`GOLD_WORDS` in its name (``correct_answer``, ``Gold``); copied as ``expected``. No
    answer-like column is put into the prompt, and an empty expected answer is refused. Column
    names that cannot be ``{{placeholders}}`` are renamed in the copy (``Question Text`` ->
    ``Question_Text``), and a CSV separated by ``;`` or a tab is read as such (the copy uses
    commas). A case file with no ``id`` has its cases numbered 1, 2, ... (in the
    copy). With an expected answer, only the system message is left to write (a ``TODO``):
    once it is written (or deleted), ``jevalkit probes check`` passes the skeleton.

    Raises:
        UsageError: no folder given (never writes into the installed package), a bad id, an
            unknown scorer, a probe that already exists, or the id of a bundled probe.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "qa.csv").write_text("question,answer\\nCapital of France?,Paris\\n")
        >>> made = new_probe("capitals", cases=root / "qa.csv", probes_dir=root / "probes")
        >>> made.path.name, made.expected_column, made.numbered
        ('v1.yaml', 'answer', True)
        >>> import jevalkit
        >>> probe = jevalkit.load_probe("capitals", root=root / "probes")
        >>> probe.chat_messages(probe.cases[0])[-1]["content"], probe.cases[0].expected
        ('question: Capital of France?', 'Paris')
    """
    root = user_probes_dir(probes_dir)
    if root is None:
        raise UsageError(
            f"give --probes-dir DIR (or set ${PROBES_ENV}): new probes go into your own folder"
        )
    if root.exists() and not root.is_dir():
        raise UsageError(f"--probes-dir {root}: not a folder; give a folder for your probes")
    if not _ID.match(probe_id):
        raise UsageError(
            f"probe id {probe_id!r}: use lowercase letters, digits and hyphens (e.g. my-probe)"
        )
    if scoring not in SKELETON_SCORERS:
        raise UsageError(f"--scoring {scoring!r}: choose one of {', '.join(SKELETON_SCORERS)}")
    if (
        bundled_probes_dir() / probe_id
    ).is_dir() and root.resolve() != bundled_probes_dir().resolve():
        raise UsageError(
            f"probe id {probe_id!r} is a bundled probe's: a second one in your folder would be "
            "refused by `jevalkit run` and load_probe; pick another id"
        )
    folder = root / probe_id
    if folder.exists() and any(folder.glob("v*.yaml")):
        raise UsageError(f"{folder}: a probe {probe_id!r} already exists; pick another id")
    data: dict[str, Any] = {"format": 2, "id": probe_id, "version": 1}
    data["title"] = f"TODO: a one-line title for {probe_id}"
    data["description"] = "TODO: what this probe measures, and why."
    made = NewProbe(folder / "v1.yaml")
    copy: bytes | None = None
    if cases is not None:
        source = Path(cases)
        if source.suffix not in (".jsonl", ".csv"):
            raise UsageError(f"--cases {source}: a case file ends in .jsonl or .csv")
        if not source.exists():  # read_case_file's hint (put it beside the probe) is for loading
            raise UsageError(
                f"--cases {source}: no such file (looked for {source.absolute()}); give the path "
                "of your case file: `probes new` copies it beside the new probe"
            )
        delimiter = _separator(source) if source.suffix == ".csv" else ","
        rows, _ = read_case_file(source, number=True, delimiter=delimiter)
        made, rows, copy = _answers(made, source, rows, delimiter)
        first = rows[0]
        case_name = f"cases{source.suffix}"
        data["cases"] = case_name
        prompt = "\n".join(f"{k}: {{{{{k}}}}}" for k in made.prompt_fields) or "{{id}}"
        if first.expected is not None or scoring in ("json_schema", "constraints"):
            data["title"] = f"{probe_id}: the {len(rows)} cases of {source.name}"
            data["description"] = (
                f"The {len(rows)} cases of {source.name}, scored by {scoring}"
                + (f" against its `{made.expected_column}` column" if made.expected_column else "")
                + "."
            )
    else:
        case_name = None
        prompt = "TODO: the prompt"
        first = Case("-", 0, {})
    data["messages"] = [
        {"role": "system", "content": "TODO: instructions (or delete this message)"},
        {"role": "user", "content": prompt},
    ]
    data["parameters"] = {"max_tokens": 256, "temperature": 0}
    spec, good, bad = _scoring(scoring, first)
    known = cases is not None and "expected" not in spec
    data["rubric"] = [
        {"id": "correct", "text": _RUBRIC[scoring] if known else "TODO: what a passing answer does"}
    ]
    data["scoring"] = spec
    on_case = {"case": first.id} if cases is not None else {}
    good_label, bad_label = (
        _EXAMPLES[scoring] if known else ("TODO: a passing answer", "TODO: a failing answer")
    )
    data["examples"] = [
        {"label": good_label, **on_case, "output": good, "expect": "pass"},
        {"label": bad_label, **on_case, "output": bad, "expect": "fail"},
    ]
    data["history"] = [{"version": 1, "note": "Initial version."}]
    header = (
        f"# Probe {probe_id}, version 1 (a skeleton from `jevalkit probes new`): edit every TODO,\n"
        "# run `jevalkit probes check --probes-dir DIR`, then publish with `jevalkit probes lock\n"
        "# --probes-dir DIR`. Once published a version is immutable (its case file too).\n"
    )
    text = header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    _write_skeleton(root, folder, text, cases, case_name, copy)
    return dataclasses.replace(made, todo=tuple(placeholders(data)))


_RUBRIC = {
    "exact_match": "The reply is the case's expected answer (surrounding whitespace ignored)",
    "levenshtein": "The reply is close to the case's expected answer (normalised Levenshtein)",
    "json_similarity": "The reply is the case's expected JSON value",
    "json_schema": "The reply is bare JSON valid against the schema",
    "constraints": "The reply holds every constraint",
}
_EXAMPLES = {
    "exact_match": ("The first case's expected answer", "The expected answer with more after it"),
    "levenshtein": ("The first case's expected answer", "The expected answer with more after it"),
    "json_similarity": ("The first case's expected value", "An empty list"),
    "json_schema": ("Bare JSON of the schema", "Not JSON"),
    "constraints": ("A short answer", "Sixty words, over the limit"),
}


def _answer_like(name: str) -> bool:
    """Whether a case file's column reads as an answer (a word of its name is one of
    :data:`GOLD_WORDS`): such a column never reaches the prompt.

    Example:
        >>> [_answer_like(n) for n in ("correct_answer", "Gold", "ground truth", "question")]
        [True, True, True, False]
    """
    return bool(GOLD_WORDS & set(re.split(r"[^a-z0-9]+", name.lower())))


def _field_name(name: str) -> str:
    """A column name as a ``{{placeholder}}`` name: a letter, then letters, digits or ``_``.

    Example:
        >>> _field_name("Question Text"), _field_name("question"), _field_name("2nd try")
        ('Question_Text', 'question', 'f_2nd_try')
    """
    if _FIELD.match(name):
        return name
    out = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")
    return out if out[:1].isalpha() else f"f_{out}"


def _answers(
    made: NewProbe, source: Path, rows: tuple[Case, ...], delimiter: str = ","
) -> tuple[NewProbe, tuple[Case, ...], bytes | None]:
    """The case file's answer column (copied as ``expected``), the other answer-like columns
    (kept out of the prompt), column names that cannot be placeholders (renamed in the copy),
    the numbering of a file with no ids, and the bytes of the copy when it is not the file
    itself (None: copied as it is)."""
    names = list(dict.fromkeys(k for c in rows for k in c.fields))
    lower = {name.strip().lower(): name for name in reversed(names)}
    exact = [lower[a] for a in ANSWER_COLUMNS if a in lower]
    answers = list(dict.fromkeys([*exact, *(n for n in names if _answer_like(n))]))
    chosen = answers[0] if answers else None
    numbered = _has_no_ids(source, delimiter)  # read_case_file numbered them
    rename = {n: _field_name(n) for n in names}
    if chosen is not None:
        rename[chosen] = "expected"
    taken: dict[str, str] = {}
    for old, new in rename.items():
        if new in taken or (new == "id" and old != "id"):
            raise UsageError(
                f"{source}: the columns {taken.get(new, 'id')!r} and {old!r} both become "
                f"`{new}`; rename one of them"
            )
        taken[new] = old
    if chosen is not None:
        empty = [c.id for c in rows if c.fields.get(chosen) in (None, "")]
        if empty:
            raise UsageError(
                f"{source}: `{chosen}` (the expected answer) is empty in {len(empty)} case(s), "
                f"the first {empty[0]!r}; every case needs its answer: fill it in or delete the "
                "row"
            )
    changed = {old: new for old, new in rename.items() if old != new}
    if changed:
        rows = tuple(
            Case(c.id, c.position, {rename[k]: v for k, v in c.fields.items()}) for c in rows
        )
    left_out = tuple(rename[a] for a in answers[1:])
    skip = {"id", *SCORING_FIELDS, *left_out}
    prompt = tuple(k for k in rows[0].template_fields() if k not in skip)
    renamed = tuple(
        (old, new) for old, new in changed.items() if old != chosen and old not in answers[1:]
    )
    seen: dict[str, str] = {}
    twins: list[tuple[str, str]] = []
    for case in rows:
        key = json.dumps(dict(case.fields), sort_keys=True, default=str)
        if key in seen:
            twins.append((seen[key], case.id))
        else:
            seen[key] = case.id
    made = NewProbe(
        made.path, chosen, left_out, numbered, prompt, (), renamed, delimiter, tuple(twins)
    )
    if not (changed or numbered or delimiter != ","):
        return made, rows, None
    return made, rows, _case_file_bytes(source.suffix, rows)


def _text(source: Path) -> str:
    """A case file's text (a FIFO or a device refused, never waited on; bad bytes replaced:
    read_case_file names them)."""
    raw = read_file(source, UsageError, max_bytes=MAX_CASE_FILE_BYTES, what="case file")
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _separator(source: Path) -> str:
    """The separator of a CSV case file: a comma, or ``;`` / a tab when its header holds no
    comma but one of them (a spreadsheet's export in some languages)."""
    text = _text(source)
    header = next(csv.reader(io.StringIO(text)), [])
    return csv_separator(header) or ","


def _has_no_ids(source: Path, delimiter: str = ",") -> bool:
    """Whether the case file names no ``id`` (its header, or its first case)."""
    text = _text(source)
    if source.suffix == ".csv":
        return "id" not in next(csv.reader(io.StringIO(text), delimiter=delimiter), [])
    first = next((line for line in text.splitlines() if line.strip()), "{}")
    try:
        return "id" not in json.loads(first)
    except ValueError:
        return False


def _case_file_bytes(suffix: str, rows: tuple[Case, ...]) -> bytes:
    """The cases as a case file of the same kind, with their ids."""
    records = [{"id": c.id, **c.fields} for c in rows]
    if suffix == ".jsonl":
        lines = (json.dumps(r, ensure_ascii=False) for r in records)
        return "".join(line + "\n" for line in lines).encode("utf-8")
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow(
            {
                k: json.dumps(v) if isinstance(v, dict | list | bool) else v
                for k, v in record.items()
            }
        )
    return out.getvalue().encode("utf-8")


def _write_skeleton(
    root: Path,
    folder: Path,
    text: str,
    cases: str | Path | None,
    case_name: str | None,
    copy: bytes | None = None,
) -> Path:
    """Write the skeleton (and its case file: a copy, or ``copy`` when given) into ``folder``
    and check that it loads; on any failure nothing is left behind (the files and the folders
    it made are removed)."""
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    path = folder / "v1.yaml"
    written: list[Path] = []

    def refused(message: str) -> UsageError:
        return UsageError(
            f"--probes-dir {root}: cannot write the new probe there ({message}); give a folder "
            "you can write to"
        )

    try:
        folder.mkdir(parents=True, exist_ok=True)
        if cases is not None and case_name is not None:
            written.append(folder / case_name)
            if copy is None:
                copy = read_file(cases, refused, max_bytes=MAX_CASE_FILE_BYTES, what="case file")
            write_file(folder / case_name, copy, refused, what="case file")
        written.append(path)
        write_file(path, text, refused, what="probe file")
        read_probe_file(path, {})
    except ProbeError as exc:  # e.g. some cases have an `expected` and others not
        _remove(written, made)
        raise ProbeError(f"{path}: not written, the skeleton would not load: {exc}") from None
    except UsageError:
        _remove(written, made)
        raise
    except OSError as exc:
        _remove(written, made)
        raise UsageError(
            f"--probes-dir {root}: cannot write the new probe there "
            f"({exc.strerror or type(exc).__name__}); give a folder you can write to"
        ) from None
    return path


def _remove(files: list[Path], folders: list[Path]) -> None:
    for file in files:
        with contextlib.suppress(OSError):
            file.unlink()
    for folder in folders:  # deepest first
        with contextlib.suppress(OSError):
            folder.rmdir()
