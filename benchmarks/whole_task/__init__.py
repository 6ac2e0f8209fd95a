"""Whole-task searches: a scripted model that searches with the user's whole request, at most twice,
with default options, per task source and catalog size, against issue 34's targets.

    python -m benchmarks.whole_task --out DIR [--source NAME]
"""
