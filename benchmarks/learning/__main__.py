"""`python -m benchmarks.learning`: see this package's docstring."""

from .suite import main

raise SystemExit(main())
