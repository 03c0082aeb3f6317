r"""The ``json_schema`` scorer: strict JSON, validated against a draft 2020-12 schema.

Verdicts, error reports and the metaschema check come from ``jsonschema-rs`` (compiled once per
schema, offline: a remote ``$ref`` is refused, never fetched). It agrees with the Python
``jsonschema`` library on every verdict of the official test suite where both run (a test checks
this), knows ``\p{...}`` in patterns, and is about 40x faster per output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jsonschema_rs

from ..errors import ScoringError, StrictJSONError
from ._rubric import PARSE, CompiledRubric, RubricCheck, Violation
from ._score import Score
from ._strict_json import parse_strict_json

NAME = "json_schema"
MAX_MESSAGES = 50  # violations listed in full; the rest are counted
FULL_REPORT_BYTES = 64 * 1024  # larger invalid outputs report their first violation only
MAX_MESSAGE_CHARS = 300


def _message(where: tuple[str | int, ...], message: str) -> str:
    """``$[9].id: message``, the message cut to a readable length (jsonschema-rs quotes the
    whole offending value, which can be megabytes)."""
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + "…"
    return f"{json_path(where)}: {message}"


@lru_cache(maxsize=4096)
def json_path(path: tuple[str | int, ...]) -> str:
    """Render an instance path as JSONPath: ``[9, "id"]`` -> ``$[9].id``.

    Example:
        >>> json_path((9, "id"))
        '$[9].id'
        >>> json_path(())
        '$'
    """
    parts = ["$"]
    for p in path:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        elif p.isidentifier():
            parts.append(f".{p}")
        else:
            parts.append(f"[{json.dumps(p)}]")
    return "".join(parts)


@lru_cache(maxsize=4096)
def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join(f"/{p}" for p in path)


# The draft 2020-12 metaschema from jsonschema-rs's built-in registry: resolved offline, so a
# schema's custom `$schema` is never fetched (`jsonschema_rs.meta.validate` would fetch it).
_METASCHEMA = jsonschema_rs.Draft202012Validator(
    {"$ref": "https://json-schema.org/draft/2020-12/schema"}, offline=True
)


@lru_cache(maxsize=256)
def _compile(schema_json: str) -> jsonschema_rs.Validator:
    schema = json.loads(schema_json)
    problem = next(iter(_METASCHEMA.iter_errors(schema)), None)
    if problem is not None:
        where = json_path(tuple(problem.instance_path))
        raise ScoringError(f"schema {where}: {problem.message}; fix the probe's scoring.schema")
    try:
        return jsonschema_rs.Draft202012Validator(schema, offline=True)
    except (jsonschema_rs.ReferencingError, ValueError) as exc:
        reason = str(exc).splitlines()[0]
        if isinstance(exc, jsonschema_rs.ReferencingError) or "not present in a registry" in reason:
            raise ScoringError(
                f"schema refers to a document it does not contain ({reason}); "
                "scoring is offline: copy the referenced schema under $defs"
            ) from None
        raise ScoringError(f"schema cannot be compiled: {reason}") from None


def compile_schema(schema: dict[str, Any] | bool) -> jsonschema_rs.Validator:
    """Compile (and cache) a validator for ``schema``; raise :class:`ScoringError` if it is unusable.

    Example:
        >>> compile_schema({"type": "integer"}).is_valid(3)
        True
        >>> compile_schema({"$ref": "https://example.com/s.json"})
        Traceback (most recent call last):
        ...
        jevalkit.errors.ScoringError: schema refers to a document it does not contain (...); scoring is offline: copy the referenced schema under $defs
    """
    return _compile(json.dumps(schema, sort_keys=True))


class JsonSchemaScorer:
    """A compiled ``json_schema`` scorer for one schema and rubric; call it on output text.

    Probes keep one of these, so the per-output cost is parsing plus validation and nothing else:
    the passing :class:`Score` and the rubric result for unparsable output are built once.

    Example:
        >>> scorer = JsonSchemaScorer({"type": "array", "maxItems": 1})
        >>> scorer("[1]").passed, scorer("[1, 2]").errors
        (True, ('$: [1,2] has more than 1 item',))
    """

    def __init__(
        self,
        schema: dict[str, Any] | bool,
        *,
        bare_json: bool = True,
        rubric: Sequence[RubricCheck] = (),
    ) -> None:
        self.validator = compile_schema(schema)
        self.bare_json = bare_json
        self.rubric = CompiledRubric(rubric)
        self._passed = Score(
            name=NAME, value=1.0, passed=True, checks=self.rubric.evaluate([], parsed=True)
        )
        self._unparsed_checks = self.rubric.evaluate([Violation(PARSE, "")], parsed=False)

    def __call__(self, output: str | bytes) -> Score:
        """Score one output: 1 when strict JSON valid against the schema, else 0 with its
        violations (the first 50 listed and the rest counted; for an output over 64 KiB, the
        first violation only)."""
        try:
            instance = parse_strict_json(output, bare=self.bare_json)
        except StrictJSONError as exc:
            return Score(
                name=NAME,
                value=0.0,
                passed=False,
                checks=self._unparsed_checks,
                errors=(exc.reason,),
            )
        size = len(output)
        try:
            if self.validator.is_valid(instance):
                return self._passed
            if size > FULL_REPORT_BYTES:
                return self._first_violation(instance, size)
            errors = list(self.validator.iter_errors(instance))
        except Exception as exc:  # the validator must never take the caller down with it
            return Score(name=NAME, value=0.0, passed=False, errors=(f"$: cannot validate: {exc}",))
        violations: list[Violation] = []
        messages: list[str] = []
        items: list[int] = []
        top_is_list = isinstance(instance, list)
        for e in errors:
            where = tuple(e.instance_path)
            violations.append(Violation(_keyword(e.schema_path), _pointer(where), e.instance))
            if len(messages) < MAX_MESSAGES:
                messages.append(_message(where, e.message))
            if top_is_list and where and isinstance(where[0], int):  # an index of the list
                items.append(where[0])
        if len(errors) > MAX_MESSAGES:
            messages.append(f"... and {len(errors) - MAX_MESSAGES} more violation(s)")
        return Score(
            name=NAME,
            value=0.0,
            passed=False,
            checks=self.rubric.evaluate(violations, parsed=True),
            errors=tuple(messages),
            first_failing_item=min(items) if items else None,
        )

    def _first_violation(self, instance: Any, size: int) -> Score:
        """A large invalid output: the verdict and the first violation only (listing every
        violation of a multi-megabyte answer cost minutes and gigabytes); rubric lines that
        violation does not break are unknown, not held."""
        try:
            self.validator.validate(instance)
        except jsonschema_rs.ValidationError as e:
            where = tuple(e.instance_path)
            violation = Violation(_keyword(e.schema_path), _pointer(where), None)
            top = isinstance(instance, list) and where
            return Score(
                name=NAME,
                value=0.0,
                passed=False,
                checks=self.rubric.evaluate([violation], parsed=True, complete=False),
                errors=(
                    _message(where, e.message),
                    f"... and possibly more violations: validation stopped at the first (the "
                    f"output is {size:,} bytes; every violation is listed up to "
                    f"{FULL_REPORT_BYTES:,})",
                ),
                first_failing_item=where[0] if top and isinstance(where[0], int) else None,
            )
        return self._passed


def json_schema(
    output: str | bytes,
    schema: dict[str, Any] | bool,
    *,
    bare_json: bool = True,
    rubric: Sequence[RubricCheck] = (),
) -> Score:
    """Score ``output`` 1 if it is strict JSON valid against ``schema``, else 0, with every violation.

    For many outputs against one schema, build a :class:`JsonSchemaScorer` once instead.

    Args:
        output: the model's text.
        schema: a JSON Schema (draft 2020-12).
        bare_json: require the text to be JSON alone (no code fence, no prose around it).
        rubric: rubric checks to report as held or failed.

    Example:
        >>> s = json_schema('[{"id": "1"}]', {"type": "array", "items": {"properties": {"id": {"type": "integer"}}}})
        >>> s.passed, s.errors, s.first_failing_item
        (False, ('$[0].id: "1" is not of type "integer"',), 0)
    """
    return JsonSchemaScorer(schema, bare_json=bare_json, rubric=rubric)(output)


def _keyword(schema_path: Sequence[str | int]) -> str:
    for part in reversed(schema_path):
        if isinstance(part, str):
            return part
    return ""
