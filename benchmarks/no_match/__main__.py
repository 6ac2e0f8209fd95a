"""`python -m benchmarks.no_match`: see this package's docstring."""

from .suite import main

raise SystemExit(main())
