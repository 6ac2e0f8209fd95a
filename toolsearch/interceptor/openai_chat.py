"""`wrap()`: the OpenAI Chat Completions adapter around the provider-free turn core.

Composition, never patching (instructor's `from_openai`): the wrapper holds the caller's client, serves
`chat.completions.create` itself and forwards every other attribute (`wrapped.models.list()` works).
`OpenAI` gives `ToolSearchOpenAI`, `AsyncOpenAI` gives `AsyncToolSearchOpenAI`; both drive the one
`turn_flow` generator, so their behaviour cannot drift apart.

Sessions: the wrapper has a default session (`wrapped.default_session`); `wrapped.session()` makes a new
independent one, and `wrapped.with_session(s)` returns a view of the same client bound to `s`:
`wrapped.with_session(s).chat.completions.create(...)`. No extra keyword is added to `create`, so its
signature stays openai's.

The returned `ChatCompletion` is the model's final response with the interceptor's own calls removed;
its `usage` is the sum over every model call this `create` made (what the caller pays for), and
`response.toolsearch` is the `Report` (per-round usage included). `stream=True` and `n > 1` are refused:
the interceptor must read a whole response to know whether the model searched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, overload

from .._errors import ConfigError
from ..catalog.export import export_tool
from ..catalog.hits import Retriever
from .core import AskModel, ModelReply, Outcome, RunTools, ToolCall, ToolOutput, TurnInput, turn_flow
from .options import InterceptorOptions
from .report import Usage
from .session import Session
from .setup import check_setup, make_reminder, run_calls, run_calls_async, session_context

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI
    from openai.types.chat import ChatCompletion

__all__ = ["AsyncToolSearchOpenAI", "ToolSearchOpenAI", "wrap"]


class _Wrapper:
    def __init__(self, client: Any, retriever: Retriever, options: InterceptorOptions,
                 executor: Any, session: Session | None = None):
        self._client = client
        self.retriever = retriever
        self.options = options
        self.executor = executor
        self.default_session = session or Session(options, id="default")

    def session(self, *, id: str | None = None, context: Any = None) -> Session:
        """A new, independent session (one per conversation). In the agent loop it gets its own
        `ToolContext` (own state such as the todo plan; the executor's workspace) unless one is given."""
        session = Session(self.options, id=id, context=context)
        if context is None and self.executor is not None:
            session.context = session_context(self.executor, session.id)
        return session

    def with_session(self, session: Session):  # -> same wrapper type
        if not isinstance(session, Session):
            raise ConfigError(f"with_session() needs a toolsearch Session, got {type(session).__name__}")
        if session.options is not self.options:
            raise ConfigError(
                "this session was made by another wrapper (different options); "
                "make sessions with wrapped.session()"
            )
        return type(self)(self._client, self.retriever, self.options, self.executor, session)

    @property
    def client(self) -> Any:
        """The wrapped openai client, untouched."""
        return self._client

    @property
    def chat(self) -> _Chat:
        return _Chat(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    # -- shared by both drivers ----------------------------------------------------------------
    def _start(self, kwargs: dict[str, Any]):
        if kwargs.get("stream"):
            raise ConfigError(
                "stream=True is not supported through toolsearch.wrap(): the interceptor must read "
                "whole responses to answer tool_search; call without stream"
            )
        if kwargs.get("n") not in (None, 1):
            raise ConfigError(f"n={kwargs['n']} is not supported through toolsearch.wrap(); use n=1")
        messages = kwargs.get("messages")
        if not isinstance(messages, (list, tuple)):
            raise ConfigError("create() needs messages=[...] (a list of chat messages)")
        caller_tools = list(kwargs.get("tools") or [])
        names = frozenset(_tool_name(t) for t in caller_tools) - {""}
        if self.options.meta_tool_name in names:
            raise ConfigError(
                f"your tools include {self.options.meta_tool_name!r}, the name reserved for the search "
                "meta-tool; rename your tool or pass meta_tool_name=... to wrap()"
            )
        session = self.default_session
        reminder = make_reminder(self.executor, session) if self.options.execute else None
        flow = turn_flow(session, self.retriever, TurnInput(names, _last_user_text(messages), reminder))
        return session, flow, caller_tools

    @staticmethod
    def _request(kwargs: dict[str, Any], caller_tools: list[Any], ask: AskModel) -> dict[str, Any]:
        request = dict(kwargs)
        messages = list(kwargs["messages"])
        for exchange in ask.transcript:
            messages.append(_assistant_message(exchange.reply))
            messages += [{"role": "tool", "tool_call_id": i, "content": text} for i, text in exchange.answers]
        request["messages"] = messages
        tools = [] if ask.no_tools else caller_tools + [export_tool(t, "openai") for t in ask.tools]
        if tools:
            request["tools"] = tools
        else:  # the API rejects these without tools
            for key in ("tools", "tool_choice", "parallel_tool_calls"):
                request.pop(key, None)
        return request

    @staticmethod
    def _finish(response: ChatCompletion, outcome: Outcome, session: Session) -> ChatCompletion:
        report = outcome.recorder.build()
        choice = response.choices[0]
        calls = choice.message.tool_calls
        if calls and outcome.drop_call_ids:
            kept = [c for c in calls if c.id not in outcome.drop_call_ids]
            choice.message.tool_calls = kept or None
            if not kept and choice.finish_reason == "tool_calls":
                choice.finish_reason = "stop"
        if report.model_calls > 1:
            from openai.types import CompletionUsage

            u = report.usage
            response.usage = CompletionUsage(
                prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, total_tokens=u.total_tokens
            )
        response.toolsearch = report  # type: ignore[attr-defined]
        session._finish(report)
        return response


class _Chat:
    def __init__(self, wrapper: _Wrapper):
        self._wrapper = wrapper

    @property
    def completions(self) -> _Completions | _AsyncCompletions:
        if isinstance(self._wrapper, AsyncToolSearchOpenAI):
            return _AsyncCompletions(self._wrapper)
        return _Completions(self._wrapper)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapper._client.chat, name)


class _Completions:
    def __init__(self, wrapper: _Wrapper):
        self._w = wrapper

    def __getattr__(self, name: str) -> Any:
        return getattr(self._w._client.chat.completions, name)

    def create(self, **kwargs: Any) -> ChatCompletion:
        w = self._w
        session, flow, caller_tools = w._start(kwargs)
        create = w._client.chat.completions.create
        action = next(flow)
        response = None
        try:
            while True:
                if isinstance(action, RunTools):
                    action = flow.send(run_calls(w.executor, session, action.calls))
                else:
                    response = create(**w._request(kwargs, caller_tools, action))
                    action = flow.send(_reply(response))
        except StopIteration as stop:
            return w._finish(response, stop.value, session)


class _AsyncCompletions(_Completions):
    async def create(self, **kwargs: Any) -> ChatCompletion:  # type: ignore[override]
        w = self._w
        session, flow, caller_tools = w._start(kwargs)
        create = w._client.chat.completions.create
        action = next(flow)
        response = None
        try:
            while True:
                if isinstance(action, RunTools):
                    action = flow.send(await run_calls_async(w.executor, session, action.calls))
                else:
                    response = await create(**w._request(kwargs, caller_tools, action))
                    action = flow.send(_reply(response))
        except StopIteration as stop:
            return w._finish(response, stop.value, session)


class ToolSearchOpenAI(_Wrapper):
    """A wrapped `openai.OpenAI`: `chat.completions.create` with tool search; all else forwarded."""


class AsyncToolSearchOpenAI(_Wrapper):
    """A wrapped `openai.AsyncOpenAI`: `await chat.completions.create(...)` with tool search."""


@overload
def wrap(client: AsyncOpenAI, searcher: Retriever, *, executor: Any = None, **options: Any) -> AsyncToolSearchOpenAI: ...
@overload
def wrap(client: OpenAI, searcher: Retriever, *, executor: Any = None, **options: Any) -> ToolSearchOpenAI: ...
def wrap(client: Any, searcher: Retriever, *, executor: Any = None, **options: Any) -> Any:
    """Wrap an `OpenAI` or `AsyncOpenAI` client so the model finds tools with `tool_search`.

    `searcher` is any `Retriever` (e.g. `Searcher.from_path("skills/")`); `options` are the fields of
    `InterceptorOptions`. With `execute=True` and an `executor`, catalog tool calls are run and fed back
    (the agent loop). Every option is checked here, so a mistake fails now with a clear message.
    """
    opts = InterceptorOptions.from_kwargs(options)
    is_async = check_setup(client, searcher, opts, executor)
    return (AsyncToolSearchOpenAI if is_async else ToolSearchOpenAI)(client, searcher, opts, executor)


# -- openai message shapes ---------------------------------------------------------------------
def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)


def _tool_name(tool: Any) -> str:
    kind = _get(tool, "type", "function")
    return str(_get(_get(tool, kind, {}) or {}, "name", "") or "")


def _last_user_text(messages: Any) -> str | None:
    if not messages or _get(messages[-1], "role") != "user":
        return None
    content = _get(messages[-1], "content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return " ".join(str(_get(p, "text", "")) for p in content if _get(p, "type") == "text") or None
    return None


def _reply(response: Any) -> ModelReply:
    message = response.choices[0].message
    calls = []
    for c in message.tool_calls or ():
        fn = getattr(c, "function", None) or getattr(c, "custom", None)
        args = getattr(fn, "arguments", None) or getattr(fn, "input", None) or ""
        calls.append(ToolCall(c.id, fn.name, args))
    u = response.usage
    usage = Usage(u.prompt_tokens, u.completion_tokens, u.total_tokens) if u else Usage()
    return ModelReply(text=message.content, calls=tuple(calls), usage=usage)


def _assistant_message(reply: ModelReply) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": reply.text,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ],
    }

