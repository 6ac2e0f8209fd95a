"""`python -m benchmarks.gateway_load`: see this package's docstring."""

from .suite import main

raise SystemExit(main())
