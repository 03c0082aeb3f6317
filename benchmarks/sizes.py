"""The size switch every benchmark shares.

``--smoke`` on a benchmark's command line runs it small: every benchmark together in a minute or
two (``make bench-smoke``, which ``.ci/run`` runs after the tests), enough to prove that it still
runs and that its own checks hold, too small for its numbers to mean anything. Without it, the
full sizes (``make bench``), whose numbers the guide quotes.
"""

from __future__ import annotations

import argparse
import sys
from typing import TypeVar

T = TypeVar("T")

SMOKE = "--smoke" in sys.argv[1:]


def size(full: T, smoke: T) -> T:
    """``smoke`` when the benchmark runs with ``--smoke``, else ``full``."""
    return smoke if SMOKE else full


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser that knows ``--smoke`` (the first line of ``doc`` its description)."""
    out = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])
    out.add_argument(
        "--smoke", action="store_true", help="run small: it still runs, the numbers mean nothing"
    )
    return out
