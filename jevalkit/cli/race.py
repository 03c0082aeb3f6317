"""``jevalkit race PROBE --models A B C ... [--target best|top:K|ranks]``: race systems on shared
cases until their ranking is certified (:class:`jevalkit.metrics.Race` through
:func:`jevalkit.run`), print what was certified and the requests it took, and write the
outcome for the leaderboard report."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ..errors import UsageError
from ..metrics import Race, RaceOutcome
from ..runner import run
from ..stats import FINITE_METHODS
from ._args import add_generation_arguments, add_run_arguments, generation_options, run_options
from ._commands import add_command
from ._outcome import report_outcome

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``race`` command."""
    cmd = add_command(sub, "race")
    cmd.add_argument("probes", nargs="+", metavar="PROBE", help="id or id@N (with cases)")
    cmd.add_argument(
        "--models",
        nargs="+",
        required=True,
        metavar="MODEL",
        help="the systems to race, at least two (each into its own results file: --out with "
        "__<model> before the suffix)",
    )
    cmd.add_argument(
        "--target",
        default="best",
        metavar="best|top:K|ranks",
        help="what to certify: the best system, the top K, or every rank (default best)",
    )
    cmd.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        metavar="C",
        help="of every certified statement together, at every wave (default 0.95)",
    )
    cmd.add_argument(
        "--method",
        choices=FINITE_METHODS,
        default="empirical_bernstein",
        help="the pairs' confidence sequences (default empirical_bernstein; hoeffding: the "
        "Hoeffding race's bound)",
    )
    cmd.add_argument(
        "--metric",
        choices=["mean_score", "pass_rate"],
        default="mean_score",
        help="what is compared: each row's score, or its pass/fail (default mean_score)",
    )
    cmd.add_argument(
        "--sample-seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the order the cases are drawn in (default 0)",
    )
    cmd.add_argument(
        "--first-wave", type=int, default=10, metavar="N", help="cases in the first wave (10)"
    )
    cmd.add_argument(
        "--outcome",
        metavar="PATH",
        help="where to write the race's outcome (JSON, for `jevalkit report leaderboard -p "
        "race PATH`; default: --out with .race.json, else runs/<probes>__race.json)",
    )
    add_generation_arguments(cmd)
    add_run_arguments(cmd, skip=("label", "shard"))
    cmd.set_defaults(handler=_race)


def _outcome_path(args: argparse.Namespace) -> Path:
    if args.outcome:
        return Path(args.outcome)
    if args.out:
        return Path(args.out).with_suffix(".race.json")
    name = "+".join(sorted({p.split("@")[0] for p in args.probes}))
    return Path("runs") / f"{name}__race.json"


def _print_race(outcome: RaceOutcome) -> None:
    """The systems' table, what is certified, and the requests it took."""
    table = outcome.table().drop(columns=["settled_cases"])
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 200):
        print(table.to_string(index=False, na_rep="-"))
    level = f"{outcome.confidence:.0%}"
    if outcome.certified:
        what = {"best": "best", "ranks": "ranks"}.get(outcome.target, outcome.target)
        print(
            f"\ncertified ({level}, every statement together): {what} = {', '.join(outcome.answer)}"
        )
    else:
        open_ = outcome.table().query("status == 'open'")["system"].tolist()
        print(f"\nnot certified at {level} ({outcome.stop_reason}): still open: {', '.join(open_)}")
    share = outcome.n_requests / outcome.n_uniform if outcome.n_uniform else float("nan")
    print(
        f"requests: {outcome.n_requests} of the {outcome.n_uniform} a run of every case on every "
        f"system takes ({share:.0%}); {outcome.cases_drawn} of {outcome.n_cases} cases drawn "
        f"in {outcome.waves} wave(s)"
    )
    print(f"  {outcome.method}")


def _race(args: argparse.Namespace) -> int:
    design = Race(
        models=args.models,
        target=args.target,
        confidence=args.confidence,
        method=args.method,
        metric=args.metric,
        seed=args.sample_seed,
        first_wave=args.first_wave,
    )
    where = _outcome_path(args)
    if where.is_dir():
        raise UsageError(f"--outcome {where} is a folder; give a file name such as race.json")
    result = run(args.probes, None, **generation_options(args), **run_options(args, design=design))
    outcome = result.design
    _print_race(outcome)
    path = outcome.save(where)
    print(f"outcome: {path} (jevalkit report leaderboard -p race {path})")
    code = report_outcome(result.rows)
    if result.stopped:
        print(f"stopped early: {result.stopped}; the same command resumes")
    return code or (0 if outcome.certified else 1)
