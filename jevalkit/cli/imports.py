"""``jevalkit import PATH... [--format F] --out results.jsonl``: other tools' logs as results."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from .. import io
from ..errors import ImportFormatError
from ..runner import read_results

__all__ = ["add_reader_options", "add_source_options", "load_source", "reader_options", "register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``import`` command."""
    cmd = sub.add_parser("import", help="read other tools' evaluation logs into a results file")
    cmd.add_argument("paths", nargs="+", metavar="PATH")
    cmd.add_argument("--format", choices=io.FORMATS, help="default: detected from the content")
    cmd.add_argument("--out", required=True, metavar="PATH", help="the results JSONL to write")
    cmd.add_argument("--overwrite", action="store_true", help="replace --out when it exists")
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


def load_source(args: argparse.Namespace, path: str) -> pd.DataFrame:
    """The results at ``path``: a results file, or another tool's log with ``--from``."""
    if args.source_format is None:
        return read_results(path)
    fmt = None if args.source_format == "auto" else args.source_format
    fmt = fmt or io.detect_format(path)
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
    for path in args.paths:
        fmt = args.format or io.detect_format(path)
        frame = io.read(path, format=fmt, **reader_options(args, fmt))
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
