"""``jevalkit metrics RESULTS`` and ``jevalkit gate RESULTS``: numbers with n and CI, and a
release gate on the lower bound of the interval."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ..metrics import consistency, has_repeats, mean_score, pass_rate, summarize
from ..runner import read_results

METRICS = {"pass_rate": pass_rate, "mean_score": mean_score}


def _by(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``metrics`` and ``gate`` commands."""
    cmd = sub.add_parser("metrics", help="pass rate, mean score, consistency with n and CI")
    cmd.add_argument("results", metavar="RESULTS", help="a results JSONL file")
    cmd.add_argument("--by", help="comma-separated columns to group by, e.g. model,probe")
    cmd.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    cmd.set_defaults(handler=_metrics)
    gate = sub.add_parser("gate", help="pass only when the CI's lower bound clears --min")
    gate.add_argument("results", metavar="RESULTS")
    gate.add_argument("--metric", choices=sorted(METRICS), default="pass_rate")
    gate.add_argument("--min", type=float, required=True, dest="minimum", metavar="X")
    gate.add_argument("--by", help="comma-separated columns; every group must clear the bar")
    gate.add_argument("--max-flip-rate", type=float, default=0.1, metavar="F",
                      help="refuse to gate when more than this share of cases flip between repeats")  # fmt: skip
    gate.set_defaults(handler=_gate)


def _metrics(args: argparse.Namespace) -> int:
    table = summarize(read_results(args.results), by=_by(args.by))
    if args.json:
        print(json.dumps(table.to_dict("records"), indent=2, default=str))
    else:
        with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 160):
            print(table.to_string(index=False))
    return 0


def _gate(args: argparse.Namespace) -> int:
    df = read_results(args.results)
    by = _by(args.by)
    if has_repeats(df):
        flips = consistency(df, by=by)
        for row in flips.to_dict("records"):
            if row["flip_rate"] > args.max_flip_rate:
                where = ", ".join(f"{c}={row[c]}" for c in by) or "all results"
                print(f"REFUSED ({where}): verdicts flip between repeats in {row['flip_rate']:.0%} "
                      f"of {row['n_cases']} cases (limit {args.max_flip_rate:.0%}); a flaky "
                      "evaluator makes a flaky gate")  # fmt: skip
                return 1
    table = METRICS[args.metric](df, by=by)
    ok = True
    for row in table.to_dict("records"):
        where = ", ".join(f"{c}={row[c]}" for c in by) or "all results"
        verdict = "PASS" if row["ci_low"] >= args.minimum else "FAIL"
        ok &= verdict == "PASS"
        print(f"{verdict} ({where}): {args.metric} = {row['value']:.3f}, 95% CI "
              f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}], n = {row['n']}; lower bound "
              f"{'clears' if verdict == 'PASS' else 'is below'} {args.minimum:g}")  # fmt: skip
    return 0 if ok else 1
