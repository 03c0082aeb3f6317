"""Case files: JSONL, one case per line, each checked against the case format
(``jevalkit/judges/case_file.schema.json``) and, when the evaluator is known, its gold label
against the evaluator's levels."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from .._paths import cases_dir
from ..datafiles import read_regular_file, schema_validator, validate_data
from ..errors import CaseFileError
from ..jsontext import json_line, jsonl_lines

CASE_FIELDS = (
    "id",
    "input",
    "output",
    "expected",
    "context",
    "gold",
    "criteria",
    "tool_calls",
    "expected_tool_calls",
    "free_text_arguments",
    "output_a",
    "output_b",
    "system_a",
    "system_b",
)
MAX_CASE_FILE_BYTES = 256 * 1024 * 1024


@cache
def _case_validator() -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath("case_file.schema.json").read_text("utf-8")
    return schema_validator(json.loads(text))


def case_file_path(path: str | Path) -> Path:
    """A case file path; a bare name (``"faithfulness"``) is the bundled ``data/cases/<name>.jsonl``.

    Example:
        >>> case_file_path("faithfulness").name
        'faithfulness.jsonl'
    """
    p = Path(path)
    if not p.suffix and not p.exists():
        bundled = cases_dir() / f"{path}.jsonl"
        if bundled.exists():
            return bundled
    return p


def load_cases(path: str | Path, *, prompt: Any = None) -> list[dict[str, Any]]:
    """Read and check a case file: ``id`` (unique, required), ``input``, ``output``,
    ``expected``, ``context``, ``gold`` (a level label), ``criteria``, ``tool_calls``,
    ``expected_tool_calls``, ``free_text_arguments`` (tool arguments to judge by meaning),
    ``output_a`` / ``output_b`` (pairwise), ``system_a`` / ``system_b``. A bare name reads the
    bundled ``data/cases/<name>.jsonl``. With ``prompt`` (a :class:`JudgePrompt`), every ``gold``
    must be one of its levels.

    Raises:
        CaseFileError: one line naming the file, the line and the field.

    Example:
        >>> len(load_cases("faithfulness")) >= 6
        True
    """
    p = case_file_path(path)

    def refused(message: str) -> CaseFileError:  # a FIFO or device is refused, never waited on
        if message.endswith("no such case file"):
            message += " (or bundled case set)"
        elif message.endswith("is a folder, not a case file"):
            message = f"{p}: is a folder; give a case file (JSONL, one case per line)"
        return CaseFileError(message)

    try:
        text = read_regular_file(p, MAX_CASE_FILE_BYTES, refused, what="case file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{p}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    cases: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lineno, line in enumerate(jsonl_lines(text), 1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        cases.append(_parse_case(line, where, seen, prompt))
    if not cases:
        raise CaseFileError(f"{p}: no cases (an empty file); write one JSON object per line")
    return cases


def _parse_case(line: str, where: str, seen: set[str], prompt: Any) -> dict[str, Any]:
    case = json_line(line, where, CaseFileError)
    if not isinstance(case, dict):
        raise CaseFileError(f"{where}: a case must be a JSON object with an `id`")
    unknown = sorted(set(case) - set(CASE_FIELDS))
    if unknown:
        raise CaseFileError(
            f"{where}: unknown field(s) {unknown}; allowed: {', '.join(CASE_FIELDS)}"
        )
    validate_data(case, _case_validator(), where, CaseFileError)
    case["id"] = str(case["id"])
    if case["id"] in seen:
        raise CaseFileError(f"{where}: duplicate case id {case['id']!r}")
    seen.add(case["id"])
    if prompt is not None:
        prompt.check_gold(case.get("gold"), where)
    return case
