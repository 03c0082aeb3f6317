"""``jevalkit probes list | check | show | lock``."""

from __future__ import annotations

import argparse

from .. import probes as api
from ..reports import write_probe_page

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``probes`` command group."""
    group = sub.add_parser("probes", help="list, check, show and publish probes")
    cmds = group.add_subparsers(dest="probes_command", required=True, metavar="SUBCOMMAND")
    cmds.add_parser("list", help="one line per probe version").set_defaults(handler=_list)
    check = cmds.add_parser("check", help="run every worked example through the real scorer")
    check.add_argument("probes", nargs="*", metavar="PROBE", help="id or id@N (default: all)")
    check.set_defaults(handler=_check)
    show = cmds.add_parser("show", help="print a Markdown probe card")
    show.add_argument("probe", metavar="PROBE")
    show.set_defaults(handler=_show)
    page = cmds.add_parser("page", help="a self-contained HTML probe page")
    page.add_argument("probe", metavar="PROBE")
    page.add_argument(
        "--results", nargs="*", default=[], metavar="PATH", help="results files with real runs"
    )
    page.add_argument("--out", metavar="FILE", help="default: <probe>.html")
    page.set_defaults(handler=_page)
    lock = cmds.add_parser("lock", help="publish new probe versions into probes.lock")
    lock.set_defaults(handler=_lock)


def _list(args: argparse.Namespace) -> int:
    table = api.list_probes()
    print(table.drop(columns=["sha256"]).to_string(index=False))
    return 0


def _check(args: argparse.Namespace) -> int:
    report = api.check_probes(args.probes or None)
    for row in report.itertuples():
        status = "ok  " if row.ok else "FAIL"
        what = f"{row.label} (must {row.expect})" if row.label else ""
        score = f" score={row.score:g}" if row.score is not None and row.score == row.score else ""
        detail = f": {row.problem}" if row.problem else ""
        print(f"{status} {row.probe} {what}{score}{detail}".rstrip())
    failed = int((~report["ok"]).sum())
    print(f"{len(report) - failed} ok, {failed} failed")
    return 1 if failed else 0


def _show(args: argparse.Namespace) -> int:
    print(api.probe_card(api.load_probe(args.probe)))
    return 0


def _lock(args: argparse.Namespace) -> int:
    added = api.publish_probes()
    print("published: " + ", ".join(added) if added else "nothing new to publish")
    return 0


def _page(args: argparse.Namespace) -> int:
    probe = api.load_probe(args.probe)
    print(write_probe_page(probe, args.results, args.out or f"{probe.id}-v{probe.version}.html"))
    return 0
