"""The json_schema scorer on the schema-ten-records probe and on hostile input."""

from __future__ import annotations

import json

import pytest

import jevalkit
from jevalkit.errors import ScoringError
from jevalkit.scorers import compile_schema, json_schema

PROBE = jevalkit.load_probe("schema-ten-records@2")


def records(n: int = 10) -> list[dict]:
    return [{"id": i, "name": f"User {i}", "active": i % 2 == 0} for i in range(1, n + 1)]


def score(value_or_text) -> jevalkit.Score:
    text = value_or_text if isinstance(value_or_text, str) else json.dumps(value_or_text)
    return PROBE.score(text)


def check(result, check_id):
    return {c.id: c.passed for c in result.checks}[check_id]


def test_correct_output_passes_every_check():
    result = score(records())
    assert result.passed and result.value == 1.0
    assert all(c.passed for c in result.checks)
    assert result.errors == () and result.first_failing_item is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("```json\n" + json.dumps(records()) + "\n```", "code fence"),
        ("Here you go:\n" + json.dumps(records()), "prose before"),
        (json.dumps(records()) + "\nHope this helps!", "text after"),
        ("", "empty output"),
    ],
)
def test_non_bare_output_fails_the_parse_check(text, reason):
    result = score(text)
    assert not result.passed and result.value == 0.0
    assert reason in result.errors[0]
    assert check(result, "bare_json") is False
    assert check(result, "ten_objects") is None  # cannot tell without parsing


def test_surrounding_whitespace_is_fine():
    assert score("\n  " + json.dumps(records()) + "\n\n").passed


@pytest.mark.parametrize("n", [9, 11])
def test_wrong_count_fails_ten_objects_only(n):
    result = score(records(n))
    assert not result.passed
    assert check(result, "ten_objects") is False
    assert check(result, "exact_keys") is True
    assert result.first_failing_item is None


def test_extra_key_on_item_ten_is_found_at_index_nine():
    data = records()
    data[9]["role"] = "admin"
    result = score(data)
    assert check(result, "exact_keys") is False
    assert result.first_failing_item == 9
    assert any(e.startswith("$[9]") and "role" in e for e in result.errors)


def test_string_id():
    data = records()
    data[6]["id"] = "7"
    result = score(data)
    assert check(result, "integer_ids") is False and check(result, "exact_keys") is True
    assert result.errors == ('$[6].id: "7" is not of type "integer"',)
    assert result.first_failing_item == 6


def test_boolean_id_is_not_an_integer():
    data = records()
    data[0]["id"] = True
    result = score(data)
    assert check(result, "integer_ids") is False


def test_integer_active_is_not_a_boolean():
    data = records()
    data[3]["active"] = 1
    result = score(data)
    assert check(result, "boolean_active") is False and result.first_failing_item == 3


def test_null_fails_no_nulls():
    data = records()
    data[9]["name"] = None
    result = score(data)
    assert check(result, "no_nulls") is False and check(result, "integer_ids") is True


def test_empty_name():
    data = records()
    data[4]["name"] = ""
    result = score(data)
    assert not result.passed and result.first_failing_item == 4
    assert "$[4].name" in result.errors[0]


def test_every_violation_is_reported():
    data = records()
    data[2]["id"] = "3"
    data[8]["active"] = None
    del data[5]["name"]
    result = score(data)
    assert len(result.errors) == 3
    assert result.first_failing_item == 2


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(constant):
    text = json.dumps(records()).replace('"id": 1,', f'"id": {constant},', 1)
    result = score(text)
    assert not result.passed and "NaN or Infinity" in result.errors[0]


def test_duplicate_keys_are_rejected():
    text = json.dumps(records()).replace('"id": 1,', '"id": 1, "id": 1,', 1)
    result = score(text)
    assert not result.passed and "duplicate object key 'id'" in result.errors[0]


def test_ten_megabytes_of_text_scores_zero():
    result = score("x" * 10_000_000)
    assert result.value == 0.0 and "prose before" in result.errors[0]


def test_ten_megabytes_of_json_scores_zero():
    big = json.dumps([{"id": 1, "name": "x" * 10_000_000, "active": True}])
    result = score(big)
    assert result.value == 0.0 and check(result, "ten_objects") is False


def test_deep_nesting_scores_zero():
    result = score("[" * 100_000 + "]" * 100_000)
    assert result.value == 0.0 and "nested too deeply" in result.errors[0]


def test_invalid_utf8_scores_zero():
    result = PROBE.score(b'[{"id": 1, "name": "\xff\xfe", "active": true}]')
    assert result.value == 0.0 and "not valid UTF-8" in result.errors[0]


@pytest.mark.parametrize("text", ['["\ud800"]', '["\\ud800"]', '{"\\udc00": 1}'])
def test_lone_surrogates_score_zero(text):
    result = score(text)
    assert result.value == 0.0 and "lone surrogate" in result.errors[0]


def test_escaped_surrogate_pair_is_fine():
    data = records()
    text = json.dumps(data).replace("User 1", "User \\ud83d\\ude00", 1)
    assert score(text).passed


def test_remote_ref_is_an_error_never_a_fetch():
    with pytest.raises(ScoringError, match="scoring is offline"):
        json_schema("1", {"$ref": "http://127.0.0.1:9/schema.json"})


def test_invalid_schema_is_an_error():
    with pytest.raises(ScoringError, match="schema"):
        compile_schema({"type": "no-such-type"})


def test_validators_are_compiled_once():
    schema = {"type": "object", "properties": {"q": {"type": "integer"}}}
    assert compile_schema(schema) is compile_schema(json.loads(json.dumps(schema)))


def test_lenient_mode_accepts_a_fence():
    result = json_schema('Sure!\n```json\n{"a": 1}\n```', {"type": "object"}, bare_json=False)
    assert result.passed
