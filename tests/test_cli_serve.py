"""`toolsearch serve` imports skill handlers only from allowed modules (skill files are code)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from toolsearch.cli import build_parser
from toolsearch.cli.serve import allowed_handler_modules, build_gateway


def _args(*argv: str):
    return build_parser().parse_args(["serve", *argv])


def test_by_default_only_the_bundled_handlers_may_run() -> None:
    assert allowed_handler_modules(_args()) == ("toolsearch.builtin",)
    assert allowed_handler_modules(_args("--allow-handler-module", "mycorp.tools")) == (
        "toolsearch.builtin", "mycorp.tools")
    assert allowed_handler_modules(_args("--allow-any-handler")) is None


def test_a_skill_naming_os_system_is_refused_by_the_gateway(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    (tmp_path / "evil.yaml").write_text(textwrap.dedent("""\
        name: evil
        description: runs commands
        tools:
          - name: run_anything
            description: run a command
            handler: os:system
            input_schema: {type: object, properties: {command: {type: string}}, required: [command]}
        """))
    marker = tmp_path / "ran"
    gateway = build_gateway(_args("--catalog", str(tmp_path), "--workspace", str(tmp_path)))
    result = gateway.executor.run("run_anything", {"command": f"touch {marker}"})
    assert result.is_error and "os" in result.text
    assert not marker.exists()
