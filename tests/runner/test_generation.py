"""Generation parameters are defined once (issue 35.4): :class:`jevalkit.generation.GenerationOptions`.
The keywords of a probe run, the command line's flags, the request body (and so the cache key),
the dry run, a probe's parameters and a sampling judge's requests all follow it."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import jevalkit
from jevalkit.cli import build_parser, main
from jevalkit.client import GENERATION, ChatClient, Endpoint, check_generation
from jevalkit.errors import UsageError
from jevalkit.judges import JudgeConfig
from jevalkit.results import read_results
from jevalkit.runner import judge

REPO = Path(__file__).resolve().parents[2]
VALID = {
    "temperature": 0.5,
    "top_p": 0.9,
    "max_tokens": 64,
    "seed": 7,
    "stop": ["END", "##"],
    "frequency_penalty": 0.5,
    "presence_penalty": -0.5,
    "top_k": 40,
    "min_p": 0.05,
    "repetition_penalty": 1.1,
}
ADDED = (
    '    top_a: Annotated[float, Sampling("top-a sampling: drop tokens below A x the top '
    'probability squared", "number", 0, 1, "A")]\n'
)
SCRIPT = """
import contextlib, io, json, sys
from jevalkit.cli import main
base, folder = sys.argv[1], sys.argv[2]
seen = {}
for command in ("run", "gate"):
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.suppress(SystemExit):
        main([command, "--help"])
    seen[command + "_help"] = text.getvalue()
argv = ["run", "schema-ten-records", "--model", "m", "--base-url", base]
for name, value in (("a", "0.5"), ("b", "0.5"), ("c", "0.25")):
    assert main([*argv, "--top-a", value, "--out", f"{folder}/{name}.jsonl"]) == 0
text = io.StringIO()
with contextlib.redirect_stdout(text):
    assert main([*argv, "--top-a", "0.5", "--out", f"{folder}/d.jsonl", "--dry-run"]) == 0
seen["dry_run"] = text.getvalue()
code = main([*argv, "--top-a", "2", "--out", f"{folder}/e.jsonl"])
seen["refused"] = code
print(json.dumps(seen))
"""


def test_the_table_names_every_parameter_once_with_its_help_and_values():
    assert list(GENERATION) == list(VALID)
    for name, sampling in GENERATION.items():
        assert sampling.help and sampling.values() and sampling.allows(VALID[name]), name
    assert check_generation(VALID) == VALID


def test_adding_a_parameter_is_one_line(openai_server, tmp_path):
    """A copy of the package with one line added to GenerationOptions: the new parameter is a
    flag of `run` and `gate` with its help, goes into the request body and the rows, keys the
    cache, shows in the dry run and is checked."""
    src = tmp_path / "src"
    shutil.copytree(
        REPO / "jevalkit", src / "jevalkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", src / "pyproject.toml")
    for folder in ("data", "notebooks"):
        (src / folder).symlink_to(REPO / folder)
    definition = src / "jevalkit" / "generation.py"
    lines = definition.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("    temperature: Annotated["))
    definition.write_text("".join([*lines[:at], ADDED, *lines[at:]]))
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, openai_server.base_url, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    for command in ("run", "gate"):
        assert (
            "--top-a A" in seen[f"{command}_help"] and "top-a sampling" in seen[f"{command}_help"]
        )
    bodies = [r["body"] for r in openai_server.requests]
    assert [b.get("top_a") for b in bodies] == [0.5, 0.25]  # b.jsonl came from the cache
    rows = {name: read_results(tmp_path / f"{name}.jsonl").iloc[0] for name in "abc"}
    assert [rows[n]["parameters"]["top_a"] for n in "abc"] == [0.5, 0.5, 0.25]
    assert [bool(rows[n]["cached"]) for n in "abc"] == [False, True, False]
    assert rows["a"]["params_hash"] != rows["c"]["params_hash"]
    assert '"top_a": 0.5' in seen["dry_run"]
    assert seen["refused"] == 2 and "top_a must be a finite number from 0 to 1" in done.stderr


def test_every_parameter_reaches_the_body_the_rows_and_the_cache_key(openai_server, tmp_path):
    df = jevalkit.run(
        "schema-ten-records",
        "m",
        base_url=openai_server.base_url,
        out=tmp_path / "r.jsonl",
        progress=False,
        **VALID,
    ).rows
    body = openai_server.requests[0]["body"]
    assert {k: body[k] for k in VALID} == VALID
    assert {k: df.loc[0, "parameters"][k] for k in VALID} == VALID
    client = ChatClient(Endpoint(openai_server.base_url), model="m")
    for name in VALID:
        other = {**body, name: body[name] + ["x"] if name == "stop" else body[name] / 2}
        assert client.key_for("/chat/completions", other, 0) != client.key_for(
            "/chat/completions", body, 0
        ), name


@pytest.mark.parametrize("name", list(GENERATION))
def test_every_parameter_is_a_flag_of_run_and_gate_and_shows_in_the_dry_run(name, capsys, tmp_path):
    flag = "--" + name.replace("_", "-")
    value = VALID[name]
    given = [a for v in value for a in (flag, v)] if name == "stop" else [flag, str(value)]
    for command in (["run", "schema-ten-records", "--model", "m"], ["gate", "r.jsonl"]):
        args = build_parser().parse_args([*command, *given])
        assert getattr(args, name) == value
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--out", str(tmp_path / "r.jsonl"), "--dry-run", *given]) == 0
    shown = capsys.readouterr().out
    assert f'"{name}": {json.dumps(value)}' in shown


def test_a_probe_whose_parameters_break_the_definition_is_refused_naming_it(tmp_path):
    probe = jevalkit.load_probe("schema-ten-records")
    bad = dataclasses.replace(probe, parameters={**probe.parameters, "stop": [""]})
    with pytest.raises(UsageError, match=r"schema-ten-records@4: parameters: stop must be a text"):
        jevalkit.plan(bad, "m", base_url="http://127.0.0.1:9/v1", out=tmp_path / "r.jsonl")


def test_a_sampling_judge_sends_the_generation_parameters_of_its_config(openai_server, tmp_path):
    openai_server.reply = lambda body: "4"
    config = JudgeConfig(method="sampling", n_samples=2, generation={"top_p": 0.5, "stop": "\n"})
    df = judge(
        "faithfulness",
        "faithfulness",
        "m",
        config=config,
        base_url=openai_server.base_url,
        out=tmp_path / "j.jsonl",
        progress=False,
        cache=False,
        seed=3,
    ).rows
    bodies = [r["body"] for r in openai_server.requests]
    assert {(b["top_p"], b["stop"], b["temperature"]) for b in bodies} == {(0.5, "\n", 1.0)}
    assert df["error"].isna().all() and df["parameters"].map(lambda p: p["top_p"]).eq(0.5).all()
    plain = JudgeConfig(method="sampling", n_samples=2).parameters()
    assert "top_p" not in plain  # other parameters, another configuration (another params_hash)
    with pytest.raises(UsageError, match="'temperature' is not a generation parameter the config"):
        JudgeConfig(method="sampling", generation={"temperature": 0.2})
    with pytest.raises(UsageError, match="frequency_penalty must be a finite number from -2 to 2"):
        JudgeConfig(method="sampling", generation={"frequency_penalty": 9})
