"""``jevalkit report NOTEBOOK --results PATH [-p NAME VALUE]... [--out DIR]``."""

from __future__ import annotations

import argparse
import ast

from ..reports import run_report


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``report`` command."""
    cmd = sub.add_parser(
        "report", help="run a parameterised notebook into .ipynb + .html + headline JSON"
    )
    cmd.add_argument("notebook", metavar="NOTEBOOK", help="a name under notebooks/ or a path")
    cmd.add_argument(
        "--results", metavar="PATH", help="results JSONL (default: the notebook's own)"
    )
    cmd.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="a notebook parameter (VALUE is parsed as a Python literal when it can be)")  # fmt: skip
    cmd.add_argument("--out", default="reports", metavar="DIR")
    cmd.set_defaults(handler=_report)


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _report(args: argparse.Namespace) -> int:
    params = {name: _literal(value) for name, value in args.p}
    report = run_report(args.notebook, results=args.results, parameters=params, out=args.out)
    print(f"notebook: {report.notebook}\nhtml:     {report.html}\nheadline: {report.headline}")
    return 0
