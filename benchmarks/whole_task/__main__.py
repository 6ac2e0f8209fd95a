"""`python -m benchmarks.whole_task`: see this package's docstring."""

from .suite import main

raise SystemExit(main())
