"""``make demo``: the main job end to end (``python -m jevalkit.demo``)."""

from __future__ import annotations

import sys

from .probes import check_probes


def main() -> int:
    """Check every probe's worked examples through the real scorer and print the result."""
    report = check_probes()
    print(report.to_string(index=False))
    return 0 if report["ok"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
