"""`wrap(client, searcher, **options)`: the provider registry (`providers/base.py` `PROVIDERS`) picks the
wrapper by the client's type.

- `openai.OpenAI` / `AsyncOpenAI` -> `ToolSearchOpenAI` / `AsyncToolSearchOpenAI`
  (`providers/openai_chat/client.py`): `chat.completions` and `responses` (`providers/openai_responses/`)
  are intercepted; namespaces that never send tools (`models`, `files`, `embeddings`, ...) are forwarded.
  `with_options(...)` and `copy()` return a wrapped client over the same searcher, options and session.
- `anthropic.Anthropic` / `AsyncAnthropic` -> `ToolSearchAnthropic` / `AsyncToolSearchAnthropic`
  (`providers/anthropic/client.py`), imported only when the client is one (anthropic is optional).

Composition, never patching (instructor's `from_openai`): the wrapper holds the caller's client.

Sessions: the wrapper's default session (`wrapped.default_session`) is ONE conversation. Use
`wrapped.session()` per conversation and `wrapped.with_session(s)` to talk within it; `create()` keeps
the SDK's signature (no extra keyword).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from ..catalog.hits import Retriever
from .options import InterceptorOptions
from .providers.base import provider_for
from .providers.openai_chat.client import AsyncToolSearchOpenAI, ToolSearchOpenAI
from .setup import check_setup

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

__all__ = ["AsyncToolSearchOpenAI", "ToolSearchOpenAI", "wrap"]


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
    provider, is_async = provider_for(client)
    check_setup(searcher, opts, executor)
    wrapper = provider.wrapper_class(is_async)
    if is_async:
        from ..tokens import encoding

        encoding()
    return wrapper(client, searcher, opts, executor)
