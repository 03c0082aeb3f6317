"""Probe files: the reference probe, the format schema, the lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import jevalkit
from jevalkit.errors import ProbeError
from jevalkit.probes import check_probes, load_probe, probe_card, publish_probes, read_lock

REFERENCE = Path(__file__).resolve().parents[3] / "shared/reference/probe-schema-ten-records-v2.txt"


def test_reference_probe_matches_the_published_definition():
    probe = jevalkit.load_probe("schema-ten-records@2")
    assert probe.id == "schema-ten-records" and probe.version == 2
    assert [m.role for m in probe.messages] == ["system", "user"]
    assert dict(probe.parameters) == {"max_tokens": 1700, "temperature": 0}
    assert len(probe.rubric) == 6
    assert [e.expect for e in probe.examples] == ["pass", "fail", "fail", "fail", "fail"]
    schema = probe.scoring["schema"]
    assert schema["minItems"] == schema["maxItems"] == 10
    assert schema["items"]["additionalProperties"] is False


@pytest.mark.skipif(not REFERENCE.exists(), reason="shared/reference is not beside this checkout")
def test_messages_and_rubric_are_verbatim_from_the_reference():
    reference = REFERENCE.read_text(encoding="utf-8")
    probe = jevalkit.load_probe("schema-ten-records@2")
    for message in probe.messages:
        assert message.content in reference
    for line in probe.rubric:
        assert line.text in reference
    for example in probe.examples:
        assert example.output in reference


def test_worked_examples_score_as_they_must():
    results = jevalkit.load_probe("schema-ten-records").check_examples()
    assert [r.score.value for r in results] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert all(r.ok for r in results)


def test_version_4_checks_the_id_order_the_prompt_asks_for_and_2_and_3_do_not():
    """ "id: integer, 1 through 10, in order": v2 (as the seeds publish it) and v3 check only
    that each id is an integer; v4 checks the order too (issue 54.2)."""
    counted_from_1001 = json.dumps(
        [{"id": 1000 + i, "name": f"U{i}", "active": True} for i in range(1, 11)]
    )
    swapped = json.loads(counted_from_1001)
    for i, item in enumerate(swapped):
        item["id"] = [1, 2, 3, 4, 5, 6, 7, 9, 8, 10][i]
    for version in (2, 3):
        probe = load_probe(f"schema-ten-records@{version}")
        assert probe.score(counted_from_1001).passed and probe.score(json.dumps(swapped)).passed
    v4 = load_probe("schema-ten-records@4")
    score = v4.score(counted_from_1001)
    assert not score.passed and score.first_failing_item == 0
    assert {c.id: c.passed for c in score.checks} == {
        "bare_json": True,
        "ten_objects": True,
        "exact_keys": True,
        "integer_ids": True,
        "ids_in_order": False,
        "boolean_active": True,
        "no_nulls": True,
    }
    score = v4.score(json.dumps(swapped))
    assert not score.passed and score.first_failing_item == 7
    assert score.errors == ("$[7].id: 8 was expected", "$[8].id: 9 was expected")
    good = json.dumps([{"id": i, "name": f"U{i}", "active": False} for i in range(1, 11)])
    assert v4.score(good).passed
    # the rest is version 3's: messages, variants, parameters
    v3 = load_probe("schema-ten-records@3")
    assert v4.chat_messages() == v3.chat_messages() and v4.variant_ids == v3.variant_ids
    assert dict(v4.parameters) == dict(v3.parameters)


def test_latest_version_is_the_default():
    assert load_probe("schema-ten-records").name == "schema-ten-records@4"


def test_unknown_version_names_what_exists():
    with pytest.raises(ProbeError, match="has no version 7; published: @2, @3, @4"):
        load_probe("schema-ten-records@7")


def test_bad_reference_syntax():
    with pytest.raises(ProbeError, match="expected `probe-id` or `probe-id@N`"):
        load_probe("Schema Ten")


def test_list_probes_is_a_dataframe():
    table = jevalkit.list_probes()
    row = table.set_index("probe").loc["schema-ten-records@2"]
    assert row["published"] and not row["latest"] and row["n_examples"] == 5
    assert table.set_index("probe").loc["schema-ten-records@4", "latest"]


def test_tampered_probe_is_refused(probes_copy):
    path = probes_copy / "schema-ten-records/v2.yaml"
    path.write_text(path.read_text().replace("max_tokens: 1700", "max_tokens: 1800"))
    with pytest.raises(ProbeError, match="publish the change as the next version"):
        load_probe("schema-ten-records@2", root=probes_copy)
    report = check_probes(root=probes_copy)
    mine = report[report["probe"] == "schema-ten-records@2"]
    assert len(mine) == 1 and not mine["ok"].any() and "content changed" in mine["problem"].iloc[0]
    assert report[report["probe"] != "schema-ten-records@2"]["ok"].all()


def test_reformatting_does_not_change_the_hash(probes_copy):
    path = probes_copy / "schema-ten-records/v2.yaml"
    path.write_text("# a new comment\n" + path.read_text())
    assert load_probe("schema-ten-records@2", root=probes_copy).content_hash == (
        load_probe("schema-ten-records@2").content_hash
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("role: system", "role: bot"), 'v2.yaml: messages[0].role: "bot" is not one of'),
        (("version: 2\n", "version: two\n"), 'v2.yaml: version: "two" is not of type "integer"'),
        (("expect: pass", "expect: maybe"), 'v2.yaml: examples[0].expect: "maybe" is not one of'),
        (("  bare_json: true", "  bare_json: yes please"), "scoring.bare_json"),
        (("title:", "titel:"), '"title" is a required property'),
        (("minItems: 10", "minItems: ten"), "scoring.schema"),
        (("messages:\n", "messages: [\n"), "not valid YAML"),
    ],
)
def test_malformed_probe_gives_one_line_naming_file_and_field(probes_copy, edit, message):
    path = probes_copy / "schema-ten-records/v2.yaml"
    path.write_text(path.read_text().replace(*edit, 1))
    with pytest.raises(ProbeError) as info:
        load_probe("schema-ten-records@2", root=probes_copy)
    text = str(info.value)
    assert message in text and "\n" not in text and str(path) in text


def test_file_name_must_match_version(probes_copy):
    (probes_copy / "schema-ten-records/v2.yaml").rename(probes_copy / "schema-ten-records/v3.yaml")
    with pytest.raises(ProbeError, match="must match the file's place"):
        load_probe("schema-ten-records@3", root=probes_copy)


def test_publishing_a_new_version_adds_one_lock_line(probes_copy):
    folder = probes_copy / "schema-ten-records"
    before = read_lock(probes_copy / "probes.lock")
    text = (folder / "v2.yaml").read_text().replace("version: 2\n", "version: 9\n", 1)
    (folder / "v9.yaml").write_text(text.replace("max_tokens: 1700", "max_tokens: 1000"))
    report = check_probes(["schema-ten-records@9"], root=probes_copy)
    assert "not yet published" in report["note"].iloc[-1] and report["ok"].all()
    assert publish_probes(root=probes_copy) == ["schema-ten-records@9"]
    lock = read_lock(probes_copy / "probes.lock")
    assert set(lock) == {*before, "schema-ten-records@9"} and lock.items() >= before.items()
    assert check_probes(root=probes_copy)["ok"].all()


def test_a_probe_without_a_failing_example_fails_its_check(probes_copy):
    path = probes_copy / "schema-ten-records/v2.yaml"
    path.write_text(path.read_text().replace("expect: fail", "expect: pass"))
    (probes_copy / "probes.lock").unlink()
    publish_probes(root=probes_copy)
    report = check_probes(root=probes_copy)
    assert "has no worked example that must fail" in set(report["problem"])
    assert (report["problem"].str.contains("must score 1, scored 0")).sum() == 4


def test_probe_card_has_every_section_and_a_keyless_curl():
    card = probe_card(load_probe("schema-ten-records@2"))
    for heading in [
        "## Messages",
        "## Parameters",
        "## Rubric",
        "## Scoring",
        "## Worked examples",
        "## Version history",
        "## Run it yourself",
    ]:
        assert heading in card
    assert '"max_tokens": 1700' in card and "Bearer $OPENROUTER_API_KEY" in card
    assert "scores 1, ok" in card and "BROKEN" not in card


def test_list_probes_lists_the_users_folder_beside_the_bundled_one(tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    jevalkit.probes.new_probe("my-probe", cases=write_cases(tmp_path), probes_dir=mine)
    monkeypatch.setenv("JEVALKIT_PROBES", str(mine))
    table = jevalkit.list_probes().set_index("probe")
    assert table.loc["my-probe@1", "folder"] == str(mine)
    assert "schema-ten-records@3" in table.index  # the bundled probes are still listed
    alone = jevalkit.list_probes(root=mine)
    assert alone["probe"].tolist() == ["my-probe@1"]


def write_cases(folder):
    path = folder / "qa.csv"
    path.write_text("id,question,expected\nq1,Capital of France?,Paris\n")
    return path
