"""lm-eval samples, judge grade and game files, any table, detection and bad input.

lm-evaluation-harness pulls a full deep-learning stack, so its ``--log_samples`` output is written
here from its documented format: ``samples_<task>_<date>.jsonl`` lines with ``doc_id``, ``doc``,
``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics`` and each metric's
value, beside ``results_<date>.json`` (lm-eval ``docs/interface.md``, ``--log_samples``;
written by ``lm_eval/loggers/evaluation_tracker.py``, lm-eval 0.4).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jevalkit import io
from jevalkit._paths import data_dir
from jevalkit.errors import ImportFormatError
from jevalkit.metrics import mean_score, pass_rate

EXAMPLES = data_dir() / "examples"
DATE = "2026-11-30T10-00-00.123456"


@pytest.fixture
def lm_eval(tmp_path):
    rows = []
    for doc in range(5):
        for flt, correct in (("strict-match", doc % 2 == 0), ("flexible-extract", doc != 3)):
            rows.append(
                {
                    "doc_id": doc,
                    "doc": {"question": f"q{doc}"},
                    "target": str(doc * 2),
                    "arguments": {"gen_args_0": {"arg_0": f"q{doc}"}},
                    "resps": [[f"{doc * 2}"]],
                    "filtered_resps": [f"{doc * 2}"],
                    "filter": flt,
                    "metrics": ["exact_match"],
                    "exact_match": float(correct),
                    "doc_hash": f"h{doc}",
                    "prompt_hash": "p",
                    "target_hash": "t",
                }
            )
    samples = tmp_path / f"samples_gsm8k_{DATE}.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = {
        "results": {"gsm8k": {"exact_match,strict-match": 0.6}},
        "higher_is_better": {"gsm8k": {"exact_match": True}},
        "config": {"model": "hf", "model_args": "pretrained=org/tiny-model,dtype=bfloat16"},
    }
    (tmp_path / f"results_{DATE}.json").write_text(json.dumps(results))
    return samples


def test_lm_eval_samples_one_row_per_document_metric_and_filter(lm_eval):
    assert io.detect_format(lm_eval) == "lm_eval"
    df = io.read(lm_eval)
    assert len(df) == 10 and set(df["model"]) == {"org/tiny-model"}
    assert set(df["probe"]) == {
        "gsm8k/exact_match,strict-match",
        "gsm8k/exact_match,flexible-extract",
    }
    strict = df[df["probe"] == "gsm8k/exact_match,strict-match"]
    assert strict["score"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0] and strict["passed"].tolist() == [
        True,
        False,
        True,
        False,
        True,
    ]
    assert {s["filter"] for s in df["source"]} == {"strict-match", "flexible-extract"}
    assert strict["case_id"].tolist() == ["0", "1", "2", "3", "4"] and strict["gold"].tolist() == [
        "0",
        "2",
        "4",
        "6",
        "8",
    ]
    assert pass_rate(df, by="probe")["value"].tolist() == [0.8, 0.6]


def test_lm_eval_without_a_results_file_needs_the_model(lm_eval):
    (lm_eval.parent / f"results_{DATE}.json").unlink()
    with pytest.raises(ImportFormatError, match=r"names the model: pass model="):
        io.read(lm_eval)
    assert set(io.read(lm_eval, model="mine")["model"]) == {"mine"}


def test_grades_with_a_failed_judgment_and_pinned_numbers():
    df = io.read(EXAMPLES / "grades.jsonl")
    assert len(df) == 1280 and set(df["kind"]) == {"judge"} and set(df["probe"]) == {"single-v1"}
    raw = pd.read_json(EXAMPLES / "grades.jsonl", lines=True)
    assert np.allclose(df["expected_level"], raw["score"]) and np.allclose(
        df["score"], (raw["score"] - 1) / 9
    )
    table = mean_score(df, by="system").set_index("system")
    alpha = (
        raw[raw["model"] == "alpha"]
        .assign(s=lambda t: (t["score"] - 1) / 9)
        .groupby(["question_id", "turn"])["s"]
        .mean()
    )
    low, high = sps.t.interval(0.95, len(alpha) - 1, loc=alpha.mean(), scale=sps.sem(alpha))
    assert table.loc["alpha", "n"] == 160 and table.loc["alpha", "value"] == pytest.approx(
        alpha.mean()
    )
    assert (table.loc["alpha", "ci_low"], table.loc["alpha", "ci_high"]) == pytest.approx(
        (low, high)
    )


def test_a_grade_of_minus_one_is_an_error_row_and_a_bad_grade_is_refused(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"question_id": i, "model": "m", "score": s})
            for i, s in enumerate([7, -1, 9])
        )
    )
    df = io.read(path)
    assert df["error"].notna().tolist() == [False, True, False] and df["score"].isna().sum() == 1
    path.write_text(json.dumps({"question_id": 1, "model": "m", "score": "high"}))
    with pytest.raises(
        ImportFormatError, match=r"g.jsonl: record 1: field 'score': 'high' is not a grade"
    ):
        io.read(path, format="grades")
    path.write_text(json.dumps({"question_id": 1, "model": "m", "score": 11}))
    with pytest.raises(ImportFormatError, match=r"outside the scale 1-10"):
        io.read(path, format="grades")


def test_a_table_read_as_grades_names_the_reader_of_tables(tmp_path):
    # a CSV read with --from grades said "not a JSON object (Expecting value)" and no fix
    path = tmp_path / "own.csv"
    path.write_text("model,item,grade\na,1,3\n")
    with pytest.raises(
        ImportFormatError, match=r"own.csv:1: not JSON lines .* 'model,item,grade'.*from_table"
    ):
        io.read(path, format="grades")


def test_pairwise_games_become_one_row_per_game_mapped_to_the_systems():
    df = io.read(EXAMPLES / "pairwise.jsonl")
    raw = pd.read_json(EXAMPLES / "pairwise.jsonl", lines=True)
    assert len(df) == 2 * len(raw) and set(df["kind"]) == {"pairwise"}
    first = df[df["position"] == "a_first"].reset_index(drop=True)
    expected = raw["g1_winner"].map({"model_1": 1.0, "model_2": 0.0, "tie": 0.5})
    assert first["score"].tolist() == expected.tolist()
    assert first["system_a"].tolist() == raw["model_1"].tolist()


def test_verdict_games_against_a_baseline_are_flipped_for_the_first_game(tmp_path):
    path = tmp_path / "arena.jsonl"
    path.write_text(
        json.dumps(
            {
                "question_id": "q1",
                "model": "new",
                "judge": "gpt-4",
                "games": [{"score": "A>>B"}, {"score": "A>B"}],
            }
        )
        + "\n"
    )
    with pytest.raises(ImportFormatError, match=r"pass baseline="):
        io.read(path)
    df = io.read(path, baseline="old")
    # game 1 shows the baseline as A: "A>>B" means the baseline was much better
    assert df["verdict"].tolist() == ["b>>a", "a>b"] and df["score"].tolist() == [0.0, 0.75]
    assert df["position"].tolist() == ["b_first", "a_first"] and set(df["system_b"]) == {"old"}
    path.write_text(
        json.dumps({"question_id": "q1", "model": "new", "games": [{"score": "A>>>B"}, {}]}) + "\n"
    )
    with pytest.raises(
        ImportFormatError, match=r"record 1: games\[0\].score: 'A>>>B' is not one of"
    ):
        io.read(path, format="verdicts", baseline="old")


def test_preferences_against_a_baseline(tmp_path):
    records = [
        {
            "instruction": f"do {i}",
            "output_1": "a",
            "generator_1": "base",
            "output_2": "b",
            "generator_2": "new",
            "annotator": "judge",
            "preference": p,
        }
        for i, p in enumerate([1.0, 2.0, 1.5, None])
    ]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records))
    df = io.read(path)
    assert df["score"].tolist()[:3] == [1.0, 0.0, 0.5] and df["error"].notna().tolist() == [
        False
    ] * 3 + [True]


def test_any_table_with_its_columns_named(tmp_path):
    table = pd.DataFrame(
        {
            "q": [1, 1, 2, 2],
            "llm": ["a", "a", "a", "b"],
            "grade": [9, 7, 10, 3],
            "ok": [True, False, True, False],
            "notes": ["x"] * 4,
        }
    )
    for path in (tmp_path / "t.csv", tmp_path / "t.parquet", tmp_path / "t.jsonl"):
        if path.suffix == ".csv":
            table.to_csv(path, index=False)
        elif path.suffix == ".parquet":
            table.to_parquet(path)
        else:
            table.to_json(path, orient="records", lines=True)
        df = io.from_table(path, case="q", system="llm", level="grade", passed="ok", scale=(1, 10))
        assert df["repeat"].tolist() == [0, 1, 0, 0] and df["source"].iloc[0] == {"notes": "x"}
        assert df["score"].tolist() == pytest.approx([8 / 9, 6 / 9, 1.0, 2 / 9])
    with pytest.raises(ImportFormatError, match=r"no column 'question' \(case=\)"):
        io.from_table(table, case="question", system="llm", score="grade")
    with pytest.raises(
        ImportFormatError, match=r"record 1: 'grade' = 9 is outside \[0, 1\]; pass scale="
    ):
        io.from_table(table, case="q", system="llm", score="grade")


def test_a_spreadsheet_export_is_read_with_its_separator(tmp_path):
    """review-c: a CSV saved by a spreadsheet (BOM, `;` separators, headers with spaces) read
    as one column 'Model Name;Item #;Grade (1-10)', so every name= was "no column"."""
    path = tmp_path / "grades.csv"
    path.write_bytes("\ufeffModel Name;Item #;Grade (1-10)\nA;i1;9\nA;i2;\nB;i1;3\n".encode())
    df = io.from_table(
        path, case="Item #", system="Model Name", level="Grade (1-10)", scale=(1, 10)
    )
    assert df["system"].tolist() == ["A", "A", "B"] and df["case_id"].tolist() == ["i1", "i2", "i1"]
    assert df["score"].tolist()[0] == pytest.approx(8 / 9) and pd.isna(df["score"].iloc[1])


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"hello": 1}\n', "not a format jevalkit reads"),
        ("", "empty file"),
        ("PK\x03\x04 not really a zip", "not a format jevalkit reads"),
        (
            '{"question_id": 1, "model": "m", "score": 5}\n{"question_id": 2, "model": ',
            "g.jsonl:2: not a JSON object",
        ),
    ],
)
def test_bad_input_is_one_line_naming_file_and_record(tmp_path, content, needle):
    path = tmp_path / "g.jsonl"
    path.write_text(content)
    with pytest.raises(ImportFormatError, match=needle):
        io.read(path)


def test_two_fitting_formats_are_refused(tmp_path):
    path = tmp_path / "both.jsonl"
    path.write_text(json.dumps({"question_id": 1, "model": "m", "score": 5, "games": []}) + "\n")
    with pytest.raises(
        ImportFormatError, match=r"fits several formats \(grades, verdicts\); pass format="
    ):
        io.read(path)


def test_the_import_command_reports_per_file_and_writes_results(tmp_path, lm_eval):
    out = tmp_path / "all.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "jevalkit.cli",
        "import",
        str(EXAMPLES / "pairwise.jsonl"),
        str(lm_eval),
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (
        "pairwise.jsonl: 480 rows read as pairwise" in done.stdout
        and "wrote 490 rows" in done.stdout
    )
    import jevalkit

    assert len(jevalkit.read_results(out)) == 490
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert (
        again.returncode == 2 and "already exists" in again.stderr and again.stderr.count("\n") == 1
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"x": 1}\n')
    refused = subprocess.run(
        [*cmd[:4], str(bad), "--out", str(tmp_path / "b.jsonl")], capture_output=True, text=True
    )
    assert (
        refused.returncode == 2
        and "Traceback" not in refused.stderr
        and "bad.jsonl" in refused.stderr
    )


def test_metrics_reads_a_foreign_file_directly():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jevalkit.cli",
            "metrics",
            str(EXAMPLES / "grades.jsonl"),
            "--from",
            "grades",
            "--by",
            "system",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "alpha" in done.stdout and "mean_score" in done.stdout


def test_gate_on_one_foreign_file_reads_it_with_from(capsys):
    from jevalkit.cli import main

    argv = [str(EXAMPLES / "grades.jsonl"), "--from", "grades", "--metric", "mean_score"]
    assert main(["gate", *argv, "--min", "0.0"]) == 0
    passed = capsys.readouterr().out
    assert main(["gate", *argv, "--min", "1.0"]) == 1
    failed = capsys.readouterr().out
    assert "PASS" in passed and "FAIL" in failed


def test_a_nan_lm_eval_metric_is_a_missing_value_kept_not_a_dropped_row(lm_eval):
    lines = lm_eval.read_text().splitlines()
    lines[0] = lines[0].replace('"exact_match": 1.0', '"exact_match": NaN')
    lm_eval.write_text("\n".join(lines) + "\n")
    df = io.read(lm_eval)
    assert len(df) == 10  # was 9: the NaN row vanished
    missing = df[df["score"].isna()]
    assert len(missing) == 1 and missing["error"].iloc[0]["type"] == "missing_value"


def test_a_log_with_records_but_no_rows_is_refused_naming_why(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"results": {"results": []}}))
    with pytest.raises(
        ImportFormatError, match=r"p.json: no promptfoo records found in it \(0 rows\)"
    ):
        io.read(path, format="promptfoo")
