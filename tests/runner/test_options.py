"""The run options are defined once (issues 25.2 and 35): :class:`RunSettings`, written out field by
field, is the definition; the keywords of every entry point (:class:`RunOptions`) and the
command-line flags are derived from it and checked against it here."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import typing

import pytest

import jevalkit
from jevalkit.cli import build_parser
from jevalkit.client import GENERATION, GenerationOptions
from jevalkit.runner import (
    RUN_OPTIONS,
    ProbeChoices,
    ProbeOptions,
    RunOptions,
    RunSettings,
    ajudge,
    arun,
    judge,
    plan,
    run,
)

ENTRY_POINTS = {run: "ProbeOptions", arun: "ProbeOptions", plan: "ProbeOptions"}
ENTRY_POINTS |= {judge: "RunOptions", ajudge: "RunOptions"}
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


def test_the_settings_are_written_out_where_an_editor_sees_them():
    # a class in the source, each field typed and given its help there, not generated
    source = inspect.getsource(RunSettings)
    assert source.startswith("@dataclass(frozen=True, kw_only=True)\nclass RunSettings:")
    hints = typing.get_type_hints(RunSettings)
    for field in dataclasses.fields(RunSettings):
        assert f"    {field.name}: {field.type} = option(" in source, field.name
        assert field.metadata["option"].help, field.name
    assert dataclasses.fields(RunSettings)[0].name == "base_url" and hints


def test_the_keywords_of_the_entry_points_are_the_settings_fields_with_their_types():
    settings = typing.get_type_hints(RunSettings)
    assert typing.get_type_hints(RunOptions) == {n: settings[n] for n in RUN_OPTIONS}
    assert list(RunOptions.__annotations__) == list(RUN_OPTIONS)  # in the same order


def test_a_probe_run_takes_the_run_options_the_generation_parameters_and_the_choices():
    names = [*RUN_OPTIONS, *GenerationOptions.__annotations__, *ProbeChoices.__annotations__]
    assert sorted(ProbeOptions.__annotations__) == sorted(names)
    assert len(set(names)) == len(names)  # no keyword means two things
    assert list(GENERATION) == list(GenerationOptions.__annotations__)


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_every_entry_point_takes_the_options_and_spells_none_out(entry):
    params = inspect.signature(entry).parameters
    variadic = [p for p in params.values() if p.kind is p.VAR_KEYWORD]
    assert [str(p.annotation) for p in variadic] == [f"Unpack[{ENTRY_POINTS[entry]}]"]
    options = {*RUN_OPTIONS}
    if ENTRY_POINTS[entry] == "ProbeOptions":  # a judge's seed= is its own (sampling seeds)
        options |= {*GENERATION, *ProbeChoices.__annotations__}
    assert set(params) & options == set(), "an option spelled out again"


def test_no_entry_point_forwards_its_arguments_through_locals():
    for entry in ENTRY_POINTS:
        assert "locals()" not in inspect.getsource(entry), entry.__name__


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
    assert RUN_OPTIONS["design"].cli_flag("design") is None
    assert RUN_OPTIONS["cache"].cli_flag("cache") == "--no-cache"
    assert RUN_OPTIONS["retry_errors"].cli_flag("retry_errors") == "--retry-errors"
