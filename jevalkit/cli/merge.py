"""``jevalkit merge RESULTS``: merge the part files of a sharded run (``--shard i/N``) into it."""

from __future__ import annotations

import argparse

from ..results import merge_parts
from ._commands import add_command

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``merge`` command."""
    cmd = add_command(sub, "merge")
    cmd.add_argument("results", metavar="RESULTS", help="the results JSONL the shards ran for")
    cmd.set_defaults(handler=_merge)


def _merge(args: argparse.Namespace) -> int:
    report = merge_parts(args.results)
    for part in report:
        print(
            f"{part['part']}: {part['rows']} rows, {part['new']} new, "
            f"{part['replaced_errors']} replacing error rows, "
            f"{part['already_merged']} already merged"
        )
    print(f"merged {len(report)} part file(s) into {args.results}; the part files are removed")
    return 0
