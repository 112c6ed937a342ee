"""``python -m sentinel_memory.conformance``: see :mod:`sentinel_memory.conformance.cli`."""

import sys

from .cli import main

sys.exit(main())
