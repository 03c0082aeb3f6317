"""The table of commands: which module declares each one, and its one-line help.

``jevalkit --help`` and ``jevalkit --version`` read only this table, so they answer without
loading the scientific stack; a command loads its own module (and only it) when it runs.
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple


class Command(NamedTuple):
    module: str  # the module of jevalkit.cli that declares the command
    help: str


COMMANDS: dict[str, Command] = {
    "probes": Command("probes", "list, check, show, publish and create probes"),
    "score": Command("score", "score one output (stdin by default) with a probe"),
    "run": Command("run", "run probes against a model (k repeats, resumable)"),
    "merge": Command(
        "merge", "merge the part files of a sharded run (RESULTS.parts/*.jsonl) into RESULTS"
    ),
    "local": Command(
        "local", "the embedded models' servers on 127.0.0.1 (Gemma 3 270M; SmolLM2 chat)"
    ),
    "metrics": Command("metrics", "pass rate, mean score, consistency with n and CI"),
    "gate": Command(
        "metrics",
        "pass only when the interval clears the bar: --min on one run, or --max-drop "
        "between --baseline and --candidate runs",
    ),
    "items": Command(
        "items", "item analysis: dead, negatively discriminating and flaky items; alpha"
    ),
    "leaderboard": Command(
        "items", "scores with intervals, simultaneous rank intervals and tie classes"
    ),
    "design": Command(
        "design", "variance components of a pilot run, and the design that reaches a half-width"
    ),
    "compare": Command("compare", "is B better than A, on which cases, and is it real"),
    "race": Command(
        "race", "race systems on shared cases until their ranking is certified (fewest requests)"
    ),
    "judge": Command("judge", "judge a case set with a model judge (distribution over levels)"),
    "judges": Command("judge", "list and publish judge prompt files"),
    "cascade": Command(
        "cascade", "calibrate a judge cascade on labels (guaranteed agreement), or show one"
    ),
    "import": Command("imports", "read other tools' evaluation logs into a results file"),
    "export": Command(
        "export", "write results where they are published (Every Eval Ever), with uncertainty"
    ),
    "report": Command("report", "run a parameterised notebook into .ipynb + .html + headline JSON"),
    "demo": Command("demo", "the main job end to end on both embedded models, with its reports"),
}


def add_command(
    sub: argparse._SubParsersAction, name: str, **kwargs: Any
) -> argparse.ArgumentParser:
    """Add the sub-command ``name`` with its help from :data:`COMMANDS`."""
    return sub.add_parser(name, help=COMMANDS[name].help, **kwargs)
