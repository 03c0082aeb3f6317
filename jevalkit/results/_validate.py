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
def _schema_text() -> str:
    return resources.files(__package__).joinpath("results_row.schema.json").read_text("utf-8")


@cache
def _row_validator() -> jsonschema_rs.Validator:
    return jsonschema_rs.Draft202012Validator(json.loads(_schema_text()), offline=True)


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
        >>> validate_row({"kind": "bogus", "probe": "p", "version": 1, "model": "m", "repeat": 0},
        ...              "r.jsonl:4")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ResultsError: r.jsonl:4: kind: "bogus" is not one of probe, judge, pairwise, import (the kinds of row jevalkit writes)
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
        name = _field(error.instance_path)
        rule = FIELD_RULES.get(name, lambda _: None)(row.get(name))
        value = json.dumps(row.get(name), ensure_ascii=False)[:80]
        raise ResultsError(f"{where}: {name}: {f'{value} {rule}' if rule else error.message}")


def _kinds(_: Any) -> str:
    kinds = json.loads(_schema_text())["properties"]["kind"]["enum"]
    return f"is not one of {', '.join(kinds)} (the kinds of row jevalkit writes)"


def _model(value: Any) -> str | None:
    if isinstance(value, str):
        return "is empty: every row names the model it asked (`--model`)"
    return None


# the fields whose schema message would not say what is expected
FIELD_RULES = {"kind": _kinds, "model": _model}
