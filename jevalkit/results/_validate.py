"""Row validation: every row read is checked against the results format
(``results_row.schema.json``), one line naming the file, the line and the field."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs

from ..errors import ResultsError

IMPORT_HINT = (
    "convert it first with `jevalkit import {path} --out results.jsonl`, or read it with "
    "jevalkit.io.read / jevalkit.io.from_table(..., case=..., system=..., score=...)"
)


@cache
def _row_validator() -> jsonschema_rs.Validator:
    text = resources.files(__package__).joinpath("results_row.schema.json").read_text("utf-8")
    return jsonschema_rs.Draft202012Validator(json.loads(text), offline=True)


def _field(path: Any) -> str:
    return ".".join(str(p) for p in path) or "<row>"


def validate_row(row: dict[str, Any], where: str) -> None:
    """Check one row against the results format; raise one line naming the line and field.

    Example:
        >>> validate_row({"kind": "probe", "probe": "p", "version": 1, "model": "m", "repeat": 0,
        ...               "label": ["x"]}, "r.jsonl:3")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: r.jsonl:3: label: ["x"] is not of types "null", "string"
    """
    missing = [c for c in ("kind", "probe", "version", "model", "repeat") if c not in row]
    if missing:
        path = where.rsplit(":", 1)[0]
        raise ResultsError(
            f"{where}: not a jevalkit results row: missing column(s) {', '.join(missing)}; "
            + IMPORT_HINT.format(path=path)
        )
    error = next(iter(_row_validator().iter_errors(row)), None)
    if error is not None:
        raise ResultsError(f"{where}: {_field(error.instance_path)}: {error.message}")
