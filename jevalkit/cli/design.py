"""``jevalkit design RESULTS``: the variance components of a pilot run and the cheapest design
that reaches a target half-width (or the narrowest a budget buys); the decision is
:func:`jevalkit.metrics.choose_design`'s. (A dry run's cost plan is ``jevalkit run --dry-run``.)"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ..errors import StatsError
from ..metrics import choose_design
from ..stats import variance_components
from ._args import split_list
from ._commands import add_command
from .imports import add_source_options, load_source
from .items import scale_value

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``design`` command."""
    cmd = add_command(sub, "design")
    cmd.add_argument("results", metavar="RESULTS", help="the pilot's results (or see --from)")
    add_source_options(cmd)
    cmd.add_argument("--target-half-width", type=float, metavar="H")
    cmd.add_argument("--budget-usd", type=float, metavar="B")
    cmd.add_argument(
        "--facets",
        default="case,variant,model,base_url",
        help="comma-separated facet columns (case = the case identity); facets absent from "
        "RESULTS or with one level are left out and said (default: case,variant,model,base_url)",
    )
    cmd.add_argument("--score", default="score", help="the value column (default: score)")
    cmd.add_argument(
        "--scale",
        type=scale_value,
        metavar="LOW,HIGH",
        help="the range of raw grades, e.g. 1,10 (normalised to [0, 1]); scores outside [0, 1] "
        "are refused without it",
    )
    cmd.add_argument(
        "--cost-per-request",
        type=float,
        metavar="USD",
        help="dollars per request (default: the pilot's mean cost_usd, else requests are counted)",
    )
    cmd.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="FACET=N",
        help="the most levels a facet (or repeats) may have, e.g. variant=3 (repeatable)",
    )
    cmd.add_argument("--json", action="store_true", help="print JSON instead of tables")
    cmd.set_defaults(handler=_design)


def _limits(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, _, count = item.partition("=")
        if not name or not count.isdigit():
            raise StatsError(f"--limit {item!r}: write FACET=N, e.g. --limit variant=3")
        out[name] = int(count)
    return out


def _design(args: argparse.Namespace) -> int:
    df = load_source(args, args.results)
    study = variance_components(
        df,
        facets=split_list(args.facets),
        score=args.score,
        only_varying=True,
        scale=args.scale,
    )
    try:
        choice = choose_design(
            study,
            target_half_width=args.target_half_width,
            budget_usd=args.budget_usd,
            cost_per_request=args.cost_per_request,
            limits=_limits(args.limit),
        )
    except StatsError as exc:  # the CLI's flag, not the Python keyword
        message = str(exc).replace("raise limits=", "raise --limit FACET=N")
        raise StatsError(message.replace("limits= ", "--limit ")) from None
    components, designs = study.table(), choice.table()
    if args.json:
        print(
            json.dumps(
                {
                    "components": components.to_dict("records"),
                    "designs": designs.to_dict("records"),
                    "left_out": list(study.left_out),
                },
                indent=2,
                default=str,
            )
        )
        return 0
    with pd.option_context("display.float_format", "{:.4g}".format, "display.width", 160):
        print(f"Variance components of {args.score} ({len(components)} rows):")
        print(components.drop(columns=["facets"]).to_string(index=False))
        if study.left_out:
            print(f"left out (absent or one level): {', '.join(study.left_out)}")
        unit = (
            "USD" if choice.priced else "requests (no cost_usd in these results: cost_usd is empty)"
        )
        print(f"\nDesigns, best first (cost in {unit}):")
        print(designs.to_string(index=False))
    return 0
