"""``python -m jevalkit.cli``: the same as the ``jevalkit`` console script."""

import sys

from . import main

sys.exit(main())
