"""What every provider shares: the wrapper base with its public hooks, the endpoint base (one intercepted
namespace such as `chat.completions` or `messages`, httpx-style: the logic once, only the I/O twice), the
protocols a provider implements, and the registry `wrap()` consults.

A provider folder (`openai_chat/`, `openai_responses/`, `anthropic/`) uses only what is public here:
- `Wrapper`: `client`, `options`, `retriever`, `executor`, `default_session`, `is_async`, and the hooks
  `reminder()` (the agent loop's todo nag, or None), `run_tools(session)` (the executor as the driver
  wants it: a plain function on sync clients, a coroutine function on async ones) and `ready()` (async:
  nothing slow runs on the event loop).
- `Endpoint` / `AsyncEndpoint`: a provider writes `sdk`, `begin(kwargs) -> Turn` and
  `open_stream(kwargs)`; `create`, `run`, `stream_events`, `with_raw_response` and
  `with_streaming_response` come from here.
- `TurnStream` / `AsyncTurnStream` (see `streaming.py`, re-exported): what `create(stream=True)` returns;
  a provider writes `events(kwargs)` once (a `TurnStreamBase` subclass) and mixes it into both.
- `Adapter` (see `driver.py`) and `RoundAccumulator` (see `streaming.py`), complete: re-exported here
  so a new provider finds every member it must write in one place.
- `PROVIDERS`: one `Provider` row per client family; `provider_for(client)` picks the row.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from ..._errors import ConfigError
from ...catalog.hits import Retriever
from ..driver import Adapter, adrive, drive
from ..options import InterceptorOptions
from ..raw import RawView
from ..report import Report
from ..session import Session
from ..setup import make_reminder, run_calls, run_calls_async, session_context
from ..streaming import (
    AsyncTurnStream,
    RoundAccumulator,
    StreamResponse,
    TurnStream,
    TurnStreamBase,
    astream_rounds,
    stream_rounds,
)

__all__ = ["PROVIDERS", "Adapter", "AsyncEndpoint", "AsyncTurnStream", "Endpoint", "Provider", "RoundAccumulator",
           "StreamResponse", "Turn", "TurnStream", "TurnStreamBase", "Wrapper", "provider_for"]


class Wrapper:
    """The wrapped client: holds the caller's client (composition, never patching), the searcher, the
    options and the default session; forwards every attribute it does not serve."""

    is_async = False

    def __init__(self, client: Any, retriever: Retriever, options: InterceptorOptions,
                 executor: Any, session: Session | None = None):
        self._client = client
        self.retriever = retriever
        self.options = options
        self.executor = executor
        self.default_session = session or Session(options, id="default")

    # -- sessions ------------------------------------------------------------------------------
    def session(self, *, id: str | None = None, context: Any = None) -> Session:
        """A new, independent session (one per conversation). In the agent loop it gets its own
        `ToolContext` (own state such as the todo plan; the executor's workspace) unless one is given."""
        session = Session(self.options, id=id, context=context)
        if context is None and self.executor is not None:
            session.context = session_context(self.executor, session.id)
        return session

    def session_from_dict(self, data: Any) -> Session:
        """`Session.from_dict(data)` with this wrapper's options (and a fresh agent-loop context)."""
        session = Session.from_dict(data, self.options)
        if self.executor is not None:
            session.context = session_context(self.executor, session.id)
        return session

    def with_session(self, session: Session):  # -> same wrapper type
        if not isinstance(session, Session):
            raise ConfigError(f"with_session() needs a toolsearch Session, got {type(session).__name__}")
        if session.options is not self.options:
            raise ConfigError(
                "this session was made by another wrapper (different options); make sessions with "
                "wrapped.session() or wrapped.session_from_dict(data)"
            )
        return type(self)(self._client, self.retriever, self.options, self.executor, session)

    # -- client views --------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The wrapped SDK client, untouched."""
        return self._client

    def with_options(self, **kwargs: Any):
        """The SDK's `with_options(...)`, still wrapped (same searcher, options and session)."""
        return type(self)(self._client.with_options(**kwargs), self.retriever, self.options, self.executor,
                          self.default_session)

    def copy(self, **kwargs: Any):
        """The SDK's `copy(...)`, still wrapped (same searcher, options and session)."""
        return type(self)(self._client.copy(**kwargs), self.retriever, self.options, self.executor,
                          self.default_session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    # -- the hooks a provider uses ---------------------------------------------------------------
    def reminder(self) -> Any:
        """The agent loop's todo reminder (a callable for `TurnInput.reminder`), None outside it."""
        return make_reminder(self.executor, self.default_session) if self.options.execute else None

    def run_tools(self, session: Session) -> Callable[[Any], Any]:
        """The executor for one turn of `session`: a function of the calls (awaitable on async clients)."""
        if self.is_async:
            async def arun(calls: Any) -> Any:
                return await run_calls_async(self.executor, session, calls)

            return arun
        return lambda calls: run_calls(self.executor, session, calls)

    async def ready(self) -> None:
        """Nothing slow may run on the event loop: the token encoding is loaded in a thread if wrap()
        did not load it already."""
        from ...tokens import encoding

        if not encoding.cache_info().currsize:
            await asyncio.to_thread(encoding)

    _ready = ready  # the name before the hook was public


@dataclass
class Turn:
    """One call's turn, ready to drive: the adapter, the kwargs it reads, the session and the flow."""

    adapter: Adapter
    kwargs: dict[str, Any]
    session: Session
    flow: Generator[Any, Any, Any]


class Endpoint:
    """One intercepted SDK namespace (sync). A provider subclass writes `sdk`, `begin` and `open_stream`;
    methods that send no tools (`retrieve`, `list`, ...) are forwarded to the SDK."""

    #: whether `with_raw_response.create(stream=True)` hands back the stream (else it is refused)
    raw_streams = False

    def __init__(self, wrapper: Any):
        self.wrapper = wrapper

    @property
    def sdk(self) -> Any:
        """The SDK namespace this endpoint stands in for (e.g. `client.chat.completions`)."""
        raise NotImplementedError

    @property
    def is_async(self) -> bool:
        return bool(self.wrapper.is_async)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sdk, name)

    def begin(self, kwargs: dict[str, Any]) -> Turn:
        """Check the caller's kwargs (mistakes raise here, before any request) and start the turn."""
        raise NotImplementedError

    def open_stream(self, kwargs: dict[str, Any]) -> Any:
        """What `create(stream=True)` returns (the async variant on async clients)."""
        raise NotImplementedError

    def raw_result(self, raw: Any, final: Any) -> Any:
        """What the raw views return: the last round's raw response, whose `parse()` now gives the
        finished result (the SDKs cache `parse()` by type)."""
        raw._parsed_by_type[raw._cast_to] = final
        return raw

    def create(self, **kwargs: Any) -> Any:
        if kwargs.get("stream") is True:
            return self.open_stream(kwargs)
        return self.run(kwargs, lambda request: self.sdk.create(**request))

    def run(self, kwargs: dict[str, Any], send: Callable[[dict[str, Any]], Any]) -> Any:
        """Drive one turn; `send(request)` makes one SDK call."""
        turn = self.begin(kwargs)
        return drive(turn.adapter, turn.flow, send, self.wrapper.run_tools(turn.session),
                     kwargs=turn.kwargs, session=turn.session)

    def stream_events(self, turn: Turn, open_round: Callable[[dict[str, Any]], Any],
                      new_accumulator: Callable[[], RoundAccumulator],
                      on_end: Callable[[Report], None] = lambda report: None) -> Any:
        """The caller's events of one streamed turn (`streaming.stream_rounds`, or `astream_rounds` on
        async clients, where `open_round` returns an awaitable)."""
        loop: Any = astream_rounds if self.is_async else stream_rounds
        return loop(turn.adapter, turn.flow, open_round, self.wrapper.run_tools(turn.session), new_accumulator,
                    kwargs=turn.kwargs, session=turn.session, on_end=on_end)

    @property
    def with_raw_response(self) -> RawView:
        return RawView(self, "with_raw_response")

    @property
    def with_streaming_response(self) -> RawView:
        return RawView(self, "with_streaming_response")


class AsyncEndpoint(Endpoint):
    """The async I/O of an `Endpoint`: put first among the bases (`class AsyncX(AsyncEndpoint, X)`)."""

    async def create(self, **kwargs: Any) -> Any:  # type: ignore[override]
        await self.wrapper.ready()
        if kwargs.get("stream") is True:
            return self.open_stream(kwargs)

        async def send(request: dict[str, Any]) -> Any:
            return await self.sdk.create(**request)

        return await self.arun(kwargs, send)

    async def arun(self, kwargs: dict[str, Any], send: Callable[[dict[str, Any]], Any]) -> Any:
        """`run` awaited: `send(request)` returns an awaitable."""
        await self.wrapper.ready()
        turn = self.begin(kwargs)
        return await adrive(turn.adapter, turn.flow, send, self.wrapper.run_tools(turn.session),
                            kwargs=turn.kwargs, session=turn.session)


# -- the registry ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Provider:
    """One family of SDK clients and the wrapper classes that serve it.

    `clients`: the SDK's (sync, async) client classes as "package.Class", recognised along the client's
    MRO by module and name, so the SDK is never imported to test a client of another one (subclasses
    such as `AzureOpenAI` match). `wrappers`: the (sync, async) wrapper classes as "module:Class",
    imported only when a client of this family is wrapped. `duck`: an attribute path that makes any
    other object a client of this family (async if it is a coroutine function), or None.
    """

    name: str
    clients: tuple[str, str]
    wrappers: tuple[str, str]
    duck: str | None = None

    def kind(self, client: Any) -> bool | None:
        """None if `client` is not of this family by class; else whether it is the async client."""
        for cls in type(client).__mro__:
            qualified = f"{cls.__module__.split('.')[0]}.{cls.__name__}"
            if qualified in self.clients:
                return qualified == self.clients[1]
        return None

    def duck_kind(self, client: Any) -> bool | None:
        """None unless `client` has the `duck` attribute path; else whether it is async."""
        if self.duck is None:
            return None
        target: Any = client
        for part in self.duck.split("."):
            target = getattr(target, part, None)
            if target is None:
                return None
        return None if target is client else inspect.iscoroutinefunction(target)

    def wrapper_class(self, is_async: bool) -> type:
        module, _, name = self.wrappers[is_async].partition(":")
        return getattr(importlib.import_module(module), name)


_HERE = __name__.rsplit(".", 1)[0]

PROVIDERS: tuple[Provider, ...] = (
    Provider("openai", ("openai.OpenAI", "openai.AsyncOpenAI"),
             (f"{_HERE}.openai_chat.client:ToolSearchOpenAI", f"{_HERE}.openai_chat.client:AsyncToolSearchOpenAI"),
             duck="chat.completions.create"),
    Provider("anthropic", ("anthropic.Anthropic", "anthropic.AsyncAnthropic"),
             (f"{_HERE}.anthropic.client:ToolSearchAnthropic", f"{_HERE}.anthropic.client:AsyncToolSearchAnthropic")),
)


def provider_for(client: Any) -> tuple[Provider, bool]:
    """The registry row serving `client` and whether the client is async; ConfigError if none does.
    A client's class decides first; an object of no known class is taken by the first row it quacks for."""
    for provider in PROVIDERS:
        is_async = provider.kind(client)
        if is_async is not None:
            return provider, is_async
    for provider in PROVIDERS:
        is_async = provider.duck_kind(client)
        if is_async is not None:
            return provider, is_async
    raise ConfigError(
        f"wrap() needs an openai.OpenAI or openai.AsyncOpenAI client (or an anthropic.Anthropic or "
        f"AsyncAnthropic), got {type(client).__name__}"
    )
