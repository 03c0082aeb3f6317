"""The lazy run of a cascade for ``jevalkit judge EVALUATOR --data CASES --cascade FILE``, and how
a cascade is printed (``jevalkit cascade calibrate`` and ``show`` print it too)."""

from __future__ import annotations

import argparse
import math

import pandas as pd

from ..client import check_file_endpoint
from ..errors import UsageError
from ..files import check_output, write_file
from ..labels import Cascade, load_cascade
from ..runner import judge
from ._args import run_options
from ._outcome import check_error_rate

__all__ = ["endpoint_lines", "judge_with_cascade", "print_cascade"]


def print_cascade(cascade: Cascade) -> None:
    """The guarantee in one line, then the stages."""
    print(cascade.guarantee)
    table = cascade.table()[
        ["judge", "threshold", "calls", "n_reaching", "n_decided", "agreement", "p_value"]
    ]
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 160):
        print(table.to_string(index=False))
    for row in cascade.table().itertuples():
        if math.isinf(row.threshold):
            print(f"{row.judge} decides nothing: {row.method}")
    if cascade.n_labels_unused:
        print(f"{cascade.n_labels_unused} label(s) name items no judge row covers (not used)")


CONFIG_FLAGS = {
    "model": None,
    "systems": None,
    "one_order": False,
    "method": "logprobs",
    "prompt_style": "chat",
    "n_samples": 10,
    "min_coverage": 0.5,
    "explain": False,
}


def endpoint_lines(cascade: Cascade, args: argparse.Namespace) -> list[str]:
    """Where each judge of ``cascade`` is sent, one line per judge whose endpoint only the
    cascade file names (none when ``--base-url`` replaces them all); refused by
    :func:`jevalkit.client.check_file_endpoint` when the user's key would go to one of them
    unconfirmed (``--trust-file-endpoints`` confirms them)."""
    if args.base_url:
        return []
    return [
        f"judge {step.name}: "
        + check_file_endpoint(
            step.base_url,
            f"{args.cascade} (judge {step.name})",
            api_key_env=args.api_key_env,
            trusted=args.trust_file_endpoints,
        )
        for step in cascade.steps
        if step.base_url
    ]


def judge_with_cascade(args: argparse.Namespace) -> int:
    """``jevalkit judge EVALUATOR --data CASES --cascade FILE``: the lazy run (the cascade as a
    design, each judge its own results file beside ``--out``)."""
    given = [f"--{k.replace('_', '-')}" for k, v in CONFIG_FLAGS.items() if getattr(args, k) != v]
    if given:
        raise UsageError(
            f"{', '.join(given)} with --cascade: the cascade file names its judges and how each "
            "is asked; leave these out"
        )
    if args.data is None:
        raise UsageError("--cascade judges a case file: give it with --data")
    if args.repeats != 1:
        raise UsageError(
            "--repeats with --cascade: each judge of a cascade is asked as often per item as in "
            "its calibration (its confidence is the average over those repeats); leave it out"
        )
    if args.for_people:  # before any judging: a bad path would fail after every request
        check_output(args.for_people, UsageError, what="label plan")
    cascade = load_cascade(args.cascade)
    if cascade.evaluator is not None and cascade.evaluator.split("@")[0] != args.evaluator:
        raise UsageError(
            f"{args.cascade} was calibrated for the judge {cascade.evaluator}, not "
            f"{args.evaluator}: judge with {cascade.evaluator.split('@')[0]}, or calibrate a "
            f"cascade for {args.evaluator}"
        )
    for line in endpoint_lines(cascade, args):
        print(line)
    # a file's endpoints get the user's key only when confirmed (endpoint_lines refused it)
    source = "caller" if args.trust_file_endpoints else str(args.cascade)
    design = cascade.design(source=source, accept_shift=args.accept_shift)
    options = run_options(args, design=design)
    evaluator = cascade.evaluator or args.evaluator  # a cascade file may not name its judge
    result = judge(evaluator, args.data, criteria=args.criteria, seed=args.seed, **options)
    run = result.design
    print(cascade.guarantee)
    with pd.option_context("display.width", 160):
        print(run.table().to_string(index=False))
    shift = run.decisions["shift"].iloc[0] if len(run.decisions) else None
    if shift:
        print(shift)
    print(
        f"{run.n_items - run.n_people} of {run.n_items} case(s) decided by a judge; "
        f"{run.n_people} for people"
    )
    if args.for_people:
        plan = cascade.for_people(result.rows, cases=args.data, accept_shift=args.accept_shift)
        text = plan.to_json(orient="records", lines=True)
        write_file(args.for_people, text, UsageError, what="label plan")
        print(
            f"the cases for people: {args.for_people} ({len(plan)}; a label plan for the Labeler)"
        )
    if result.stopped:
        print(f"stopped early: {result.stopped}; the same command resumes")
        return 1
    return check_error_rate(result.rows, args.max_error_rate, unit="judgment")
