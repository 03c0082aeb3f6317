"""``jevalkit items RESULTS`` (which items measure anything) and ``jevalkit leaderboard RESULTS``
(scores, simultaneous rank intervals, tie classes); the numbers are :mod:`jevalkit.items`' and
:func:`jevalkit.metrics.leaderboard`'s."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ..errors import UsageError
from ..files import check_output
from ..items import analysis, fit_irt
from ..metrics import leaderboard
from ..reports import write_leaderboard_page
from ._args import split_list
from ._commands import add_command
from .imports import add_source_options, load_source

__all__ = ["register", "scale_value"]


def scale_value(text: str) -> tuple[float, float]:
    """``--scale LOW,HIGH``.

    Example:
        >>> scale_value("1,10")
        (1.0, 10.0)
    """
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH such as 1,10, got {text!r}") from None
    return low, high


def _columns(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--system", default="system", help="the system column (default: system)")
    cmd.add_argument(
        "--case",
        help="comma-separated case columns (default: probe,version,case_id)",
    )
    cmd.add_argument("--score", default="score", help="the score column (default: score)")
    cmd.add_argument("--scale", type=scale_value, metavar="LOW,HIGH", help="range of raw grades")
    cmd.add_argument("--json", action="store_true", help="print JSON records instead of a table")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``items`` and ``leaderboard`` commands."""
    cmd = add_command(sub, "items")
    cmd.add_argument("results", metavar="RESULTS", help="results of many systems (or see --from)")
    add_source_options(cmd)
    _columns(cmd)
    cmd.add_argument(
        "--irt", choices=["1pl", "2pl"], help="also fit an item response model and show its items"
    )
    cmd.add_argument(
        "--save-fit",
        metavar="FIT.json",
        help="with --irt: write the item model to this file (the --prior of run --cases active:K)",
    )
    cmd.add_argument("--all", action="store_true", help="list every item, not only flagged ones")
    cmd.set_defaults(handler=_items)
    lb = add_command(sub, "leaderboard")
    lb.add_argument("results", metavar="RESULTS", help="results of many systems (or see --from)")
    add_source_options(lb)
    _columns(lb)
    lb.add_argument("--pairwise", action="store_true", help="rank pairwise games (Bradley-Terry)")
    lb.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    lb.add_argument("--html", metavar="FILE", help="also write the leaderboard page")
    lb.set_defaults(handler=_leaderboard)


def _spec(args: argparse.Namespace) -> dict:
    """The column keywords the command line set (``--case`` absent: the statistics' default)."""
    spec = {"system": args.system, "score": args.score, "scale": args.scale}
    return {**spec, "case": split_list(args.case)} if args.case else spec


def _show(table: pd.DataFrame, as_json: bool) -> None:
    if as_json:
        print(json.dumps(table.to_dict("records"), indent=2, default=str))
    else:
        with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 200):
            print(table.to_string(index=False))


def _items(args: argparse.Namespace) -> int:
    if args.save_fit and not args.irt:
        raise UsageError("--save-fit writes the item model: give --irt 1pl or --irt 2pl too")
    if args.save_fit:  # before the fit: a bad path would fail after it
        check_output(args.save_fit, UsageError, what="item model")
    df = load_source(args, args.results)
    result = analysis(df, **_spec(args))
    print(
        f"{result.n_items} items, {result.n_systems} systems; Cronbach's alpha "
        f"{result.alpha:.3f} (95% CI {result.alpha_ci_low:.3f} to {result.alpha_ci_high:.3f}, "
        f"{result.n_complete} complete systems); {result.n_dead} dead, "
        f"{result.n_negative} negative, {result.n_flaky} flaky"
    )
    shown = result.table() if args.all else result.flagged()
    if args.irt:
        fit = fit_irt(df, model=args.irt, **_spec(args))
        keys = list(fit.matrix.items.columns)
        irt = fit.items[[*keys, "difficulty", "discrimination", "infit", "outfit"]]
        shown = shown.merge(irt, on=keys, how="left", suffixes=("", "_irt"))
        print(f"{fit.method}; log-likelihood {fit.loglik:.1f}, converged {fit.converged}")
        if args.save_fit:
            print(f"item model written to {fit.save(args.save_fit)}")
    if not args.json:
        print(result.method)
        shown = shown.drop(columns="method")
    _show(shown, args.json)
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    if not 100 <= args.resamples <= 100_000:  # checked before the file is read
        raise UsageError(f"--resamples must be from 100 to 100,000, got {args.resamples}")
    df = load_source(args, args.results)
    if args.pairwise:
        board = leaderboard(df, kind="pairwise", n_resamples=args.resamples)
    else:
        board = leaderboard(df, n_resamples=args.resamples, **_spec(args))
    table = board.table()
    print(
        f"{len(table)} systems over {board.n_cases} cases; could be first: "
        f"{', '.join(map(str, board.could_be_first))}; signal-to-noise "
        f"{board.signal_to_noise:.2f}"
    )
    _show(table.drop(columns=["method"]) if not args.json else table, args.json)
    if not args.json:
        print(table["method"].iloc[0])
    if args.html:
        print(write_leaderboard_page(board, args.html))
    return 0
