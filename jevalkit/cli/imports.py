"""``jevalkit import PATH... [--format F] --out results.jsonl``: other tools' logs as results."""

from __future__ import annotations

import argparse
import zipfile

import numpy as np
import pandas as pd

from .. import io
from ..errors import ImportFormatError
from ..runner import read_results

__all__ = [
    "add_reader_options",
    "add_source_options",
    "load_source",
    "reader_options",
    "register",
    "sniffed_format",
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``import`` command."""
    cmd = sub.add_parser("import", help="read other tools' evaluation logs into a results file")
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


def sniffed_format(path: str) -> str | None:
    """The format of the file at ``path`` told by its content, as ``import`` tells it; None
    when no format fits a text file (it is then read as jevalkit results, whose reader names
    the field at fault). An archive no format fits is refused as such, never "not UTF-8"."""
    try:
        return io.detect_format(path)
    except ImportFormatError:
        if zipfile.is_zipfile(path):
            raise
        return None


def load_source(args: argparse.Namespace, path: str) -> pd.DataFrame:
    """The results at ``path``: a jevalkit results file, or another tool's log, told by its
    content as ``import`` does (``--from FORMAT`` names it instead)."""
    fmt = None if args.source_format == "auto" else args.source_format
    if args.source_format is None:
        fmt = sniffed_format(path)
        if fmt is None:
            return read_results(path)  # its own errors name the results field at fault
    fmt = fmt or io.detect_format(path)
    if fmt == "jevalkit":
        return read_results(path)
    return io.read(path, format=fmt, **reader_options(args, fmt))


def reader_options(args: argparse.Namespace, fmt: str | None) -> dict:
    """The reader keyword arguments the command line set, for the format being read."""
    wanted = {
        "verdicts": {"baseline": args.verdict_baseline},
        "lm_eval": {"model": args.source_model, "task": args.task},
    }.get(fmt or "", {})
    return {k: v for k, v in wanted.items() if v is not None}


def _import(args: argparse.Namespace) -> int:
    frames = []
    labels = args.label or [None] * len(args.paths)
    if len(labels) != len(args.paths):
        raise ImportFormatError(
            f"{len(labels)} --label for {len(args.paths)} files; give one --label per file, in order"
        )
    for path, label in zip(args.paths, labels, strict=True):
        fmt = args.format or io.detect_format(path)
        frame = io.read(path, format=fmt, label=label, **reader_options(args, fmt))
        unusable = frame["error"].notna()
        reasons = frame.loc[unusable, "error"].map(lambda e: e.get("message", "")).value_counts()
        detail = "; ".join(f"{n} {reason}" for reason, n in reasons.items())
        print(
            f"{path}: {len(frame)} rows read as {fmt}"
            + (f"; {int(unusable.sum())} without a usable value ({detail})" if len(reasons) else "")
        )
        frames.append(frame)
    combined = pd.concat(frames, ignore_index=True)
    source = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    keys = [
        c
        for c in io.FRAME_COLUMNS
        if c
        in (
            "probe",
            "version",
            "case_id",
            "model",
            "label",
            "system_a",
            "system_b",
            "position",
            "repeat",
        )
    ]
    clashes = combined.duplicated(keys, keep=False)
    if clashes.any():
        files = sorted({args.paths[i] for i in source[clashes.to_numpy()]})
        where = (
            f"in {files[0]}" if len(files) == 1 else f"from different files ({', '.join(files)})"
        )
        raise ImportFormatError(
            f"{int(clashes.sum())} rows {where} share a key (same probe, case, model and "
            "repeat); "
            + (
                "a log holds each sample once: check it for duplicated records"
                if len(files) == 1
                else "import the files into separate results files"
            )
        )
    out = io.write_results(combined, args.out, overwrite=args.overwrite)
    print(f"wrote {len(combined)} rows to {out}")
    return 0
