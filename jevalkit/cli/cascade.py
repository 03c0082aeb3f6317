"""``jevalkit cascade calibrate RESULTS... --labels LABELS --out cascade.json``: the thresholds of
a judge cascade from judged results and human labels (:func:`jevalkit.labels.calibrate_cascade`);
``jevalkit cascade show cascade.json``; and ``jevalkit judge EVALUATOR --data CASES --cascade
cascade.json``, the lazy run (:meth:`jevalkit.labels.Cascade.judge`): each judge is sent only the
cases the judges before it were not confident about."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .. import io
from ..errors import UsageError
from ..labels import calibrate_cascade, judge_names, load_cascade, read_labels
from ._cascade_run import print_cascade
from ._commands import add_command

__all__ = ["register"]


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.9, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return value


def _start(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share such as 0.2, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``cascade`` command group."""
    group = add_command(sub, "cascade")
    cmds = group.add_subparsers(dest="cascade_command", required=True, metavar="SUBCOMMAND")
    cal = cmds.add_parser(
        "calibrate", help="thresholds per judge from judged results and a labels file"
    )
    cal.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="judge results of every judge over the same outputs (one file per judge, cheapest "
        "first, or any files with --judges)",
    )
    cal.add_argument("--labels", required=True, help="the labels file (a uniform random sample)")
    cal.add_argument(
        "--judges",
        nargs="+",
        metavar="JUDGE",
        help="the judges, cheapest first (a model, or model[param=value] when one model judged "
        "in two ways; default: the one judge of each RESULTS file, in order)",
    )
    cal.add_argument(
        "--target", type=_share, default=0.9, help="agreement with people (default 0.9)"
    )
    cal.add_argument(
        "--confidence",
        type=_share,
        default=0.9,
        help="probability over the labelled sample that the agreement holds (default 0.9)",
    )
    cal.add_argument(
        "--levels", nargs="+", help="the judge's levels, lowest first (default: its prompt file)"
    )
    cal.add_argument(
        "--min-items",
        type=int,
        default=None,
        metavar="N",
        help="the fewest labelled items a judge's first test covers (default: the fewest at "
        "which a run of perfect agreement passes at its level)",
    )
    cal.add_argument(
        "--start",
        type=_start,
        default=None,
        metavar="SHARE",
        help="the share of the labelled items reaching a judge that its first test covers "
        "(default 0.2)",
    )
    cal.add_argument(
        "--guarantee",
        choices=("high-probability", "expected"),
        default="high-probability",
        help="high-probability (default): agreement at --target with probability --confidence; "
        "expected: at most --risk of all items decided against a person, in expectation over "
        "calibrations only (conformal risk control; no agreement among decided items)",
    )
    cal.add_argument(
        "--risk",
        type=_share,
        default=None,
        metavar="A",
        help="with --guarantee expected: the expected share of all items decided against a "
        "person to allow (e.g. 0.05)",
    )
    cal.add_argument("--out", required=True, help="the cascade file to write (JSON)")
    cal.set_defaults(handler=_calibrate)
    show = cmds.add_parser("show", help="the guarantee and the stages of a cascade file")
    show.add_argument("cascade", metavar="CASCADE")
    show.set_defaults(handler=_show)


def _read(paths: list[str]) -> tuple[pd.DataFrame, list[list[str]]]:
    """The rows of every file read together, and the judges of each file's rows, named as in
    all of them (a model judged in two ways, one way per file, carries its parameters)."""
    frames = []
    for path in paths:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no results file there")
        frames.append(io.read_source(path))
    judged = pd.concat(frames, ignore_index=True)
    names = judge_names(judged) if len(judged) else pd.Series(dtype=object)
    judges, start = [], 0
    for frame in frames:
        judges.append(list(dict.fromkeys(names.iloc[start : start + len(frame)])))
        start += len(frame)
    return judged, judges


def _calibrate(args: argparse.Namespace) -> int:
    judged, per_file = _read(args.results)
    judges = args.judges
    if judges is None:
        several = [(p, j) for p, j in zip(args.results, per_file, strict=True) if len(j) != 1]
        if several:
            path, names = several[0]
            raise UsageError(
                f"{path} holds {len(names)} judges ({', '.join(names) or 'none'}): say the "
                "cascade's order with --judges, cheapest first"
            )
        judges = [names[0] for names in per_file]
    cascade = calibrate_cascade(
        judged,
        read_labels(args.labels),
        judges=judges,
        target_agreement=args.target,
        confidence_level=args.confidence,
        levels=args.levels,
        min_items=args.min_items,
        start=args.start,
        guarantee=args.guarantee,
        risk=args.risk,
    )
    out = cascade.save(args.out)
    print_cascade(cascade)
    print(f"wrote {out}")
    return 0


def _show(args: argparse.Namespace) -> int:
    print_cascade(load_cascade(args.cascade))
    return 0
