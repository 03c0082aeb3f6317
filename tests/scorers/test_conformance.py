"""The official JSON Schema Test Suite (draft 2020-12) through the json_schema scorer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import referencing
import referencing.exceptions

from jevalkit.errors import ScoringError
from jevalkit.scorers import json_schema

SUITE = Path(__file__).resolve().parents[3] / "shared/conformance/json-schema-test-suite/tests"
CASES = sorted((SUITE / "draft2020-12").glob("*.json"))


def run_suite():
    agree, disagree, refused, disagreements = 0, 0, 0, []
    for path in CASES:
        for group in json.loads(path.read_text()):
            for test in group["tests"]:
                try:
                    result = json_schema(json.dumps(test["data"]), group["schema"])
                except ScoringError:
                    refused += 1
                    continue
                if result.passed == test["valid"]:
                    agree += 1
                else:
                    disagree += 1
                    disagreements.append(f"{path.name}: {group['description']}")
    return agree, disagree, refused, disagreements


@pytest.mark.skipif(not CASES, reason="the shared conformance suite is not beside this checkout")
def test_scorer_agrees_with_the_official_suite():
    agree, disagree, refused, disagreements = run_suite()
    assert agree + disagree + refused == 1268
    # jsonschema-rs agrees on 1,254 (the jsonschema library: 1,249; it lacks \p{...} in regexes).
    assert agree == 1254
    # A custom metaschema that drops the validation vocabulary: not supported, as in `jsonschema`.
    assert disagree == 1 and "vocabulary.json" in disagreements[0]
    # Schemas that point at http://localhost:1234 are refused, never fetched.
    assert refused == 13


def _refuse(uri: str):
    raise referencing.exceptions.NoSuchResource(ref=uri)


OFFLINE = referencing.Registry(retrieve=_refuse)


def reference_verdicts(group: dict) -> list[bool] | None:
    """The `jsonschema` library's verdicts, or None where it cannot run offline."""
    try:
        validator = jsonschema.Draft202012Validator(group["schema"], registry=OFFLINE)
        return [validator.is_valid(t["data"]) for t in group["tests"]]
    except (referencing.exceptions.Unresolvable, jsonschema.exceptions.SchemaError, re.error):
        return None


@pytest.mark.skipif(not CASES, reason="the shared conformance suite is not beside this checkout")
def test_verdicts_match_the_jsonschema_library_wherever_it_runs():
    """The fast validator never disagrees with the reference Python implementation."""
    compared = 0
    for path in CASES:
        for group in json.loads(path.read_text()):
            expected = reference_verdicts(group)
            if expected is None:
                continue
            for test, want in zip(group["tests"], expected, strict=True):
                ours = json_schema(json.dumps(test["data"]), group["schema"]).passed
                assert ours == want, f"{path.name}: {group['description']}: {test['description']}"
                compared += 1
    assert compared == 1250
