"""Case datasets: JSONL, one case per line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._paths import data_dir
from ..errors import ProbeError

CASE_FIELDS = ("id", "input", "output", "expected", "context", "gold", "criteria", "tool_calls",
               "expected_tool_calls", "free_text_arguments")  # fmt: skip


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    """Read a case file: ``id`` (unique, required), ``input``, ``output``, ``expected``,
    ``context``, ``gold`` (a level label), ``criteria``, ``tool_calls``, ``expected_tool_calls``,
    ``free_text_arguments`` (tool arguments to judge by meaning rather than compare).
    A bare evaluator name (``"faithfulness"``) reads the bundled ``data/cases/<name>.jsonl``.

    Example:
        >>> len(load_cases("faithfulness")) >= 6
        True
    """
    p = Path(path)
    if not p.suffix and not p.exists():
        p = data_dir() / "cases" / f"{path}.jsonl"
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ProbeError(f"{p}: cannot read case file ({exc.strerror})") from None
    cases, seen = [], set()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except ValueError as exc:
            raise ProbeError(f"{p}:{lineno}: not JSON ({exc.args[0].split(':')[0]})") from None
        if not isinstance(case, dict) or not isinstance(case.get("id"), str | int):
            raise ProbeError(f"{p}:{lineno}: a case must be a JSON object with an `id`")
        unknown = sorted(set(case) - set(CASE_FIELDS))
        if unknown:
            raise ProbeError(
                f"{p}:{lineno}: unknown field(s) {unknown}; allowed: {', '.join(CASE_FIELDS)}"
            )
        case["id"] = str(case["id"])
        if case["id"] in seen:
            raise ProbeError(f"{p}:{lineno}: duplicate case id {case['id']!r}")
        seen.add(case["id"])
        cases.append(case)
    return cases
