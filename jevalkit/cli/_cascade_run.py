"""The lazy run of a cascade for ``jevalkit judge EVALUATOR --data CASES --cascade FILE``, and how
a cascade is printed (``jevalkit cascade calibrate`` and ``show`` print it too)."""

from __future__ import annotations

import argparse
import math

import pandas as pd

from ..errors import UsageError
from ..labels import Cascade, load_cascade
from ..runner import judge
from ._args import run_options

__all__ = ["judge_with_cascade", "print_cascade"]


def print_cascade(cascade: Cascade) -> None:
    """The guarantee in one line, then the stages."""
    print(cascade.guarantee)
    table = cascade.table()[
        ["judge", "threshold", "n_reaching", "n_judged", "n_decided", "agreement", "p_value"]
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
    cascade = load_cascade(args.cascade)
    if cascade.evaluator is not None and cascade.evaluator.split("@")[0] != args.evaluator:
        raise UsageError(
            f"{args.cascade} was calibrated for the judge {cascade.evaluator}, not "
            f"{args.evaluator}: judge with {cascade.evaluator.split('@')[0]}, or calibrate a "
            f"cascade for {args.evaluator}"
        )
    design = cascade.design(source=str(args.cascade))
    options = run_options(args, design=design)
    evaluator = cascade.evaluator or args.evaluator  # a cascade file may not name its judge
    result = judge(evaluator, args.data, criteria=args.criteria, seed=args.seed, **options)
    run = result.design
    print(cascade.guarantee)
    with pd.option_context("display.width", 160):
        print(run.table().to_string(index=False))
    print(
        f"{run.n_items - run.n_people} of {run.n_items} case(s) decided by a judge; {run.n_people} for people"
    )
    if args.for_people:
        plan = cascade.for_people(result.rows, cases=args.data)
        plan.to_json(args.for_people, orient="records", lines=True)
        print(
            f"the cases for people: {args.for_people} ({len(plan)}; a label plan for the Labeler)"
        )
    if result.stopped:
        print(f"stopped early: {result.stopped}; the same command resumes")
        return 1
    return 0
