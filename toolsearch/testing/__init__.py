"""Test helpers that stand in for the LLM (and only the LLM): `FakeModelServer`, a real
OpenAI-compatible HTTP server on 127.0.0.1, driven by `ScriptedModel` or `RuleModel`.

    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("Sunny.")])) as server:
        client = toolsearch.wrap(server.client(), searcher)
"""

from .fake_model import FakeModel, RuleModel, ScriptedModel, ScriptExhausted, Step, call, reply, search
from .server import FakeModelServer, RequestError

__all__ = [
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
