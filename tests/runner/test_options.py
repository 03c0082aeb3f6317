"""The run options are defined once (issue 25.2): :class:`RunOptions` is the only list; the
settings, the keywords of every entry point and the command-line flags are derived from it."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect

import pytest

import jevalkit
from jevalkit.cli import build_parser
from jevalkit.judges import ajudge, judge
from jevalkit.runner import RUN_OPTIONS, RunOptions, RunSettings, arun, plan, run

ENTRY_POINTS = [run, arun, plan, judge, ajudge]
COMMANDS = {
    "run": ["run", "schema-ten-records", "--model", "m"],
    "judge": ["judge", "faithfulness", "--data", "faithfulness", "--model", "m"],
    "gate": ["gate", "r.jsonl", "--min", "0.5"],
}


def run_options(args) -> dict:
    """The run options a parsed command line carries (an attribute per option)."""
    return {name: getattr(args, name) for name in RUN_OPTIONS if hasattr(args, name)}


def test_the_settings_have_a_field_per_option_with_its_default():
    fields = {f.name: f.default for f in dataclasses.fields(RunSettings)}
    assert fields == {name: option.default for name, option in RUN_OPTIONS.items()}
    assert list(RUN_OPTIONS) == list(RunOptions.__annotations__)


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_every_entry_point_takes_the_options_and_spells_none_out(entry):
    params = inspect.signature(entry).parameters
    variadic = [p for p in params.values() if p.kind is p.VAR_KEYWORD]
    assert [str(p.annotation) for p in variadic] == ["Unpack[RunOptions]"]
    assert set(params) & set(RUN_OPTIONS) == set(), "a run option spelled out again"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_command_line_has_a_flag_per_option_with_the_same_default(command):
    args = build_parser().parse_args(COMMANDS[command])
    flagged = {n for n, o in RUN_OPTIONS.items() if o.cli_flag(n) is not None}
    if command == "gate":
        flagged -= {"out"}  # gate's RESULTS argument is where the rows go
    got = run_options(args)
    assert set(got) == flagged
    assert got == {n: RUN_OPTIONS[n].default for n in flagged}


def test_flags_set_the_option_of_the_same_name():
    args = build_parser().parse_args(
        [*COMMANDS["judge"], "--repeats", "auto", "--max-retries", "1", "--no-cache"]
    )
    got = run_options(args)
    assert (got["repeats"], got["max_retries"], got["cache"]) == ("auto", 1, False)


def test_a_keyword_that_is_not_an_option_is_refused_naming_the_options(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'concurency'; the run op"):
        jevalkit.run("schema-ten-records", "m", concurency=2, out=tmp_path / "r.jsonl")
    with pytest.raises(TypeError, match="'retries'"):
        asyncio.run(ajudge("faithfulness", "faithfulness", "m", retries=2))


def test_python_only_options_have_no_flag_and_booleans_that_default_on_turn_off():
    assert RUN_OPTIONS["progress"].cli_flag("progress") is None
    assert RUN_OPTIONS["adaptive"].cli_flag("adaptive") is None
    assert RUN_OPTIONS["cache"].cli_flag("cache") == "--no-cache"
    assert RUN_OPTIONS["retry_errors"].cli_flag("retry_errors") == "--retry-errors"
