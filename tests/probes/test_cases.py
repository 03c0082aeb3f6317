"""Probes with cases (format 2): case files, templates, per-case scoring, the lock, variants."""

from __future__ import annotations

import pytest
from probe_folders import case_rows, write_probe

import jevalkit
from jevalkit.errors import CaseFileError, ProbeError
from jevalkit.probes import check_probes, load_probe


def test_cases_are_listed_with_ids_and_fields(tmp_path):
    write_probe(tmp_path)
    probe = load_probe("double", root=tmp_path)
    assert len(probe.cases) == 30 and probe.cases[0].id == "c01"
    assert probe.cases[4].fields == {"x": 5, "expected": "10"} and probe.cases[4].position == 5
    assert probe.chat_messages(probe.cases[4])[1]["content"] == "What is twice 5?"
    assert probe.score("10\n", "c05").passed and not probe.score("10", "c06").passed
    assert check_probes(root=tmp_path)["ok"].all()


def test_csv_cases_and_the_bundled_library_check(tmp_path):
    folder = tmp_path / "double"
    write_probe(tmp_path, publish=False, rows=[{"id": "x", "x": 1, "expected": "2"}])
    (folder / "cases.jsonl").unlink()
    (folder / "cases.csv").write_text("id,x,expected\nc02,2,4\nc03,3,6\n")
    text = (folder / "v1.yaml").read_text().replace("cases.jsonl", "cases.csv")
    (folder / "v1.yaml").write_text(text)
    probe = load_probe("double", root=tmp_path)
    assert [c.fields["x"] for c in probe.cases] == ["2", "3"]
    report = check_probes()  # the bundled probes, the library included
    assert report["ok"].all(), report[~report["ok"]]


def test_a_changed_case_file_without_a_new_version_is_refused(tmp_path):
    write_probe(tmp_path)
    cases = tmp_path / "double" / "cases.jsonl"
    cases.write_text(cases.read_text().replace('"expected": "4"', '"expected": "5"'))
    with pytest.raises(ProbeError, match=r"with its case file cases.jsonl\): content changed"):
        load_probe("double", root=tmp_path)
    report = check_probes(root=tmp_path)
    assert not report["ok"].any() and "publish the change" in report["problem"][0]


def test_a_missing_field_names_the_case_and_the_field(tmp_path):
    rows = case_rows(5)
    del rows[3]["x"]
    with pytest.raises(ProbeError, match=r"case 'c04': no field 'x' for the placeholder \{\{x\}\}"):
        write_probe(tmp_path, rows=rows)


@pytest.mark.parametrize(
    "template",
    ["{{__class__}}", "{{x.__class__}}", "{{ {{x}} }}", "{{{{x}}}}", "{{x|upper}}", "{{x[0]}}"],
)
def test_template_injection_is_refused_at_load(tmp_path, template):
    messages = [{"role": "user", "content": f"What is twice {template}?"}]
    with pytest.raises(ProbeError, match="is not a placeholder"):
        write_probe(tmp_path, messages=messages)


def test_a_case_value_holding_placeholders_is_sent_as_plain_text(tmp_path):
    rows = [
        {"id": "a", "x": "{{y}}", "y": "SECRET", "expected": "0"},
        {"id": "b", "x": "{{__class__}} {x} {{{{y}}}} ${y}", "y": "SECRET", "expected": "0"},
    ]
    write_probe(
        tmp_path,
        rows=rows,
        examples=[
            {"label": "r", "case": "a", "output": "0", "expect": "pass"},
            {"label": "w", "case": "a", "output": "1", "expect": "fail"},
        ],
    )
    probe = load_probe("double", root=tmp_path)
    sent = [probe.chat_messages(c)[1]["content"] for c in probe.cases]
    assert sent == [
        "What is twice {{y}}?",
        "What is twice {{__class__}} {x} {{{{y}}}} ${y}?",
    ]
    assert all("SECRET" not in s for s in sent)


def test_scoring_inputs_stay_out_of_prompts(tmp_path):
    messages = [{"role": "user", "content": "Twice {{x}} is {{expected}}"}]
    with pytest.raises(ProbeError, match="case 'c01': no field 'expected'"):
        write_probe(tmp_path, messages=messages)


def test_per_case_expected_needs_examples_that_name_their_case(tmp_path):
    with pytest.raises(ProbeError, match=r"examples\[right\]: the expected is per case"):
        write_probe(
            tmp_path,
            examples=[
                {"label": "right", "output": "4", "expect": "pass"},
                {"label": "wrong", "case": "c02", "output": "5", "expect": "fail"},
            ],
        )
    with pytest.raises(ProbeError, match=r"no case 'nope'"):
        write_probe(
            tmp_path,
            examples=[
                {"label": "right", "case": "nope", "output": "4", "expect": "pass"},
                {"label": "wrong", "case": "c02", "output": "5", "expect": "fail"},
            ],
        )


def test_a_case_without_an_expected_answer_is_named(tmp_path):
    rows = case_rows(4)
    del rows[2]["expected"]
    with pytest.raises(ProbeError, match="case 'c03' has no `expected`"):
        write_probe(tmp_path, rows=rows)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "c01", "x": 1}\n{"id": "c01", "x": 2}\n', r"cases.jsonl:2: id: duplicate case id"),
        ('{"x": 1}\n', r"cases.jsonl:1: the case has no `id`"),
        ('{"id": "a", "x": NaN}\n', r"cases.jsonl:1: not JSON"),
        ("[1, 2]\n", r"cases.jsonl:1: a case must be an object"),
        ("\n", r"no cases"),
        ('{"id": "a", "x": 1, "gold": {"a": 1}}\n', r"cases.jsonl:1: gold: must be a single"),
    ],
)
def test_bad_case_files_name_the_file_and_line(tmp_path, line, message):
    write_probe(
        tmp_path,
        publish=False,
        scoring={"type": "exact_match", "expected": "2"},
        examples=[
            {"label": "r", "output": "2", "expect": "pass"},
            {"label": "w", "output": "3", "expect": "fail"},
        ],
    )
    (tmp_path / "double" / "cases.jsonl").write_text(line)
    with pytest.raises(CaseFileError, match=message):
        load_probe("double", root=tmp_path)


def test_a_case_file_outside_the_probe_folder_is_refused(tmp_path):
    with pytest.raises(ProbeError, match=r"cases"):
        write_probe(tmp_path, cases="../elsewhere.jsonl")


def test_format_one_files_refuse_cases_with_a_hint(tmp_path):
    with pytest.raises(ProbeError, match="need probe format 2: add `format: 2`"):
        write_probe(tmp_path, format=None)


def test_per_case_json_schema_and_constraints(tmp_path):
    rows = [
        {"id": "a", "n": 2, "schema": {"type": "array", "minItems": 2, "maxItems": 2}},
        {"id": "b", "n": 3, "schema": {"type": "array", "minItems": 3, "maxItems": 3}},
    ]
    write_probe(
        tmp_path,
        rows=rows,
        messages=[{"role": "user", "content": "A JSON array of {{n}} numbers"}],
        scoring={"type": "json_schema"},
        rubric=[{"id": "ok", "text": "valid"}],
        examples=[
            {"label": "two", "case": "a", "output": "[1, 2]", "expect": "pass"},
            {"label": "two for three", "case": "b", "output": "[1, 2]", "expect": "fail"},
        ],
    )
    probe = load_probe("double", root=tmp_path)
    assert probe.score("[1,2,3]", "b").passed and not probe.score("[1,2,3]", "a").passed
    bad = [{"id": "a", "n": 2, "schema": {"$ref": "https://example.com/s.json"}}]
    with pytest.raises(ProbeError, match="case 'a': schema:"):
        write_probe(
            tmp_path / "other",
            rows=bad,
            messages=[{"role": "user", "content": "{{n}}"}],
            scoring={"type": "json_schema"},
            examples=[
                {"label": "two", "case": "a", "output": "[1, 2]", "expect": "pass"},
                {"label": "no", "case": "a", "output": "x", "expect": "fail"},
            ],
        )


def test_inline_cases_and_the_library_probe_card(tmp_path):
    inline = [{"id": 1, "x": 4, "expected": "8"}, {"id": 2, "x": 5, "expected": "10"}]
    examples = [
        {"label": "r", "case": 1, "output": "8", "expect": "pass"},
        {"label": "w", "case": "2", "output": "8", "expect": "fail"},
    ]
    write_probe(tmp_path, cases=inline, examples=examples)
    assert not (tmp_path / "double" / "cases.jsonl").exists()
    probe = load_probe("double", root=tmp_path)
    assert [c.id for c in probe.cases] == ["1", "2"] and probe.cases_sha256 is None
    assert check_probes(root=tmp_path)["ok"].all()
    probe = jevalkit.load_probe("unit-conversion")
    assert len(probe.cases) == 40 and probe.cases_sha256
    card = jevalkit.probes.probe_card(probe)
    assert "## Cases" in card and "40 cases, from `cases.csv`" in card
    assert "| km-to-m-1 | 3 | kilometres | metres | 3000 |" in card
