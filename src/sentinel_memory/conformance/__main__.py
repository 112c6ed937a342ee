"""``python -m sentinel_memory.conformance``: see ``sentinel_memory.conformance.cli``."""

import sys

from .cli import main

sys.exit(main())
