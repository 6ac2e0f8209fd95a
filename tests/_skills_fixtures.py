"""Fixtures over the bundled skills, shared by the agent-loop tests: one on-disk index per test module
(`searcher`) and an Executor confined to the test's temp folder (`executor`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsearch.runtime.context import ToolContext
from toolsearch.runtime.executor import Executor

SKILLS = Path(__file__).resolve().parents[1] / "skills"


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher.from_path(SKILLS, tmp_path_factory.mktemp("index"), strict=True)
    yield s
    s.close()


@pytest.fixture
def executor(searcher, tmp_path):
    with Executor(searcher.registry, context=ToolContext(workspace=tmp_path)) as ex:
        yield ex
