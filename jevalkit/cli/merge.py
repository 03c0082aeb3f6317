"""``jevalkit merge RESULTS``: merge the part files of a sharded run (``--shard i/N``) into it."""

from __future__ import annotations

import argparse
import sys

from ..results import merge_parts
from ._commands import add_command

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``merge`` command."""
    cmd = add_command(sub, "merge")
    cmd.add_argument("results", metavar="RESULTS", help="the results JSONL the shards ran for")
    cmd.add_argument(
        "--partial",
        action="store_true",
        help="merge the parts there are although shards are missing or stopped early (said on "
        "stderr); the part files are kept for the complete merge",
    )
    cmd.set_defaults(handler=_merge)


def _merge(args: argparse.Namespace) -> int:
    report = merge_parts(args.results, partial=args.partial)
    for part in report:
        print(
            f"{part['part']}: {part['rows']} rows, {part['new']} new, "
            f"{part['replaced_errors']} replacing error rows, "
            f"{part['already_merged']} already merged"
        )
    torn = [part for part in report if part["torn"]]
    kept = sum(part["kept"] for part in report)
    if kept == len(report) and not torn:
        ending = "the part files are kept (a partial merge)"
    else:
        ending = "the part files are removed" + (f", but {kept} kept" if kept else "")
    print(f"merged {len(report)} part file(s) into {args.results}; {ending}")
    for part in torn:
        print(
            f"{part['part']}: its last line is torn ({part['torn']} bytes of a write a crash "
            "interrupted), so the part is kept: run its shard again (it resumes and sends that "
            "request again), then `jevalkit merge` again",
            file=sys.stderr,
        )
    return 1 if torn else 0
