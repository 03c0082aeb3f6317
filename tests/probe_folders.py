"""Write small user probe folders (format 2, with cases) for tests, published in their own lock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from jevalkit.probes import publish_probes


def case_rows(n: int = 30) -> list[dict[str, Any]]:
    """``n`` doubling questions: case ``c01`` asks for 2 x 1, expected ``"2"``."""
    return [{"id": f"c{i:02d}", "x": i, "expected": str(2 * i)} for i in range(1, n + 1)]


def probe_data(probe_id: str = "double", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": 2,
        "id": probe_id,
        "version": 1,
        "title": "Double a number",
        "description": "Answer with twice the number, digits only.",
        "cases": "cases.jsonl",
        "messages": [
            {"role": "system", "content": "Reply with the number only."},
            {"role": "user", "content": "What is twice {{x}}?"},
        ],
        "parameters": {"max_tokens": 8, "temperature": 0},
        "rubric": [{"id": "exact", "text": "The right number"}],
        "scoring": {"type": "exact_match", "strip": True},
        "examples": [
            {"label": "right", "case": "c02", "output": "4", "expect": "pass"},
            {"label": "wrong", "case": "c02", "output": "5", "expect": "fail"},
        ],
        "history": [{"version": 1, "note": "first"}],
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def write_probe(
    root: Path,
    probe_id: str = "double",
    rows: list[dict[str, Any]] | None = None,
    *,
    publish: bool = True,
    **changes: Any,
) -> Path:
    """Write ``root/<id>/v1.yaml`` and its ``cases.jsonl``; publish it in ``root/probes.lock``."""
    folder = root / probe_id
    folder.mkdir(parents=True, exist_ok=True)
    data = probe_data(probe_id, **changes)
    if data.get("cases") == "cases.jsonl":
        rows = case_rows() if rows is None else rows
        (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in rows))
    path = folder / f"v{data['version']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    if publish:
        publish_probes(root=root)
    return path


def write_placeholders(probe_file: Path) -> None:
    """Do what a user does after ``jevalkit probes new``: replace every ``TODO`` placeholder of
    the skeleton at ``probe_file`` with text of their own (the comment header is dropped)."""

    def written(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: written(v) for k, v in value.items()}
        if isinstance(value, list):
            return [written(v) for v in value]
        if isinstance(value, str) and (value == "TODO" or value.startswith("TODO:")):
            return value.replace("TODO", "Written", 1)
        return value

    data = yaml.safe_load(probe_file.read_text("utf-8"))
    probe_file.write_text(yaml.safe_dump(written(data), sort_keys=False), "utf-8")
