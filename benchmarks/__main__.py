"""`python -m benchmarks <tokens|quality|latency|all> [--quick] [--out DIR]`."""

import sys

from .runner import main

sys.exit(main())
