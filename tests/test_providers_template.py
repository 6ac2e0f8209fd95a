"""Issue 33 section 3: every provider in one folder template, a registry `wrap()` consults, one raw view,
public hooks only, complete protocols. Read from the source (`ast`) where the rule is about the code, and
through real clients where it is about behaviour."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import openai
import pytest

import toolsearch
from toolsearch import ConfigError
from toolsearch.interceptor import driver, streaming
from toolsearch.interceptor.providers import base
from toolsearch.interceptor.raw import RawView
from toolsearch.testing import FakeModelServer, ScriptedModel

from test_interceptor_core import searcher  # noqa: F401 (fixture)

INTERCEPTOR = Path(toolsearch.__file__).resolve().parent / "interceptor"
PROVIDERS = INTERCEPTOR / "providers"
TEMPLATE = {"__init__.py", "client.py", "adapter.py", "shapes.py", "stream.py"}
# Private attributes of the SDKs' own objects that the shared code sets on purpose (documented in place).
SDK_PRIVATE = {"_parsed_by_type", "_cast_to", "_raw_stream"}


def _provider_folders() -> list[Path]:
    return sorted(p for p in PROVIDERS.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_every_provider_is_one_folder_with_the_same_files():
    folders = _provider_folders()
    assert [p.name for p in folders] == ["anthropic", "openai_chat", "openai_responses"]
    for folder in folders:
        files = {p.name for p in folder.glob("*.py")}
        assert TEMPLATE <= files, f"{folder.name} lacks {sorted(TEMPLATE - files)}"
        assert files - TEMPLATE <= {"chain.py"}, f"{folder.name} has files outside the template"
    loose = {p.name for p in PROVIDERS.glob("*.py")}
    assert loose == {"__init__.py", "base.py"}  # nothing a new provider must edit but its registry row


def _defined_privates(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return {n for n in names if n.startswith("_")}


def test_no_provider_reaches_into_another_modules_private_helpers():
    """A hook a provider needs is public on the base (the wrapper's `_run_tools` was called across
    modules 16 times): a private attribute is read only in the module that defines it."""
    files = [*PROVIDERS.rglob("*.py"), INTERCEPTOR / "raw.py", INTERCEPTOR / "wrap.py"]
    offenders = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _defined_privates(tree) | SDK_PRIVATE
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and node.attr not in own):
                offenders.append(f"{path.relative_to(INTERCEPTOR)}:{node.lineno} {ast.unparse(node)}")
    assert offenders == []


def test_no_stand_in_client_for_the_wiring_checks():
    for path in [*PROVIDERS.rglob("*.py"), INTERCEPTOR / "setup.py", INTERCEPTOR / "wrap.py"]:
        assert "SimpleNamespace" not in path.read_text(encoding="utf-8"), path


def _members_used(module_path: Path, variable: str) -> set[str]:
    tree = ast.parse(module_path.read_text(encoding="utf-8"))
    return {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == variable}


def _protocol_members(protocol: type) -> set[str]:
    return {n for n in vars(protocol) if not n.startswith("_")}


def test_the_protocols_declare_every_member_the_loops_use():
    adapter = _protocol_members(driver.Adapter)
    accumulator = _protocol_members(streaming.RoundAccumulator)
    for module in ("driver.py", "streaming.py"):
        assert _members_used(INTERCEPTOR / module, "adapter") <= adapter, module
    assert _members_used(INTERCEPTOR / "streaming.py", "acc") <= accumulator
    assert {"transcript"} <= adapter and {"direct"} <= accumulator
    assert base.Adapter is driver.Adapter and base.RoundAccumulator is streaming.RoundAccumulator


def test_every_adapter_and_accumulator_has_every_protocol_member():
    pytest.importorskip("anthropic")
    from toolsearch.interceptor.providers.anthropic.adapter import AnthropicAdapter
    from toolsearch.interceptor.providers.anthropic.stream import Round
    from toolsearch.interceptor.providers.openai_chat.adapter import ChatAdapter
    from toolsearch.interceptor.providers.openai_chat.stream import ChatAccumulator
    from toolsearch.interceptor.providers.openai_responses.adapter import ResponsesAdapter
    from toolsearch.interceptor.providers.openai_responses.stream import RoundAccumulator

    for cls in (ChatAdapter, ResponsesAdapter, AnthropicAdapter):
        assert _protocol_members(driver.Adapter) <= set(dir(cls)), cls
    for cls in (ChatAccumulator, RoundAccumulator, Round):
        assert _protocol_members(streaming.RoundAccumulator) <= set(dir(cls)), cls


class _DuckSync:
    class chat:  # noqa: N801 - the attribute path openai clients have
        class completions:  # noqa: N801
            @staticmethod
            def create(**kwargs):
                return None


class _DuckAsync:
    class chat:  # noqa: N801
        class completions:  # noqa: N801
            @staticmethod
            async def create(**kwargs):
                return None


def test_the_registry_recognises_clients_by_class_then_by_shape():
    assert base.provider_for(openai.OpenAI(api_key="k"))[0].name == "openai"
    assert base.provider_for(openai.AsyncOpenAI(api_key="k")) == (base.PROVIDERS[0], True)
    assert base.provider_for(openai.AzureOpenAI(api_key="k", api_version="2024-06-01",
                                                azure_endpoint="https://x.example"))[1] is False
    assert base.provider_for(_DuckSync()) == (base.PROVIDERS[0], False)
    assert base.provider_for(_DuckAsync()) == (base.PROVIDERS[0], True)
    with pytest.raises(ConfigError, match="OpenAI.*anthropic"):
        base.provider_for(object())
    anthropic = pytest.importorskip("anthropic")
    row, is_async = base.provider_for(anthropic.AsyncAnthropic(api_key="k"))
    assert (row.name, is_async) == ("anthropic", True)


class GeminiLike:
    """A client of a family toolsearch does not know (what a new SDK's client is to the registry)."""

    def __init__(self, calls: list):
        self.calls = calls


class ToolSearchGeminiLike(base.Wrapper):
    pass


def test_a_new_provider_is_one_registry_row(searcher, monkeypatch):  # noqa: F811
    row = base.Provider("geminilike", (f"{__name__.split('.')[0]}.GeminiLike", "nowhere.AsyncGeminiLike"),
                        (f"{__name__}:ToolSearchGeminiLike", f"{__name__}:ToolSearchGeminiLike"))
    monkeypatch.setattr(base, "PROVIDERS", (*base.PROVIDERS, row))
    wrapped = toolsearch.wrap(GeminiLike([]), searcher)
    assert type(wrapped) is ToolSearchGeminiLike and wrapped.calls == []  # forwarded to the client
    with pytest.raises(ConfigError, match="pinned"):  # the shared wiring checks apply to it too
        toolsearch.wrap(GeminiLike([]), searcher, pinned=["no_such_tool"])


def test_every_endpoint_serves_the_one_raw_view(searcher):  # noqa: F811
    with FakeModelServer(ScriptedModel([])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher)
        views = [wrapped.chat.completions.with_raw_response, wrapped.responses.with_streaming_response]
        awrapped = toolsearch.wrap(server.async_client(), searcher)
        views += [awrapped.chat.completions.with_streaming_response, awrapped.responses.with_raw_response]
    anthropic = pytest.importorskip("anthropic")
    wrapped_anthropic = toolsearch.wrap(anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9"), searcher)
    views.append(wrapped_anthropic.messages.with_raw_response)
    assert all(type(v) is RawView for v in views)


def test_raw_views_refuse_streaming_before_any_request_sync_and_async(searcher):  # noqa: F811
    with FakeModelServer(ScriptedModel([])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher)
        with pytest.raises(ConfigError, match=r"with_streaming_response\.create\(stream=True\)"):
            with wrapped.chat.completions.with_streaming_response.create(model="fake", stream=True,
                                                                         messages=[{"role": "user", "content": "x"}]):
                pass
        awrapped = toolsearch.wrap(server.async_client(), searcher)
        with pytest.raises(ConfigError, match=r"with_raw_response\.create\(stream=True\)"):
            asyncio.run(awrapped.chat.completions.with_raw_response.create(
                model="fake", stream=True, messages=[{"role": "user", "content": "x"}]))
        assert server.requests == []
