"""``jevalkit probes list | check | show | page | lock | new``.

Every subcommand works on the bundled probes, or on a user's probe folder given with
``--probes-dir DIR`` or ``$JEVALKIT_PROBES`` (checked with the same rules)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from .. import probes as api
from ..reports import versions_run, write_probe_page
from ._commands import add_command

__all__ = ["register"]


def _add_dir(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--probes-dir",
        metavar="DIR",
        help="a folder of your own probes (<id>/v<N>.yaml + probes.lock); default "
        "$JEVALKIT_PROBES, else the bundled probes",
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``probes`` command group."""
    group = add_command(sub, "probes")
    cmds = group.add_subparsers(dest="probes_command", required=True, metavar="SUBCOMMAND")
    listing = cmds.add_parser("list", help="one line per probe version")
    _add_dir(listing)
    listing.set_defaults(handler=_list)
    check = cmds.add_parser("check", help="run every worked example through the real scorer")
    check.add_argument("probes", nargs="*", metavar="PROBE", help="id or id@N (default: all)")
    _add_dir(check)
    check.set_defaults(handler=_check)
    show = cmds.add_parser("show", help="print a Markdown probe card")
    show.add_argument("probe", metavar="PROBE")
    _add_dir(show)
    show.set_defaults(handler=_show)
    page = cmds.add_parser("page", help="a self-contained HTML probe page")
    page.add_argument("probe", metavar="PROBE")
    page.add_argument(
        "--results", nargs="*", default=[], metavar="PATH", help="results files with real runs"
    )
    page.add_argument("--out", metavar="FILE", help="default: <probe>.html")
    _add_dir(page)
    page.set_defaults(handler=_page)
    lock = cmds.add_parser("lock", help="publish new probe versions into probes.lock")
    _add_dir(lock)
    lock.set_defaults(handler=_lock)
    new = cmds.add_parser("new", help="write a skeleton probe for a case file, to edit")
    new.add_argument("id", metavar="ID", help="the new probe's id (lowercase, digits, hyphens)")
    new.add_argument("--cases", metavar="FILE", help="a JSONL or CSV case file (copied beside it)")
    new.add_argument(
        "--scoring",
        default="exact_match",
        choices=api.SKELETON_SCORERS,
        help="the scorer (default exact_match)",
    )
    _add_dir(new)
    new.set_defaults(handler=_new)


def _root(args: argparse.Namespace) -> Path | None:
    return api.user_probes_dir(args.probes_dir)


def _list(args: argparse.Namespace) -> int:
    # --probes-dir: that folder; else every folder a probe is looked up in, the user's first
    table = api.list_probes(root=Path(args.probes_dir) if args.probes_dir else None)
    shown = table.drop(columns=["sha256"])
    if shown["folder"].nunique() <= 1:
        shown = shown.drop(columns=["folder"])
    print(shown.to_string(index=False))
    return 0


def _check(args: argparse.Namespace) -> int:
    root = _root(args)
    report = api.check_probes(args.probes or None, root=root, beside_bundled=root is not None)
    notes = report["note"] != ""
    for row in report.itertuples():
        status = "note" if row.note else "ok  " if row.ok else "FAIL"
        what = f"{row.label} (must {row.expect})" if row.label else ""
        score = f" score={row.score:g}" if row.score is not None and row.score == row.score else ""
        detail = f": {row.problem or row.note}" if row.problem or row.note else ""
        print(" ".join(filter(None, [status, row.probe, what + score])) + detail)
    failed = int((~report["ok"]).sum())
    noted = f", {int(notes.sum())} note(s)" if notes.any() else ""
    print(f"{len(report) - failed - int(notes.sum())} ok, {failed} failed{noted}")
    return 1 if failed else 0


def _load(args: argparse.Namespace) -> api.Probe:
    return api.load_probe(args.probe, root=Path(args.probes_dir) if args.probes_dir else None)


def _show(args: argparse.Namespace) -> int:
    print(api.probe_card(_load(args)))
    return 0


def _lock(args: argparse.Namespace) -> int:
    added = api.publish_probes(root=_root(args))
    print("published: " + ", ".join(added) if added else "nothing new to publish")
    return 0


def _page(args: argparse.Namespace) -> int:
    probe = _load(args)
    print(write_probe_page(probe, args.results, args.out or f"{probe.id}-v{probe.version}.html"))
    others = versions_run(probe, args.results) if args.results else {}
    if others and probe.name not in others:
        held = ", ".join(f"{name} ({n} rows)" for name, n in others.items())
        print(
            f"note: the results hold no rows of {probe.name}, so the page says 'Not yet run'; "
            f"they hold {held}: jevalkit probes page {next(iter(others))} --results ...",
            file=sys.stderr,
        )
    return 0


def _new(args: argparse.Namespace) -> int:
    made = api.new_probe(
        args.id, cases=args.cases, scoring=args.scoring, probes_dir=args.probes_dir
    )
    where = f" --probes-dir {shlex.quote(str(args.probes_dir))}" if args.probes_dir else ""
    if made.separator != ",":
        print(f"{args.cases}: separated by {made.separator!r}: read as such (the copy uses commas)")
    if made.numbered:
        print(
            f"{args.cases}: no `id`: the cases are numbered 1, 2, ... in file order (in the copy)"
        )
    if made.expected_column:
        renamed = "" if made.expected_column == "expected" else ", copied as `expected`"
        print(
            f"expected answer: the `{made.expected_column}` column{renamed} "
            "(never put into the prompt)"
        )
    elif args.cases and args.scoring not in ("json_schema", "constraints"):
        print(
            f"expected answer: none of the columns {', '.join(api.ANSWER_COLUMNS)}: write "
            "`expected` into scoring (one answer for every case) or add an `expected` column"
        )
    if made.renamed:
        pairs = ", ".join(f"{old!r} -> {new}" for old, new in made.renamed)
        print(f"renamed for {{{{placeholders}}}} (in the copy): {pairs}")
    if made.twins:
        first, again = made.twins[0]
        print(
            f"note: {len(made.twins)} case(s) repeat another's fields exactly (case {again!r} is "
            f"case {first!r} again): kept; delete the copies if they are not meant"
        )
    if made.left_out:
        print(f"left out of the prompt as well: {', '.join(made.left_out)} (answer-like columns)")
    if made.prompt_fields:
        print(f"the user message shows: {', '.join(made.prompt_fields)}")
    print(
        f"wrote {made.path}: edit every TODO ({', '.join(made.todo)}), then `jevalkit probes "
        f"check{where}` and `jevalkit probes lock{where}`"
    )
    return 0
