"""``jevalkit score PROBE [--file PATH] [--case ID]``: score one output, print the Score as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import UsageError
from ..files import read_stream
from ..probes import load_probe
from ._commands import add_command

__all__ = ["MAX_OUTPUT_BYTES", "register"]

MAX_OUTPUT_BYTES = 64 * 1024 * 1024


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``score`` command."""
    cmd = add_command(sub, "score")
    cmd.add_argument("probe", metavar="PROBE", help="id or id@N")
    cmd.add_argument("--file", metavar="PATH", help="read the output from PATH instead of stdin")
    cmd.add_argument("--case", metavar="ID", help="for a probe with cases: the case answered")
    cmd.set_defaults(handler=_score)


def _score(args: argparse.Namespace) -> int:
    probe = load_probe(args.probe)
    if args.file:
        # a file or a pipe (`--file <(cmd)`), read as stdin is
        output = read_stream(args.file, UsageError, max_bytes=MAX_OUTPUT_BYTES, what="output file")
    else:
        output = sys.stdin.buffer.read(MAX_OUTPUT_BYTES + 1)
    if len(output) > MAX_OUTPUT_BYTES:
        raise UsageError(
            f"{args.file or 'stdin'}: more than {MAX_OUTPUT_BYTES // 2**20} MB; not a model output"
        )
    result = probe.score(output, args.case).to_dict()
    case = {"case_id": args.case} if args.case is not None else {}
    print(json.dumps({"probe": probe.name, **case, **result}, indent=2, ensure_ascii=False))
    return 0
