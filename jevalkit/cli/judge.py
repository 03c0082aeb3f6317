"""``jevalkit judge EVALUATOR --data FILE --model MODEL``: judge a case set, print quality;
``jevalkit judges list | lock``: the judge prompt files."""

from __future__ import annotations

import argparse

import pandas as pd

from ..errors import UsageError
from ..judges import (
    EVALUATORS,
    JudgeConfig,
    judge_files,
    publish_judges,
    read_judge_file,
)
from ..metrics import pairwise_preferences, position_bias, quality
from ..results import scored
from ..runner import judge
from ._args import add_max_error_rate, add_model_argument, add_run_arguments, run_options
from ._cascade_run import judge_with_cascade
from ._commands import add_command
from ._outcome import report_outcome
from .run import _print_stop

__all__ = ["MAX_SAMPLES", "register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``judge`` command and the ``judges`` group."""
    cmd = add_command(sub, "judge")
    cmd.add_argument("evaluator", choices=EVALUATORS)
    cmd.add_argument("--data", help="case JSONL, or a bundled case set name")
    cmd.add_argument(
        "--systems",
        nargs=2,
        metavar=("A.jsonl", "B.jsonl"),
        help="pairwise: compare the outputs of two runs, matched by case",
    )
    cmd.add_argument(
        "--one-order",
        action="store_true",
        help="pairwise: judge each comparison in one order only (not recommended)",
    )
    add_model_argument(cmd, required=False)
    cmd.add_argument("--method", choices=["logprobs", "sampling"], default="logprobs")
    cmd.add_argument("--prompt-style", choices=["chat", "completion"], default="chat")
    cmd.add_argument(
        "--n-samples",
        type=_n_samples,
        default=10,
        help=f"samples per judgment (sampling; 1 to {MAX_SAMPLES:,})",
    )
    cmd.add_argument("--min-coverage", type=float, default=0.5)
    cmd.add_argument("--criteria", help="the rubric for llm_judge")
    cmd.add_argument("--seed", type=int)
    cmd.add_argument(
        "--explain", action="store_true", help="also ask for a short explanation of each verdict"
    )
    cmd.add_argument(
        "--cascade",
        metavar="FILE",
        help="a cascade file (jevalkit cascade calibrate): each judge it names is sent only the "
        "cases the judges before it were not confident about; each judge's rows go to --out "
        "with __<judge> before the suffix",
    )
    cmd.add_argument(
        "--for-people",
        metavar="PATH",
        help="with --cascade: write the cases left for people as a label plan (JSONL)",
    )
    cmd.add_argument(
        "--accept-shift",
        action="store_true",
        help="with --cascade: decide by the cascade even when the new cases' confidences differ "
        "from the calibration items' (by default every case then goes to people: the guarantee "
        "holds only for items like the labelled ones)",
    )
    cmd.add_argument(
        "--trust-file-endpoints",
        action="store_true",
        help="with --cascade: send the key ($JEVALKIT_API_KEY, or --api-key-env) to the "
        "endpoints the cascade file names (without it, a file's endpoint gets no key you did "
        "not send there: give --base-url to send every judge to one you name)",
    )
    add_run_arguments(cmd)
    add_max_error_rate(
        cmd, "exit 1 (every row saved) when more than this share of judgments failed"
    )
    cmd.set_defaults(handler=_judge)
    group = add_command(sub, "judges")
    cmds = group.add_subparsers(dest="judges_command", required=True, metavar="SUBCOMMAND")
    cmds.add_parser("list", help="one line per judge file version").set_defaults(handler=_list)
    cmds.add_parser("lock", help="publish new judge file versions into judges.lock").set_defaults(
        handler=_lock
    )


MAX_SAMPLES = 1_000  # requests per judgment


def _n_samples(text: str) -> int:
    """``--n-samples``: a whole number from 1 to :data:`MAX_SAMPLES`, checked before planning."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SAMPLES:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_SAMPLES:,}")
    return value


def _judge(args: argparse.Namespace) -> int:
    if args.cascade:
        return judge_with_cascade(args)
    if args.for_people:
        raise UsageError("--for-people goes with --cascade (the cases a cascade leaves for people)")
    if args.accept_shift:
        raise UsageError("--accept-shift goes with --cascade (a cascade's shift check)")
    if args.trust_file_endpoints:
        raise UsageError(
            "--trust-file-endpoints goes with --cascade (the endpoints a cascade file names)"
        )
    config = JudgeConfig(
        method=args.method,
        prompt_style=args.prompt_style,
        n_samples=args.n_samples,
        min_coverage=args.min_coverage,
        explain=args.explain,
    )
    result = judge(
        args.evaluator,
        args.data,
        args.model,
        systems=tuple(args.systems) if args.systems else None,
        both_orders=not args.one_order,
        config=config,
        criteria=args.criteria,
        seed=args.seed,
        **run_options(args, metric="mean_score"),
    )
    df = result.rows
    code = 1 if result.budget_overrun else 0
    if not len(df):  # a budget that stopped the run before its first row
        print(f"no judgment made: {result.stopped or 'nothing to judge'}")
        return code
    if args.evaluator == "pairwise":
        _pairwise_report(df)
        _print_stop(result)
        return report_outcome(df, unit="game", max_error_rate=args.max_error_rate) or code
    cols = ["case_id", "repeat", "gold", "verdict", "expected_level", "coverage", "score"]
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 160):
        print(df[cols].to_string(index=False))
        if scored(df):
            print(quality(df).to_string(index=False))
    _print_stop(result)
    return report_outcome(df, unit="judgment", max_error_rate=args.max_error_rate) or code


def _pairwise_report(df: pd.DataFrame) -> None:
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 200):
        print(pairwise_preferences(df).to_string(index=False))
        if scored(df):
            bias = position_bias(df).iloc[0]
            print(
                f"answer shown first won {bias['first_win_share']:.0%} of {bias['n_decisive']} decisive "
                f"games (95% CI {bias['ci_low']:.0%}-{bias['ci_high']:.0%}, p = {bias['p_value']:.3g}); "
                f"swap consistency {bias['swap_consistency']:.0%} of {bias['n_pairs']} cases"
            )


def _list(args: argparse.Namespace) -> int:
    for path in judge_files():
        prompt = read_judge_file(path)
        print(
            f"{prompt.name:<24} {prompt.kind:<15} {len(prompt.levels)} levels  {prompt.description[:60]}"
        )
    return 0


def _lock(args: argparse.Namespace) -> int:
    added = publish_judges()
    print("published: " + ", ".join(added) if added else "nothing new to publish")
    return 0
