"""The bundled skills/ folder as a whole: it loads cleanly, every handler matches its schema, and
the real Executor runs built-in tools end to end (validation, defaults, context, retry)."""

from __future__ import annotations

import importlib
import inspect
import json
import socket
from pathlib import Path

import pytest
import yaml

import toolsearch
from toolsearch.catalog.loader import load_skills
from toolsearch.runtime.context import ToolContext
from toolsearch.runtime.executor import Executor

SKILLS = Path(__file__).resolve().parent.parent / "skills"


def test_every_skill_file_validates_and_the_folder_builds_a_registry() -> None:
    files = sorted(SKILLS.glob("*.yaml"))
    assert len(files) >= 11
    skills = [toolsearch.Skill.model_validate(yaml.safe_load(f.read_text())) for f in files]
    registry = toolsearch.Registry(skills)
    assert len(registry.catalog) >= 60
    names = [t.name for s in skills for t in s.tools]
    assert len(names) == len(set(names)) and toolsearch.META_TOOL_NAME not in names


def test_the_loader_accepts_the_folder_without_problems() -> None:
    result = load_skills(SKILLS)
    assert result.problems == () and result.tool_count >= 60


@pytest.mark.parametrize("tool", [t for s in load_skills(SKILLS).skills for t in s.tools], ids=lambda t: t.name)
def test_handler_signature_matches_schema_and_metadata_is_searchable(tool: toolsearch.Tool) -> None:
    module, name = str(tool.handler).split(":")
    handler = getattr(importlib.import_module(module), name)
    params = inspect.signature(handler).parameters
    props = set(tool.input_schema["properties"])
    assert set(params) - {"context"} == props
    required = {n for n, p in params.items() if p.default is p.empty and n != "context"}
    assert required <= set(tool.input_schema.get("required", ()))
    assert tool.input_schema.get("additionalProperties") is False
    assert len(tool.description) >= 40 and tool.tags and tool.examples
    assert tool.pinned == (tool.name == "todo")  # only the planner is always loaded


def test_executor_runs_builtin_tools_with_validation_defaults_and_context(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    with Executor(SKILLS, context=ctx) as ex:
        assert not ex.run("write_file", json.dumps({"path": "a/b.txt", "content": "hi\n"})).is_error
        assert ex.run("read_file", {"path": "a/b.txt"}).text == "hi\n"
        bad = ex.run("read_file", {"path": "a/b.txt", "offset": 0})
        assert bad.is_error
        escape = ex.run("read_file", {"path": "../x"})
        assert escape.is_error and "outside" in escape.text
        shell = ex.run("run_command", {"command": "echo hi"})
        assert shell.is_error and "disabled" in shell.text
        assert json.loads(ex.run("calculate", {"expression": "2^8"}).text)["result"] == 256
        assert "added task-1" in ex.run("todo", {"action": "add", "title": "plan"}).text
        from toolsearch.builtin.todo import plan_summary

        assert "task-1 'plan'" in plan_summary(ctx)


def test_http_get_retries_transient_failures_per_the_skill_policy(tmp_path: Path) -> None:
    delays: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        delays.append(seconds)

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Executor(SKILLS, context=ToolContext(workspace=tmp_path, allow_hosts=("127.0.0.1",)), sleep=fake_sleep) as ex:
        result = ex.run("http_get", {"url": f"http://127.0.0.1:{port}/"})
        assert result.is_error and "could not reach" in result.text and result.attempts == 3
        assert delays == [0.5, 1.0]
        post = ex.run("http_post", {"url": f"http://127.0.0.1:{port}/", "body": "x"})
        assert post.is_error and post.attempts == 1  # POST is never retried
