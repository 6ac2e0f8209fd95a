"""The one compiled part, optional: `toolsearch/index/_rank.c` (see its header). Without a C compiler
the install still succeeds and rankings run on numpy alone (scoring.py), with the same results."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("toolsearch.index._rank", ["toolsearch/index/_rank.c"], optional=True,
                             extra_compile_args=["-O2", "-ffp-contract=off"])])
