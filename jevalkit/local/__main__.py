"""``python -m jevalkit.local``: build llama-server with only the build tools installed (cmake,
ninja, httpx, pyyaml, jsonschema-rs), so the Makefile can compile it while the rest of the
environment installs. ``jevalkit local build`` does the same with a progress bar."""

from __future__ import annotations

import sys

from ..errors import LocalModelError
from ._build import build_server


def main() -> int:
    """Build and install llama-server; print where it went (one line on failure, exit 2)."""
    try:
        path = build_server(on_line=lambda line: print(line) if "Linking" in line else None)
    except LocalModelError as exc:
        print(f"jevalkit: error: {exc}", file=sys.stderr)
        return 2
    print(f"built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
