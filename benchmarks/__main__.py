"""`python -m benchmarks <tokens|quality|latency|mcp|all> [--quick] [--out DIR]`."""

import sys

from .runner import main

sys.exit(main())
