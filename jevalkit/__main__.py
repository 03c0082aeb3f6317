"""``python -m jevalkit``: the same as the ``jevalkit`` command."""

import sys

from .cli import main

sys.exit(main())
