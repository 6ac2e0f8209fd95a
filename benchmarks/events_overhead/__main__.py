"""`python -m benchmarks.events_overhead`: see this package's docstring."""

from .suite import main

raise SystemExit(main())
