"""``make demo`` (``python -m jevalkit.demo``): ``jevalkit demo``, the main job end to end on the
embedded local model (see :mod:`jevalkit.cli.demo`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import main as cli_main

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``jevalkit demo ARGV``; return its exit code."""
    return cli_main(["demo", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
