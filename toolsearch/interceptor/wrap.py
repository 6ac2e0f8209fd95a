"""`wrap(client, searcher, **options)`: picks the provider adapter by the client's type.

- `openai.OpenAI` / `AsyncOpenAI` -> `ToolSearchOpenAI` / `AsyncToolSearchOpenAI`: `chat.completions` (this
  package's `providers.openai_chat`) and `responses` (`providers.openai_responses`, loaded lazily) are
  intercepted; namespaces that never send tools (`models`, `files`, `embeddings`, ...) are forwarded.
  `with_options(...)` and `copy()` return a wrapped client over the same searcher, options and session.
- `anthropic.Anthropic` / `AsyncAnthropic` -> `providers.anthropic.wrap_anthropic(...)`, imported only when
  the client is one (anthropic is optional).

Composition, never patching (instructor's `from_openai`): the wrapper holds the caller's client.

Sessions: the wrapper's default session (`wrapped.default_session`) is ONE conversation. Use
`wrapped.session()` per conversation and `wrapped.with_session(s)` to talk within it; `create()` keeps
openai's signature (no extra keyword).
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING, Any, overload

from .._errors import ConfigError
from ..catalog.hits import Retriever
from .options import InterceptorOptions
from .session import Session
from .setup import check_setup, make_reminder, run_calls, run_calls_async, session_context

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

__all__ = ["AsyncToolSearchOpenAI", "ToolSearchOpenAI", "wrap"]

# Namespaces of openai clients that send tools to a model but that toolsearch does not serve: refused.
_REFUSED = {
    "realtime": "the Realtime API is not served by toolsearch.wrap(); use chat.completions or responses",
}


class _Wrapper:
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
        """The wrapped openai client, untouched."""
        return self._client

    def with_options(self, **kwargs: Any):
        """openai's `with_options(...)`, still wrapped (same searcher, options and session)."""
        return type(self)(self._client.with_options(**kwargs), self.retriever, self.options, self.executor,
                          self.default_session)

    def copy(self, **kwargs: Any):
        """openai's `copy(...)`, still wrapped (same searcher, options and session)."""
        return type(self)(self._client.copy(**kwargs), self.retriever, self.options, self.executor,
                          self.default_session)

    @property
    def chat(self) -> Any:
        from .providers.openai_chat_api import Chat

        return Chat(self)

    @property
    def responses(self) -> Any:
        module = _provider("openai_responses_api", "responses is not served by this toolsearch build yet; use "
                           "chat.completions (it is never forwarded without tool search)")
        return module.responses_namespace(self)

    def __getattr__(self, name: str) -> Any:
        if name in _REFUSED:
            raise ConfigError(_REFUSED[name])
        return getattr(self._client, name)

    # -- what the adapters use -----------------------------------------------------------------
    def _reminder(self) -> Any:
        return make_reminder(self.executor, self.default_session) if self.options.execute else None

    def _run_tools(self, session: Session) -> Any:
        return lambda calls: run_calls(self.executor, session, calls)

    def _arun_tools(self, session: Session) -> Any:
        async def run(calls: Any) -> Any:
            return await run_calls_async(self.executor, session, calls)

        return run

    async def _ready(self) -> None:
        """Nothing slow may run on the event loop: the token encoding is loaded in a thread if wrap()
        did not load it already."""
        from ..tokens import encoding

        if not encoding.cache_info().currsize:
            await asyncio.to_thread(encoding)


class ToolSearchOpenAI(_Wrapper):
    """A wrapped `openai.OpenAI`: chat completions (and responses) with tool search; all else forwarded."""


class AsyncToolSearchOpenAI(_Wrapper):
    """A wrapped `openai.AsyncOpenAI`: the same, awaited."""

    is_async = True


@overload
def wrap(client: AsyncOpenAI, searcher: Retriever, *, executor: Any = None, **options: Any) -> AsyncToolSearchOpenAI: ...
@overload
def wrap(client: OpenAI, searcher: Retriever, *, executor: Any = None, **options: Any) -> ToolSearchOpenAI: ...
def wrap(client: Any, searcher: Retriever, *, executor: Any = None, **options: Any) -> Any:
    """Wrap an OpenAI (or Anthropic) client so the model finds tools with `tool_search`.

    `searcher` is any `Retriever` (e.g. `Searcher.from_path("skills/")`); `options` are the fields of
    `InterceptorOptions`. With `execute=True` and an `executor`, catalog tool calls are run and fed back
    (the agent loop). Every option is checked here, so a mistake fails now with a clear message. For async
    clients the token encoding is loaded here, so the first `await create()` never blocks the loop.
    """
    opts = InterceptorOptions.from_kwargs(options)
    if _is_anthropic(client):
        module = _provider("anthropic", "this toolsearch build cannot wrap anthropic clients yet "
                           "(toolsearch.interceptor.providers.anthropic is missing); wrap an openai.OpenAI client")
        return module.wrap_anthropic(client, searcher, opts, executor)
    is_async = check_setup(client, searcher, opts, executor)
    if is_async:
        from ..tokens import encoding

        encoding()
    return (AsyncToolSearchOpenAI if is_async else ToolSearchOpenAI)(client, searcher, opts, executor)


def _provider(name: str, missing: str) -> Any:
    """The adapter module `providers.<name>`, imported lazily; ConfigError(`missing`) if it is absent
    (an ImportError from inside the module itself is not hidden)."""
    full = f"toolsearch.interceptor.providers.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        raise ConfigError(missing) from None


def _is_anthropic(client: Any) -> bool:
    """Whether `client` is an anthropic client, without importing anthropic for openai users."""
    return any(c.__module__.split(".")[0] == "anthropic" and c.__name__ in ("Anthropic", "AsyncAnthropic")
               for c in type(client).__mro__)
