"""``jevalkit run PROBE... --model MODEL``: send probes, score, append results, print a summary."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ..client import destination
from ..costs import Budget
from ..errors import UsageError
from ..items import ActiveCases
from ..local import is_local_model
from ..metrics import run_summary
from ..results import weighted_rows
from ..runner import RunResult, plan, run
from ._args import (
    add_generation_arguments,
    add_max_error_rate,
    add_model_argument,
    add_run_arguments,
    generation_options,
    run_options,
    split_list,
)
from ._commands import add_command
from ._outcome import report_outcome

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` command."""
    cmd = add_command(sub, "run")
    cmd.add_argument("probes", nargs="+", metavar="PROBE", help="id or id@N")
    add_model_argument(cmd)
    add_generation_arguments(cmd)
    cmd.add_argument(
        "--constrained",
        "--json-schema-output",
        action="store_true",
        help="constrain decoding to the probe's schema via response_format",
    )
    cmd.add_argument(
        "--cases",
        metavar="RANGE",
        help="for probes with cases: the 1-based positions to run, e.g. 1-50 or 1-10,20; "
        "active:K for an active plan of K cases drawn in waves from --prior",
    )
    cmd.add_argument(
        "--prior",
        metavar="FIT.json",
        help="with --cases active:K: the item model fitted on past systems' results "
        "(jevalkit items RESULTS --irt 2pl --save-fit FIT.json); draws seeded by --sample-seed",
    )
    cmd.add_argument(
        "--sample", type=int, metavar="N", help="then a random sample of N of those cases"
    )
    cmd.add_argument(
        "--sample-seed",
        type=int,
        metavar="S",
        help="seed of the --sample draw (default: --seed; one of them is required)",
    )
    cmd.add_argument(
        "--variants",
        type=_variants_value,
        metavar="all|ID,...",
        help="send every wording of each probe (all) or these variant ids (base = its own)",
    )
    add_run_arguments(cmd)
    add_max_error_rate(cmd, "exit 1 (every row saved) when more than this share of requests failed")
    cmd.add_argument(
        "--dry-run",
        action="store_true",
        help="print the requests, tokens and cost it would take; send nothing",
    )
    cmd.set_defaults(handler=_run)


def _variants_value(text: str) -> str | list[str]:
    """``--variants``: ``all`` or a comma-separated list of variant ids."""
    ids = split_list(text)
    if not ids:
        raise argparse.ArgumentTypeError("expected 'all' or variant ids separated by commas")
    return "all" if ids == ["all"] else ids


_ACTIVE = "active:"


def _active_design(args: argparse.Namespace) -> ActiveCases | None:
    """The active plan ``--cases active:K --prior FIT.json`` asks for (seeded by
    ``--sample-seed``, else ``--seed``), else None."""
    cases = args.cases
    if not (isinstance(cases, str) and cases.startswith(_ACTIVE)):
        if args.prior is not None:
            raise UsageError(
                "--prior is for --cases active:K (an active plan); drop it or give active:K"
            )
        return None
    text = cases[len(_ACTIVE) :]
    if not text.isdigit() or int(text) < 2 or text.startswith("0"):
        raise UsageError(
            f"--cases {cases}: give active:K with K a whole number of cases from 2 up, e.g. "
            "active:50"
        )
    if args.prior is None:
        raise UsageError(
            f"--cases {cases} needs --prior FIT.json: an item model fitted on past systems' "
            "results (jevalkit items RESULTS --irt 2pl --save-fit FIT.json)"
        )
    if args.sample is not None or args.variants is not None:
        raise UsageError("--cases active:K chooses the cases itself: drop --sample and --variants")
    if args.shard is not None:
        raise UsageError(
            "--cases active:K draws each wave from the answers to the last: one process runs "
            "the plan, not shards of it; drop --shard"
        )
    seed = args.sample_seed if args.sample_seed is not None else args.seed
    return ActiveCases(
        k=int(text),
        prior=args.prior,
        seed=0 if seed is None else seed,
        target_half_width=args.target_half_width,
    )


def _case_options(args: argparse.Namespace, active: ActiveCases | None) -> dict:
    """The case and variant selection the command line set (keywords of run and plan)."""
    return {
        "cases": None if active is not None else args.cases,
        "sample": args.sample,
        "sample_seed": args.sample_seed,
        "variants": args.variants,
        "constrained": args.constrained,
    }


def _print_stop(result: RunResult) -> None:
    """Say how a design ended (adaptive repeats, an active plan) and why a budget stopped it."""
    outcome = result.design
    if outcome is not None and hasattr(outcome, "table"):
        row = outcome.table().iloc[0]
        if "sweeps" in row:
            print(
                f"\nadaptive repeats: {row['metric']} {row['value']:.3f} "
                f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] (+/-{row['half_width']:.3f}, target "
                f"+/-{row['target_half_width']:g}) over {row['n_cases']} case(s), {row['n']} "
                f"scored requests in {row['rounds']} round(s); stopped: {row['stop_reason']}"
            )
            print(f"  {row['method']}")
        elif "n_answered" in row:
            print(
                f"\nactive plan: full-benchmark score {row['value']:.3f} "
                f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] from {row['n_answered']} of "
                f"{row['n_cases']} cases ({row['k']} planned, {row['waves']} wave(s)); stopped: "
                f"{row['stop_reason']}"
            )
            print(f"  {row['method']}")
    if result.stopped:
        print(f"\n{result.stopped}")


def _run(args: argparse.Namespace) -> int:
    active = _active_design(args)
    options = run_options(args, design=active)
    if args.dry_run:
        budget = Budget(usd=args.budget_usd, requests=args.budget_requests)
        table = plan(
            args.probes,
            args.model,
            **generation_options(args),
            **_case_options(args, active),
            **options,
        )
        with pd.option_context("display.float_format", "{:.4g}".format, "display.width", 200):
            print(
                table.drop(
                    columns=["prompt_tokens_method", "completion_tokens_method", "parameters"]
                ).to_string(index=False, na_rep="unknown")  # no earlier rows, or no price
            )
        for probe, parameters in zip(table["probe"][:-1], table["parameters"][:-1], strict=True):
            print(f"{probe} is sent with {json.dumps(parameters, sort_keys=True)}")
        where = (
            "the embedded model on 127.0.0.1 (no key)"
            if is_local_model(args.model) and not args.base_url
            else destination(args.model, args.base_url, api_key_env=args.api_key_env)
        )
        print(f"would send to: {where}")
        print(f"prompt tokens: {table['prompt_tokens_method'].iloc[-1]}")
        print(f"completion tokens: {table['completion_tokens_method'].iloc[0]}")
        total = table.iloc[-1]
        if budget.usd is not None:
            fits = "fits within" if total["cost_high"] <= budget.usd else "may exceed"
            print(
                f"the most it could cost, ${total['cost_high']:.4g}, {fits} the ${budget.usd:g} budget"
            )
        if budget.requests is not None:
            fits = "fit within" if total["requests_max"] <= budget.requests else "may exceed"
            print(
                f"at most {total['requests_max']} requests: they {fits} the {budget.requests}-request budget"
            )
        print("dry run: nothing was sent")
        return 0
    result = run(
        args.probes,
        args.model,
        **generation_options(args),
        **_case_options(args, active),
        **options,
    )
    if len(result.rows) and not weighted_rows(result.rows).any():
        # a weighted design's rows are no simple sample: its own estimate is printed below
        with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 200):
            print(run_summary(result.rows).drop(columns=["method"]).to_string(index=False))
    _print_stop(result)
    code = report_outcome(result.rows, max_error_rate=args.max_error_rate)
    outcome = result.design
    nothing = outcome is not None and outcome.table().iloc[0].get("stop_reason") == "nothing scored"
    return code or (1 if result.budget_overrun or nothing else 0)
