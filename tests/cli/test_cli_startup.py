"""``jevalkit --help`` and ``--version`` answer from the command table, without loading the
scientific stack, and a command loads only its own module (issue 26.13)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jevalkit.cli import COMMANDS, build_parser

HEAVY = ("pandas", "numpy", "scipy", "statsmodels", "httpx", "dask", "jevalkit.runner")


def loaded_after(*argv: str) -> set[str]:
    """The modules loaded by a fresh interpreter that runs ``jevalkit ARGV``."""
    script = (
        "import json, sys\n"
        "from jevalkit.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], [], ["no-such-command"]])
def test_help_and_version_load_no_scientific_stack(argv):
    loaded = loaded_after(*argv)
    assert not {m for m in loaded for h in HEAVY if m == h or m.startswith(h + ".")}


def test_a_command_loads_its_own_module_and_not_the_others():
    loaded = loaded_after("merge", "--help")
    assert "jevalkit.cli.merge" in loaded
    assert not {"jevalkit.cli.report", "jevalkit.cli.compare", "jevalkit.reports"} & loaded


def test_top_level_help_lists_every_command_with_its_help(capsys):
    with pytest.raises(SystemExit):
        build_parser([]).parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, command in COMMANDS.items():
        assert f"{name} {' '.join(command.help.split())}" in text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_parses_alone_as_in_the_full_parser(name):
    def help_of(parser):
        sub = next(a for a in parser._actions if a.dest == "command")
        return sub.choices[name].format_help()

    full = help_of(build_parser())
    assert full == help_of(build_parser([name]))
    assert "options:" in full and "-h, --help" in full
    # the table names the module that declares the command: loaded alone, it is the full one
    others = [n for n, c in COMMANDS.items() if c.module != COMMANDS[name].module]
    assert full != help_of(build_parser(others))


def test_build_parser_takes_any_iterable_and_refuses_unknown_names():
    args = build_parser(c for c in ["score"]).parse_args(["score", "tiny/includes@0"])
    assert args.probe == "tiny/includes@0"
    with pytest.raises(ValueError, match="not jevalkit commands: imports"):
        build_parser(["imports"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--vers"],
        ["-h", "run"],
        ["--version", "run"],
        ["--bogus", "run", "-h"],
        ["probes", "-h", "list"],
        ["run", "--model", "run"],
        ["metrics", "gate"],
        ["ru"],
        [""],
    ],
)
def test_the_lazy_parser_answers_as_the_full_one(argv, capsys):
    def outcome(parser):
        try:
            return "parsed", vars(parser.parse_args(argv)).keys()
        except SystemExit as exc:
            out, err = capsys.readouterr()
            return exc.code, out, err

    # what main() loads: the first word that is not an option, when it names a command
    command = next((word for word in argv if not word.startswith("-")), None)
    command = command if command in COMMANDS else None
    lazy = outcome(build_parser([] if command is None else [command]))
    assert lazy == outcome(build_parser())
