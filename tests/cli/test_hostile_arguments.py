"""Every CLI command with hostile arguments and files: one line on stderr, exit 2, no traceback.

Issues 15.2 and 19.11-20. The commands run in-process through ``jevalkit.cli.main`` (an exception
escaping it fails the test just as a traceback would); a few run as a subprocess to check the
real console output too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jevalkit._paths import data_dir
from jevalkit.cli import main
from jevalkit.results import ResultRow

ALIAS_BOMB = """a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(code: int, err: str, *needles: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (code, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def row(**fields) -> str:
    base = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0)
    return json.dumps({**base.__dict__, **fields})


@pytest.fixture
def files(tmp_path):
    f = {}
    f["dir"] = tmp_path / "folder"
    f["dir"].mkdir()
    f["file"] = tmp_path / "plain.txt"
    f["file"].write_text("hello")
    f["empty"] = tmp_path / "empty.jsonl"
    f["empty"].write_text("")
    f["latin1"] = tmp_path / "latin1.jsonl"
    f["latin1"].write_bytes(b'{"id": "caf\xe9"}\n')
    f["foreign"] = tmp_path / "foreign.jsonl"
    f["foreign"].write_text(
        "\n".join(json.dumps({"item": i, "who": "m", "mark": 7}) for i in range(300)) + "\n"
    )
    f["nan"] = tmp_path / "nan.jsonl"
    f["nan"].write_text(
        row(score=0.5).replace('"score":0.5', '"score":NaN').replace('"score": 0.5', '"score": NaN')
        + "\n"
    )
    f["list_label"] = tmp_path / "list_label.jsonl"
    f["list_label"].write_text(row(label=["x"]) + "\n")
    f["wrong_type"] = tmp_path / "wrong_type.jsonl"
    f["wrong_type"].write_text(row(repeat="zero") + "\n")
    f["deep"] = tmp_path / "deep.jsonl"
    f["deep"].write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    f["fifo"] = tmp_path / "fifo"
    os.mkfifo(f["fifo"])
    f["bomb"] = tmp_path / "bomb.yaml"
    f["bomb"].write_text(ALIAS_BOMB)
    return f


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--repeats", "0"], "repeats must be a whole number of at least 1 or 'auto', got 0"),
        (["--repeats", "-3"], "repeats must be a whole number"),
        (["--repeats", "x"], "argument --repeats: expected a whole number or 'auto'"),
        (["--concurrency", "0"], "concurrency must be a whole number of at least 1"),
        (["--timeout", "0"], "timeout must be a positive number of seconds"),
        (["--timeout", "-1"], "timeout must be a positive number of seconds"),
        (["--timeout", "nan"], "timeout must be a positive number of seconds"),
        (["--max-retries", "-1"], "max_retries must be 0 or more"),
        (["--max-response-bytes", "0"], "max_response_bytes must be a whole number"),
        (["--temperature", "nan"], "temperature must be a finite number from 0 to 2"),
        (["--temperature", "-1"], "temperature must be a finite number from 0 to 2"),
        (["--top-p", "7"], "top_p must be a finite number from 0 to 1"),
        (["--max-tokens", "0"], "max_tokens must be a whole number from 1 to 10,000,000"),
        (["--seed", "-5"], "seed must be a whole number from 0 to 9,223,372,036,854,775,807"),
        (["--stop", ""], "stop must be a text or a list of up to 16 texts, none empty"),
        (["--frequency-penalty", "3"], "frequency_penalty must be a finite number from -2 to 2"),
        (["--presence-penalty", "inf"], "presence_penalty must be a finite number from -2 to 2"),
        (["--top-k", "-1"], "top_k must be a whole number of at least 0"),
        (["--base-url", "http://[::1"], "cannot be parsed"),
        (["--base-url", "ftp://nowhere"], "is not an http(s) URL"),
        (["--api-key-env", "NOT A NAME"], "is not an environment variable name"),
    ],
)
def test_run_refuses_bad_settings(capsys, tmp_path, args, needle):
    argv = [
        "run",
        "schema-ten-records",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        str(tmp_path / "r.jsonl"),
        *args,
    ]
    code, _, err = cli(capsys, *argv)
    assert_one_line(code, err, needle)
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(
    ("out", "needle"),
    [
        ("{file}/r.jsonl", "is a file, not a folder"),
        ("{dir}", "not a regular file (a folder)"),
        ("/dev/full", "not a regular file (a character device)"),
        ("{fifo}", "not a regular file (a FIFO)"),
    ],
)
def test_run_refuses_an_unusable_results_path(capsys, files, out, needle):
    out = out.format(**{k: str(v) for k, v in files.items()})
    code, _, err = cli(
        capsys,
        "run",
        "schema-ten-records",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        out,
    )
    assert_one_line(code, err, needle)


def test_run_refuses_unknown_and_undecodable_probes(capsys, tmp_path):
    base = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "r")]
    assert_one_line(
        *cli(capsys, "run", "no-such-probe", *base)[::2], "unknown probe 'no-such-probe'"
    )
    assert_one_line(*cli(capsys, "run", "caf\udce9", *base)[::2], "expected `probe-id`")


def test_constraining_a_probe_without_a_schema_is_refused(capsys, tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(data_dir(), data)
    folder = data / "probes" / "exact-hello"
    folder.mkdir()
    (folder / "v1.yaml").write_text(
        "id: exact-hello\nversion: 1\ntitle: Say hello\ndescription: Says hello.\n"
        "messages: [{role: user, content: Say hello.}]\nparameters: {max_tokens: 5}\n"
        "rubric: [{id: hello, text: Says hello}]\nscoring: {type: exact_match, expected: hello}\n"
        "examples: [{label: good, output: hello, expect: pass}, {label: bad, output: bye, expect: fail}]\n"
        "history: [{version: 1, note: first}]\n"
    )
    monkeypatch.setenv("JEVALKIT_DATA_DIR", str(data))
    assert cli(capsys, "probes", "lock")[0] == 0
    code, _, err = cli(
        capsys,
        "run",
        "exact-hello",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        str(tmp_path / "r"),
        "--constrained",
    )
    assert_one_line(code, err, "exact-hello@1 is scored by exact_match, not a JSON Schema")


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("missing", "no such results file"),
        ("dir", "not a regular file (a folder)"),
        ("fifo", "not a regular file (a FIFO)"),
        ("latin1", "latin1.jsonl:1: not UTF-8 text (byte 11)"),
        (
            "foreign",
            "missing column(s) kind, probe, version, model, repeat; convert it first with `jevalkit import",
        ),
        ("nan", "NaN is not valid JSON"),
        ("list_label", 'label: ["x"] is not of types'),
        ("wrong_type", 'repeat: "zero" is not of type "integer"'),
        ("deep", "nested too deeply"),
    ],
)
def test_metrics_and_gate_refuse_unusable_results(capsys, files, tmp_path, name, needle):
    path = str(files.get(name, tmp_path / "nope.jsonl"))
    assert_one_line(*cli(capsys, "metrics", path)[::2], needle)
    assert_one_line(*cli(capsys, "gate", path, "--min", "0.5")[::2], needle)


def test_metrics_refuses_dev_zero(capsys):
    assert_one_line(*cli(capsys, "metrics", "/dev/zero")[::2], "not a regular file")


def test_gate_on_an_empty_file_is_unusable_input(capsys, files):
    code, out, _ = cli(capsys, "gate", str(files["empty"]), "--min", "0.5")
    assert code == 2 and out.startswith("REFUSED") and "no scored rows" in out
    assert_one_line(*cli(capsys, "gate", str(files["empty"]), "--min", "2")[::2], "from 0 to 1")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--data", "{missing}"], "no such case file"),
        (["--data", "{empty}"], "no cases (an empty file)"),
        (["--data", "{latin1}"], "not UTF-8 text"),
        (["--data", "{dir}"], "is a folder"),
        (["--data", "faithfulness", "--n-samples", "0"], "expected a whole number from 1 to 1,000"),
        (
            ["--data", "faithfulness", "--min-coverage", "2"],
            "min_coverage must be a number from 0 to 1",
        ),
        (["--data", "faithfulness", "--repeats", "0"], "repeats must be a whole number"),
        (["--data", "faithfulness"], "faithfulness is a model judge: give a model"),
    ],
)
def test_judge_refuses_bad_data_and_settings(capsys, files, tmp_path, args, needle):
    args = [a.format(missing=tmp_path / "none.jsonl", **files) for a in args]
    code, _, err = cli(capsys, "judge", "faithfulness", *args, "--out", str(tmp_path / "j"))
    assert_one_line(code, err, needle)


@pytest.mark.parametrize("gold", ['"9"', '"abc"', "4.5", "true"])
def test_judge_gold_outside_the_levels_is_refused_naming_them(capsys, tmp_path, gold):
    cases = tmp_path / "c.jsonl"
    cases.write_text(f'{{"id": "a", "context": "c", "output": "o", "gold": {gold}}}\n')
    code, _, err = cli(
        capsys,
        "judge",
        "faithfulness",
        "--data",
        str(cases),
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
    )
    assert_one_line(code, err, "c.jsonl:1: gold:")
    if gold in ('"9"', '"abc"'):
        assert "valid levels: '0', '1', '2', '3', '4'" in err


def test_readme_tool_call_command_and_malformed_calls(capsys, tmp_path):
    code, out, err = cli(
        capsys,
        "judge",
        "tool_call_accuracy",
        "--data",
        "tool_call_accuracy",
        "--out",
        str(tmp_path / "t.jsonl"),
    )
    assert code == 0, err
    assert "deterministic" in out and "exact_agreement" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "x", "tool_calls": ["not a call"], "expected_tool_calls": [{"name": "f"}]}\n'
    )
    assert_one_line(
        *cli(capsys, "judge", "tool_call_accuracy", "--data", str(bad))[::2],
        "bad.jsonl:1: tool_calls[0]",
    )


@pytest.mark.parametrize("kind", ["probe", "judge"])
def test_alias_bombs_and_absurd_values_in_data_files_are_refused(
    capsys, tmp_path, monkeypatch, kind
):
    data = tmp_path / "data"
    shutil.copytree(data_dir(), data)
    monkeypatch.setenv("JEVALKIT_DATA_DIR", str(data))
    folder = data / ("probes/bomb" if kind == "probe" else "judges/bomb")
    folder.mkdir()
    (folder / "v1.yaml").write_text(ALIAS_BOMB)
    command = ["probes", "check"] if kind == "probe" else ["judges", "lock"]
    code, out, err = cli(capsys, *command)
    text = out + err
    assert (
        code in (1, 2)
        and "YAML aliases (*name) are not allowed" in text
        and "Traceback" not in text
    )
    (folder / "v1.yaml").write_text("version: " + "9" * 5000 + "\n")
    code, out, err = cli(capsys, *command)
    assert "a value cannot be read" in out + err
    (folder / "v1.yaml").write_text("id: x\nschema: " + "[" * 3000 + "]" * 3000 + "\n")
    code, out, err = cli(capsys, *command)
    assert "nested" in out + err and "Traceback" not in out + err


def test_report_refuses_code_in_parameter_names_and_unknown_parameters(capsys, tmp_path):
    out = str(tmp_path / "r")
    code, _, err = cli(
        capsys,
        "report",
        "probe_report",
        "-p",
        "x=__import__('os').system('touch pwned')#",
        "1",
        "--out",
        out,
    )
    assert_one_line(
        code,
        err,
        "is not a Python name",
        "this notebook's parameters: headline_path, probe, results",
    )
    assert not Path("pwned").exists()
    assert_one_line(
        *cli(capsys, "report", "probe_report", "-p", "model", "m", "--out", out)[::2],
        "no parameter 'model'",
    )
    assert_one_line(
        *cli(capsys, "report", "no_such_notebook")[::2], "no notebook 'no_such_notebook'"
    )
    (tmp_path / "taken").write_text("a file")
    assert_one_line(
        *cli(capsys, "report", "probe_report", "--out", str(tmp_path / "taken"))[::2],
        "is a file, not a folder",
    )


def test_batch_files_are_checked_before_anything_runs(capsys, tmp_path, files):
    batch = tmp_path / "b.yaml"
    assert_one_line(*cli(capsys, "report", "--batch", str(files["bomb"]))[::2], "YAML aliases")
    assert_one_line(
        *cli(capsys, "report", "--batch", str(tmp_path / "none.yaml"))[::2], "no such file"
    )
    batch.write_text("notebook: probe_report\ngrid: {probe: [a]}\nout: r/{probe\n")
    assert_one_line(*cli(capsys, "report", "--batch", str(batch))[::2], "is not a pattern")
    batch.write_text("notebook: probe_report\ngrid: {'x=1#': [a]}\nout: r/x\n")
    assert_one_line(*cli(capsys, "report", "--batch", str(batch))[::2], "is not a Python name")
    batch.write_text("notebook: probe_report\ngrid: {probe: [a]}\nout: r/{probe}\n")
    assert_one_line(
        *cli(capsys, "report", "--batch", str(batch), "--workers", "0")[::2],
        "workers must be a whole number of at least 1",
    )


def test_an_unreachable_scheduler_fails_fast_with_one_line(capsys, tmp_path):
    batch = tmp_path / "b.yaml"
    batch.write_text("notebook: probe_report\ngrid: {probe: [a]}\nout: r/{probe}\n")
    code, _, err = cli(capsys, "report", "--batch", str(batch), "--scheduler", "tcp://127.0.0.1:9")
    assert_one_line(code, err, "cannot reach the Dask scheduler tcp://127.0.0.1:9")


def test_probes_and_score_refuse_bad_input(capsys, tmp_path, files):
    assert_one_line(*cli(capsys, "probes", "show", "nope")[::2], "unknown probe 'nope'")
    assert_one_line(
        *cli(capsys, "probes", "page", "schema-ten-records", "--out", str(files["dir"]))[::2],
        "is a folder",
    )
    page = tmp_path / "new" / "folder" / "page.html"
    assert cli(capsys, "probes", "page", "schema-ten-records", "--out", str(page))[0] == 0
    assert page.is_file()
    assert_one_line(
        *cli(capsys, "score", "nope", "--file", str(files["file"]))[::2], "unknown probe"
    )
    assert_one_line(
        *cli(capsys, "score", "schema-ten-records", "--file", str(files["dir"]))[::2],
        "is a folder, not an output file",
    )
    assert_one_line(
        *cli(capsys, "score", "schema-ten-records", "--file", "/dev/zero")[::2],
        "not a model output",
    )


def test_local_commands_refuse_bad_settings(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_STATE_DIR", str(tmp_path))
    assert_one_line(
        *cli(capsys, "local", "serve", "--slots", "0")[::2], "slots must be a whole number"
    )
    assert_one_line(
        *cli(capsys, "local", "serve", "--port", "70000")[::2], "port must be from 1 to 65535"
    )
    assert_one_line(*cli(capsys, "local", "serve", "--threads", "-1")[::2], "threads must be")


def test_a_real_console_shows_one_line_too(tmp_path):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    cmd = [
        sys.executable,
        "-m",
        "jevalkit.cli",
        "run",
        "schema-ten-records",
        "--model",
        "x",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--repeats",
        "0",
    ]
    out = subprocess.run(cmd, capture_output=True, timeout=60, env=env)
    assert out.returncode == 2 and out.stderr.decode().count("\n") == 1
    assert b"Traceback" not in out.stderr


def test_an_empty_model_name_or_an_unset_key_variable_sends_nothing(
    capsys, tmp_path, openai_server
):
    # issue 37.11: --model "" sent "model": "" and recorded model "deterministic"; --api-key-env
    # NAME with NAME unset sent every request without a key, and said nothing
    os.environ.pop("JEVALKIT_UNSET_KEY", None)
    base = ["run", "schema-ten-records", "--base-url", openai_server.base_url]
    for extra, words in (
        (["--model", ""], "give the model to run"),
        (["--model", "  "], "model must name the model to ask"),
        (["--model", "m", "--api-key-env", "JEVALKIT_UNSET_KEY"], "$JEVALKIT_UNSET_KEY is not set"),
    ):  # (the dry run sends nothing and needs no key: it plans without one)
        out = tmp_path / "r.jsonl"
        assert_one_line(*cli(capsys, *base, *extra, "--out", str(out))[::2], words)
        assert not out.exists() and list(tmp_path.iterdir()) == []
    assert openai_server.requests == []
    os.environ["JEVALKIT_UNSET_KEY"] = "a-key-that-is-set"
    try:
        ok = [
            "--model",
            "m",
            "--api-key-env",
            "JEVALKIT_UNSET_KEY",
            "--out",
            str(tmp_path / "ok.jsonl"),
        ]
        assert cli(capsys, *base, *ok)[0] == 0
    finally:
        del os.environ["JEVALKIT_UNSET_KEY"]
    assert {r["headers"].get("Authorization") for r in openai_server.requests} == {
        "Bearer a-key-that-is-set"
    }
