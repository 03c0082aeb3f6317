"""``jevalkit probes new``: a skeleton probe (format 2) for a user's case file, to edit."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from .._paths import probes_dir as bundled_probes_dir
from ..errors import ProbeError, UsageError
from ..files import read_file, write_file
from ._cases import MAX_CASE_FILE_BYTES, Case, read_case_file
from ._loader import PROBES_ENV, read_probe_file

__all__ = ["SKELETON_SCORERS", "new_probe", "placeholders", "user_probes_dir"]

SKELETON_SCORERS = ("exact_match", "levenshtein", "json_similarity", "json_schema", "constraints")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


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
        items = data.items()
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
) -> Path:
    """Write ``<probes_dir>/<probe_id>/v1.yaml`` (and a copy of the case file beside it): a
    probe that loads and checks as it stands, with a template using every case field, for the
    user to edit and then publish with ``jevalkit probes lock``. Returns the probe file's path.

    Raises:
        UsageError: no folder given (never writes into the installed package), a bad id, an
            unknown scorer, a probe that already exists, or the id of a bundled probe.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "qa.csv").write_text("id,question,expected\\nq1,Capital of France?,Paris\\n")
        >>> new_probe("capitals", cases=root / "qa.csv", probes_dir=root / "probes").name
        'v1.yaml'
        >>> import jevalkit
        >>> jevalkit.load_probe("capitals", root=root / "probes").chat_messages(
        ...     jevalkit.load_probe("capitals", root=root / "probes").cases[0])[-1]["content"]
        'question: Capital of France?'
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
    first = None
    case_name = None
    if cases is not None:
        source = Path(cases)
        if source.suffix not in (".jsonl", ".csv"):
            raise UsageError(f"--cases {source}: a case file ends in .jsonl or .csv")
        if not source.exists():  # read_case_file's hint (put it beside the probe) is for loading
            raise UsageError(
                f"--cases {source}: no such file (looked for {source.absolute()}); give the path "
                "of your case file: `probes new` copies it beside the new probe"
            )
        rows, _ = read_case_file(source)
        first = rows[0]
        case_name = f"cases{source.suffix}"
        data["cases"] = case_name
        fields = [k for k in first.template_fields() if k != "id"]
        prompt = "\n".join(f"{k}: {{{{{k}}}}}" for k in fields) or "{{id}}"
    else:
        prompt = "TODO: the prompt"
        first = Case("-", 0, {})
    data["messages"] = [
        {"role": "system", "content": "TODO: instructions (or delete this message)"},
        {"role": "user", "content": prompt},
    ]
    data["parameters"] = {"max_tokens": 256, "temperature": 0}
    data["rubric"] = [{"id": "correct", "text": "TODO: what a passing answer does"}]
    spec, good, bad = _scoring(scoring, first)
    data["scoring"] = spec
    on_case = {"case": first.id} if cases is not None else {}
    data["examples"] = [
        {"label": "TODO: a passing answer", **on_case, "output": good, "expect": "pass"},
        {"label": "TODO: a failing answer", **on_case, "output": bad, "expect": "fail"},
    ]
    data["history"] = [{"version": 1, "note": "Initial version."}]
    header = (
        f"# Probe {probe_id}, version 1 (a skeleton from `jevalkit probes new`): edit every TODO,\n"
        "# run `jevalkit probes check --probes-dir DIR`, then publish with `jevalkit probes lock\n"
        "# --probes-dir DIR`. Once published a version is immutable (its case file too).\n"
    )
    text = header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return _write_skeleton(root, folder, text, cases, case_name)


def _write_skeleton(
    root: Path, folder: Path, text: str, cases: str | Path | None, case_name: str | None
) -> Path:
    """Write the skeleton (and its case file) into ``folder`` and check that it loads; on any
    failure nothing is left behind (the files and the folders it made are removed)."""
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
            data = read_file(cases, refused, max_bytes=MAX_CASE_FILE_BYTES, what="case file")
            write_file(folder / case_name, data, refused, what="case file")
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
