"""``jevalkit compare BASE.jsonl HEAD.jsonl`` (or one file with ``--baseline SYSTEM``): paired
differences with tests and adjusted p-values, then the regressed cases."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pandas as pd

from ..errors import StatsError
from ..metrics import COMPARE_METRICS, case_changes, compare
from ..reports import write_compare_page
from ..results import combine_runs
from ._args import split_list
from ._commands import add_command
from .imports import add_source_options, load_source

__all__ = ["TABLE_COLUMNS", "register"]

TABLE_COLUMNS = [
    "system",
    "baseline",
    "metric",
    "n_paired",
    "value_baseline",
    "value",
    "delta",
    "ci_low",
    "ci_high",
    "test",
    "p_value",
    "p_holm",
    "p_bh",
    "mde",
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``compare`` command."""
    cmd = add_command(sub, "compare")
    cmd.add_argument(
        "files", nargs="+", metavar="RESULTS", help="BASE and HEAD, or one file with --baseline"
    )
    cmd.add_argument(
        "--baseline",
        dest="baseline_system",
        metavar="SYSTEM",
        help="the system the others are compared with (one file)",
    )
    cmd.add_argument(
        "--by", default="probe", help="comma-separated columns to compare within (default probe)"
    )
    cmd.add_argument(
        "--metric",
        default="pass_rate,mean_score",
        help=f"comma-separated, among {', '.join(COMPARE_METRICS)}",
    )
    cmd.add_argument(
        "--pool",
        action="store_true",
        help="pool a probe's versions and generation settings (params_hash) within a system; "
        "by default they are compared apart",
    )
    cmd.add_argument("--html", metavar="FILE", help="also write a diff page")
    add_source_options(cmd, "each FILE")
    cmd.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    frames = [load_source(args, path) for path in args.files]
    if len(frames) == 2 and args.baseline_system is None:
        both = combine_runs(*frames)
        data, baseline = both.rows, both.baseline
    elif len(frames) == 1 and args.baseline_system:
        data, baseline = frames[0], args.baseline_system
    else:
        raise StatsError("give BASE and HEAD results files, or one file with --baseline SYSTEM")
    by = split_list(args.by)
    by = [c for c in by if c in data.columns] if args.by == "probe" else by
    table = compare(data, baseline, by=by or None, metrics=split_list(args.metric), pool=args.pool)
    # the groups compare kept: the --by columns, then a probe's versions or settings kept apart
    groups = list(table.columns[: list(table.columns).index("system")])
    apart = [c for c in groups if c not in by]
    with pd.option_context(
        "display.float_format", "{:.3f}".format, "display.width", 220, "display.max_columns", 30
    ):
        if apart:
            print(
                f"kept apart: {', '.join(apart)} differ within a system; pass --pool to pool them"
            )
        print(table[[*groups, *TABLE_COLUMNS]].to_string(index=False))
        all_changes = []
        for system in sorted(set(table.loc[table["n_paired"] > 0, "system"])):
            for where, rows in _settings(data, apart):
                if not {baseline, system} <= set(rows["system"].astype(str)):
                    continue  # this version or setting was not run by both
                changes = case_changes(rows, baseline, system, pool=args.pool)
                if not len(changes):
                    continue
                all_changes.append(changes.assign(system=system))
                counts = changes["status"].value_counts().to_dict()
                print(
                    f"\n{system} against {baseline}{where}: "
                    + ", ".join(f"{n} {s}" for s, n in counts.items())
                )
                shown = changes[changes["status"] == "regressed"].drop(
                    columns=["output_a", "output_b", "probs_a", "probs_b"]
                )
                if len(shown):
                    print(shown.head(20).to_string(index=False))
    if args.html:
        changes = pd.concat(all_changes, ignore_index=True) if all_changes else pd.DataFrame()
        print(f"\n{write_compare_page(table, changes, args.html, title=f'Against {baseline}')}")
    return 0


def _settings(data: pd.DataFrame, apart: list[str]) -> Iterator[tuple[str, pd.DataFrame]]:
    """The rows of each version or setting kept apart (all rows when none is), with a label."""
    if not apart:
        yield "", data
        return
    for key, rows in data.groupby(apart, sort=True, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        yield " (" + ", ".join(f"{c}={v}" for c, v in zip(apart, values, strict=True)) + ")", rows
