"""Test helpers that stand in for the LLM (and only the LLM): `FakeModelServer`, a real
OpenAI-compatible HTTP server on 127.0.0.1, driven by `ScriptedModel` or `RuleModel`; `AnthropicServer`, the
same for the Anthropic Messages API (fake models and block helpers in `anthropic_model`).

    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("Sunny.")])) as server:
        client = toolsearch.wrap(server.client(), searcher)
"""

from .anthropic_server import AnthropicServer  # Messages API; imports anthropic only in .client()
from .fake_model import FakeModel, RuleModel, ScriptedModel, ScriptExhausted, Step, call, reply, search
from .server import FakeModelServer, RequestError

__all__ = [
    "AnthropicServer",
    "FakeModel",
    "FakeModelServer",
    "RequestError",
    "RuleModel",
    "ScriptExhausted",
    "ScriptedModel",
    "Step",
    "call",
    "reply",
    "search",
]
