"""``jevalkit run PROBE... --model MODEL``: send probes, score, append results, print a summary."""

from __future__ import annotations

import argparse

import pandas as pd

from ..metrics import run_summary
from ..runner import DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, run
from ._args import add_endpoint_arguments, add_run_arguments, run_options

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` command."""
    cmd = sub.add_parser("run", help="run probes against a model (k repeats, resumable)")
    cmd.add_argument("probes", nargs="+", metavar="PROBE", help="id or id@N")
    add_endpoint_arguments(cmd)
    cmd.add_argument(
        "--out",
        metavar="PATH",
        help="results JSONL (default runs/<probes>__<model>[__<host>].jsonl)",
    )
    cmd.add_argument("--temperature", type=float)
    cmd.add_argument("--seed", type=int, help="seed of repeat 0; repeat r is sent seed + r")
    cmd.add_argument("--max-tokens", type=int)
    cmd.add_argument("--top-p", type=float)
    cmd.add_argument("--label", help="a name for this configuration (a 'system' in comparisons)")
    cmd.add_argument(
        "--constrained",
        "--json-schema-output",
        action="store_true",
        help="constrain decoding to the probe's schema via response_format",
    )
    add_run_arguments(cmd, DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES)
    cmd.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    df = run(
        args.probes,
        args.model,
        out=args.out,
        temperature=args.temperature,
        seed=args.seed,
        max_tokens=args.max_tokens,
        top_p=args.top_p,
        label=args.label,
        constrained=args.constrained,
        **run_options(args),
    )
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 200):
        print(run_summary(df).drop(columns=["method"]).to_string(index=False))
    return 0
