"""``jevalkit metrics RESULTS`` and ``jevalkit gate RESULTS``: numbers with n and CI, and a
release gate on the interval (the decision is :func:`jevalkit.metrics.gate`'s)."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from ..errors import StatsError
from ..metrics import (
    GATE_METRICS,
    case_changes,
    gate,
    gate_decision,
    release_gate,
    summarize,
)
from ..results import combine_runs, partial_merge
from ..runner import run
from ._args import (
    add_generation_arguments,
    add_max_error_rate,
    add_run_arguments,
    generation_options,
    run_options,
    split_list,
)
from ._commands import add_command
from .imports import add_source_options, load_source, load_sources

__all__ = ["EXIT", "register"]

EXIT = {"pass": 0, "fail": 1, "undecided": 2, "refused": 2}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``metrics`` and ``gate`` commands."""
    cmd = add_command(sub, "metrics")
    cmd.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="results JSONL files, read as one (or see --from)",
    )
    add_source_options(cmd)
    cmd.add_argument("--by", help="comma-separated columns to group by, e.g. model,probe")
    cmd.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    cmd.add_argument(
        "--pool",
        action="store_true",
        help="pool systems (models, --label names), a probe's versions and generation settings "
        "(params_hash) within a group; by default they are kept apart",
    )
    cmd.set_defaults(handler=_metrics)
    g = add_command(sub, "gate")
    g.add_argument("results", nargs="?", metavar="RESULTS")
    g.add_argument("--baseline", metavar="BASE", help="the baseline run (with --candidate)")
    g.add_argument("--candidate", metavar="HEAD", help="the candidate run (with --baseline)")
    g.add_argument("--max-drop", type=float, metavar="D", help="the largest drop that still passes")
    g.add_argument(
        "--min-consistency",
        type=float,
        default=0.9,
        metavar="C",
        help="refuse when verdicts agree across repeats less than this (default 0.9)",
    )
    add_source_options(g, "each run")
    g.add_argument("--metric", choices=sorted(GATE_METRICS), default="pass_rate")
    g.add_argument("--min", type=float, dest="minimum", metavar="X")
    g.add_argument("--by", help="comma-separated columns; every group must clear the bar")
    add_max_error_rate(
        g,
        "refuse to gate when more than this share of rows are errors (timeouts, refusals by "
        "the endpoint, ...)",
    )
    g.add_argument(
        "--max-flip-rate",
        type=float,
        default=0.1,
        metavar="F",
        help="refuse to gate when more than this share of cases flip between repeats",
    )
    a = g.add_argument_group(
        "adaptive gate (--repeats auto): run --probe on --model into RESULTS until the "
        "anytime-valid interval clears --min either way"
    )
    a.add_argument("--probe", action="append", metavar="PROBE", help="a probe to run (repeatable)")
    add_generation_arguments(a)
    add_run_arguments(a, skip=("out",))  # RESULTS is where the rows go
    g.set_defaults(handler=_gate)


def _adaptive_gate(args: argparse.Namespace) -> int:
    if not (args.results and args.probe and args.source_model and args.minimum is not None):
        raise StatsError(
            "an adaptive gate needs RESULTS (where rows go), --probe P, --model M and --min X"
        )
    if args.metric != "pass_rate" and args.metric != "mean_score":
        raise StatsError(f"an adaptive gate works on pass_rate or mean_score, not {args.metric}")
    options = {
        **run_options(args, metric=args.metric, decide_at=args.minimum),
        "out": args.results,
    }
    result = run(args.probe, args.source_model, **generation_options(args), **options)
    row = result.design.table().iloc[0]
    decision = gate_decision(row["ci_low"], row["ci_high"], args.minimum)
    print(
        f"{decision.upper()}: {row['metric']} = {row['value']:.3f}, anytime-valid 95% CI "
        f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] against the bar {args.minimum:g}, "
        f"{row['n']} scored requests over {row['n_cases']} case(s); stopped: {row['stop_reason']}"
        + (f" ({result.stopped})" if result.stopped else "")
    )
    return EXIT[decision]


def _release(args: argparse.Namespace) -> int:
    if not (args.baseline and args.candidate and args.max_drop is not None):
        raise StatsError("a release gate needs --baseline BASE, --candidate HEAD and --max-drop D")
    base, head = load_source(args, args.baseline), load_source(args, args.candidate)
    row = release_gate(
        base,
        head,
        max_drop=args.max_drop,
        metric=args.metric,
        min_consistency=args.min_consistency,
        max_error_rate=args.max_error_rate,
    ).iloc[0]
    print(
        f"{row['decision'].upper()}: {row['metric']} {row['value_baseline']:.3f} -> "
        f"{row['value_candidate']:.3f}, drop {row['drop']:+.3f} (95% CI {row['drop_ci_low']:+.3f} "
        f"to {row['drop_ci_high']:+.3f}), n = {row['n_paired']}; {row['reason']}"
    )
    if row["decision"] == "fail":
        both = combine_runs(base, head)
        candidate = next(s for s in both.systems if s != both.baseline)
        changes = case_changes(both, both.baseline, candidate)
        regressed = changes[changes["status"] == "regressed"]
        print(f"{len(regressed)} regressed case(s):")
        if len(regressed):
            print(
                regressed.drop(columns=["output_a", "output_b", "probs_a", "probs_b"])
                .head(20)
                .to_string(index=False)
            )
    return EXIT[row["decision"]]


def _metrics(args: argparse.Namespace) -> int:
    results = load_sources(args, args.results)
    by = split_list(args.by)
    table = summarize(results, by=by, pool=args.pool)
    # the groups summarize kept: the --by columns, then a probe's versions or settings apart
    apart = [c for c in table.columns[: list(table.columns).index("metric")] if c not in by]
    if apart and not args.json:
        print(
            f"kept apart: {', '.join(apart)} differ within a group (another system, or a probe "
            "at another version or setting, is another run); pass --pool to pool them"
        )
    if args.json:
        print(json.dumps(table.to_dict("records"), indent=2, default=str))
    else:
        with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 160):
            print(table.to_string(index=False))
    for path in args.results if isinstance(args.results, list) else [args.results]:
        partial = partial_merge(path)
        if partial is not None:  # its parts are beside it: `merge --partial`, or shards running
            print(
                f"partial: {path}: {partial.done:,} of {partial.jobs:,} planned jobs, "
                f"{partial.complete} of {partial.shards} shards complete "
                f"({'; '.join(partial.missing[:3])}); run the missing shards, then `jevalkit merge`",
                file=sys.stderr if args.json else sys.stdout,
            )
    return 0


def _gate(args: argparse.Namespace) -> int:
    if args.repeats == "auto":
        return _adaptive_gate(args)
    if args.baseline or args.candidate:
        return _release(args)
    if args.results is None or args.minimum is None:
        raise StatsError(
            "give RESULTS and --min X, or --baseline BASE --candidate HEAD --max-drop D"
        )
    table = gate(
        load_source(args, args.results),
        minimum=args.minimum,
        metric=args.metric,
        by=split_list(args.by),
        max_flip_rate=args.max_flip_rate,
        max_error_rate=args.max_error_rate,
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
