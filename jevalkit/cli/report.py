"""``jevalkit report NOTEBOOK [--results PATH] [-p NAME VALUE]... [--out DIR]`` and
``jevalkit report --batch FILE``."""

from __future__ import annotations

import argparse
import ast
from typing import Any

import pandas as pd

from .. import io
from ..errors import ReportError
from ..reports import (
    declared_default,
    declared_parameters,
    find_notebook,
    report_probe,
    run_batch,
    run_report,
    write_batch_summary,
)
from ._commands import add_command

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``report`` command."""
    cmd = add_command(sub, "report")
    cmd.add_argument(
        "notebook", nargs="?", metavar="NOTEBOOK", help="a bundled notebook's name or a path"
    )
    cmd.add_argument(
        "--batch", metavar="FILE", help="a batch YAML: a grid of parameter sets, on Dask"
    )
    cmd.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (batch)")
    cmd.add_argument(
        "--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, tcp://host:port"
    )
    cmd.add_argument("--force", action="store_true", help="re-run outputs that are up to date")
    cmd.add_argument(
        "--results",
        nargs="+",
        action="extend",
        metavar="PATH",
        help="results JSONL (default: the notebook's own); several paths (or --results again) "
        "are read as one",
    )
    cmd.add_argument(
        "-p",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="a notebook parameter (VALUE is parsed as a Python literal when it can be, kept "
        "as text for a parameter whose default is text); a notebook with a `probe` parameter "
        "reports the probe version the results hold unless -p probe names one",
    )
    cmd.add_argument(
        "--from",
        dest="source_format",
        choices=["auto", *io.FORMATS],
        help="--results is another tool's log in this format (auto: detect it)",
    )
    cmd.add_argument("--out", default="reports", metavar="DIR")
    cmd.add_argument(
        "--show-code",
        action="store_true",
        help="keep the code cells in the HTML (hidden by default)",
    )
    cmd.set_defaults(handler=_report)


def _literal(text: str, spec: dict | None) -> object:
    """VALUE as the notebook gets it: text for a parameter whose default is text, else a
    Python literal when it parses as one."""
    if spec is not None and isinstance(declared_default(spec), str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _report(args: argparse.Namespace) -> int:
    if args.batch:
        return _batch(args)
    if not args.notebook:
        raise ReportError("give a NOTEBOOK, or --batch FILE")
    declared = declared_parameters(find_notebook(args.notebook))
    params: dict[str, Any] = {name: _literal(value, declared.get(name)) for name, value in args.p}
    paths = args.results or []
    if args.source_format:
        params["results_format"] = args.source_format
    elif any(io.sniff_format(p) not in (None, "jevalkit") for p in paths):
        params["results_format"] = "auto"  # another tool's log: read it as `import` would
    if paths:  # refused in one line here, before a kernel starts (seconds)
        frame = io.read_sources(paths, params.get("results_format"))
        if "probe" in declared:  # the probe version the results hold, or the one named
            params["probe"] = report_probe(frame, params.get("probe"), required=True)[0]
    elif params.get("probe") is not None:  # not text: refused here, not in the kernel
        report_probe(pd.DataFrame(), params["probe"])
    report = run_report(
        args.notebook,
        results=paths or None,
        parameters=params,
        out=args.out,
        show_code=args.show_code,
    )
    print(f"notebook: {report.notebook}\nhtml:     {report.html}\nheadline: {report.headline}")
    return 0


def _batch(args: argparse.Namespace) -> int:
    status = run_batch(args.batch, workers=args.workers, scheduler=args.scheduler, force=args.force)
    for row in status[status["status"] == "failed"].itertuples():
        print(f"FAILED {row.out}: {row.error}")
    summary, csv = write_batch_summary(args.batch)
    with pd.option_context("display.width", 200, "display.max_colwidth", 40):
        print(summary.to_string(index=False))
    counts = status["status"].value_counts().to_dict()
    print(
        f"{counts.get('done', 0)} done, {counts.get('skipped', 0)} skipped, "
        f"{counts.get('failed', 0)} failed; summary: {csv}"
    )
    return 1 if counts.get("failed") else 0
