"""``jevalkit judge EVALUATOR --data FILE --model MODEL``: judge a case set, print quality."""

from __future__ import annotations

import argparse

import pandas as pd

from ..judges import EVALUATORS, JudgeConfig, judge, quality


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``judge`` command."""
    cmd = sub.add_parser(
        "judge", help="judge a case set with a model judge (distribution over levels)"
    )
    cmd.add_argument("evaluator", choices=EVALUATORS)
    cmd.add_argument("--data", required=True, help="case JSONL, or a bundled case set name")
    cmd.add_argument("--model", help="judge model (`local` for the embedded one)")
    cmd.add_argument("--base-url")
    cmd.add_argument("--repeats", type=int, default=1, metavar="K")
    cmd.add_argument("--out", metavar="PATH")
    cmd.add_argument("--method", choices=["logprobs", "sampling"], default="logprobs")
    cmd.add_argument("--prompt-style", choices=["chat", "completion"], default="chat")
    cmd.add_argument("--samples", type=int, default=10, help="samples per judgment (sampling)")
    cmd.add_argument("--min-coverage", type=float, default=0.5)
    cmd.add_argument("--criteria", help="the rubric for llm_judge")
    cmd.add_argument("--seed", type=int)
    cmd.add_argument(
        "--explain", action="store_true", help="also ask for a short explanation of each verdict"
    )
    cmd.set_defaults(handler=_judge)


def _judge(args: argparse.Namespace) -> int:
    config = JudgeConfig(method=args.method, prompt_style=args.prompt_style,
                         n_samples=args.samples, min_coverage=args.min_coverage, explain=args.explain)  # fmt: skip
    df = judge(args.evaluator, args.data, args.model, base_url=args.base_url, repeats=args.repeats,
               out=args.out, config=config, criteria=args.criteria, seed=args.seed)  # fmt: skip
    cols = [
        c
        for c in ("case_id", "repeat", "gold", "verdict", "expected_level", "coverage", "score")
        if c in df
    ]
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 160):
        print(df[cols].to_string(index=False))
        errors = df["error"].dropna()
        if len(errors):
            print(
                f"{len(errors)} case(s) without a trustworthy judgment, e.g.: {errors.iloc[0]['message']}"
            )
        print(quality(df).to_string(index=False))
    return 0
