"""``jevalkit metrics RESULTS`` and ``jevalkit gate RESULTS``: numbers with n and CI, and a
release gate on the interval (the decision is :func:`jevalkit.metrics.gate`'s)."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from .. import io
from ..metrics import GATE_METRICS, gate, summarize
from ..runner import read_results
from ._args import split_list
from .imports import add_reader_options, reader_options

__all__ = ["EXIT", "load", "register"]

EXIT = {"pass": 0, "fail": 1, "refused": 2}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``metrics`` and ``gate`` commands."""
    cmd = sub.add_parser("metrics", help="pass rate, mean score, consistency with n and CI")
    cmd.add_argument("results", metavar="RESULTS", help="a results JSONL file (or see --from)")
    cmd.add_argument(
        "--from",
        dest="source_format",
        choices=["auto", *io.FORMATS],
        help="read another tool's log directly (auto: detect the format)",
    )
    add_reader_options(cmd)
    cmd.add_argument("--by", help="comma-separated columns to group by, e.g. model,probe")
    cmd.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    cmd.set_defaults(handler=_metrics)
    g = sub.add_parser("gate", help="pass only when the CI's lower bound clears --min")
    g.add_argument("results", metavar="RESULTS")
    g.add_argument(
        "--from",
        dest="source_format",
        choices=["auto", *io.FORMATS],
        help="read another tool's log directly (auto: detect the format)",
    )
    add_reader_options(g)
    g.add_argument("--metric", choices=sorted(GATE_METRICS), default="pass_rate")
    g.add_argument("--min", type=float, required=True, dest="minimum", metavar="X")
    g.add_argument("--by", help="comma-separated columns; every group must clear the bar")
    g.add_argument(
        "--max-flip-rate",
        type=float,
        default=0.1,
        metavar="F",
        help="refuse to gate when more than this share of cases flip between repeats",
    )
    g.set_defaults(handler=_gate)


def load(args: argparse.Namespace) -> pd.DataFrame:
    """The results the command works on: a results file, or another tool's log with ``--from``."""
    if args.source_format is None:
        return read_results(args.results)
    fmt = None if args.source_format == "auto" else args.source_format
    fmt = fmt or io.detect_format(args.results)
    return io.read(args.results, format=fmt, **reader_options(args, fmt))


def _metrics(args: argparse.Namespace) -> int:
    table = summarize(load(args), by=split_list(args.by))
    if args.json:
        print(json.dumps(table.to_dict("records"), indent=2, default=str))
    else:
        with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 160):
            print(table.to_string(index=False))
    return 0


def _gate(args: argparse.Namespace) -> int:
    table = gate(
        read_results(args.results),
        minimum=args.minimum,
        metric=args.metric,
        by=split_list(args.by),
        max_flip_rate=args.max_flip_rate,
    )
    for row in table.to_dict("records"):
        interval = (
            f"{row['metric']} = {row['value']:.3f}, 95% CI [{row['ci_low']:.3f}, "
            f"{row['ci_high']:.3f}], n = {row['n']}; "
            if row["n"]
            else ""
        )
        print(f"{row['decision'].upper()}: {interval}{row['reason']}")
    return max(EXIT[d] for d in table["decision"]) if len(table) else 2
