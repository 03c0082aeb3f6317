"""``jevalkit import PATH... [--format F] --out results.jsonl``: other tools' logs as results."""

from __future__ import annotations

import argparse

import pandas as pd

from .. import io
from ..errors import ImportFormatError
from ._commands import add_command

__all__ = [
    "add_reader_options",
    "add_source_options",
    "load_source",
    "load_sources",
    "register",
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``import`` command."""
    cmd = add_command(sub, "import")
    cmd.add_argument("paths", nargs="+", metavar="PATH")
    cmd.add_argument("--format", choices=io.FORMATS, help="default: detected from the content")
    cmd.add_argument("--out", required=True, metavar="PATH", help="the results JSONL to write")
    cmd.add_argument("--overwrite", action="store_true", help="replace --out when it exists")
    cmd.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="the system name of each PATH, in order (two logs of one task and model)",
    )
    add_reader_options(cmd)
    cmd.set_defaults(handler=_import)


def add_reader_options(cmd: argparse.ArgumentParser) -> None:
    """Options some formats need: the baseline of verdict games, lm-eval's model and task."""
    cmd.add_argument(
        "--verdict-baseline",
        metavar="MODEL",
        help="the baseline model of 5-way verdict games (the file does not name it)",
    )
    cmd.add_argument(
        "--model",
        dest="source_model",
        help="the model of an lm-eval samples file (gate --repeats auto: the model to run)",
    )
    cmd.add_argument("--task", help="the task of an lm-eval samples file")


def add_source_options(cmd: argparse.ArgumentParser, what: str = "RESULTS") -> None:
    """``--from`` (read another tool's log instead of a results file) and the reader options."""
    cmd.add_argument(
        "--from",
        dest="source_format",
        choices=["auto", *io.FORMATS],
        help=f"{what} is another tool's log in this format (auto: detect it)",
    )
    add_reader_options(cmd)


def load_source(
    args: argparse.Namespace, path: str, fmt: str | None = None, label: str | None = None
) -> pd.DataFrame:
    """The results at ``path``: a results file, or another tool's log told by its content as
    ``import`` tells it (``--from FORMAT``, or ``fmt``, names it instead), read with the reader
    options the command line set."""
    return io.read_source(
        path,
        fmt or args.source_format,
        label=label,
        baseline=args.verdict_baseline,
        model=args.source_model,
        task=args.task,
    )


def load_sources(args: argparse.Namespace, paths: list[str]) -> pd.DataFrame:
    """Several results files (or other tools' logs) as one frame, as :func:`load_source` reads
    each (:func:`jevalkit.io.read_sources`: a file given twice, or two files holding the same
    row, is refused)."""
    return io.read_sources(
        paths,
        args.source_format,
        baseline=args.verdict_baseline,
        model=args.source_model,
        task=args.task,
    )


def _import(args: argparse.Namespace) -> int:
    frames = []
    labels = args.label or [None] * len(args.paths)
    if len(labels) != len(args.paths):
        raise ImportFormatError(
            f"{len(labels)} --label for {len(args.paths)} files; give one --label per file, in order"
        )
    for path, label in zip(args.paths, labels, strict=True):
        fmt = args.format or io.detect_format(path)
        frame = load_source(args, path, fmt, label)
        unusable = frame["error"].notna()
        reasons = frame.loc[unusable, "error"].map(lambda e: e.get("message", "")).value_counts()
        detail = "; ".join(f"{n} {reason}" for reason, n in reasons.items())
        print(
            f"{path}: {len(frame)} rows read as {fmt}"
            + (f"; {int(unusable.sum())} without a usable value ({detail})" if len(reasons) else "")
        )
        frames.append(frame)
    combined = io.combine_imports(frames, list(args.paths))
    out = io.write_results(combined, args.out, overwrite=args.overwrite)
    print(f"wrote {len(combined)} rows to {out}")
    return 0
