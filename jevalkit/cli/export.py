"""``jevalkit export RESULTS... --to every-eval-ever --out record.json``: results where they are
published, each score with its standard error, interval and sample count."""

from __future__ import annotations

import argparse

from .. import io
from ._commands import add_command

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``export`` command."""
    cmd = add_command(sub, "export")
    cmd.add_argument("results", nargs="+", metavar="RESULTS", help="results files (or logs)")
    cmd.add_argument("--to", required=True, choices=io.EXPORT_FORMATS, help="the format")
    cmd.add_argument("--out", required=True, metavar="FILE", help="the JSON record to write")
    cmd.add_argument("--model", help="the model to export when the results hold several")
    cmd.add_argument(
        "--organization",
        default="unknown",
        help="who ran the evaluation (source_organization_name; default unknown)",
    )
    cmd.add_argument(
        "--relationship",
        default="third_party",
        choices=("first_party", "third_party", "collaborative", "other"),
        help="the evaluator's relationship to the model (default third_party)",
    )
    cmd.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    record = io.export(
        args.results,
        to=args.to,
        out=args.out,
        model=args.model,
        organization=args.organization,
        relationship=args.relationship,
    )
    n = len(record["evaluation_results"])
    print(
        f"{args.out}: {n} result(s) of {record['model_info']['name']} (schema {record['schema_version']})"
    )
    return 0
