"""The interceptor: `wrap(client, searcher)` gives the model a `tool_search` meta-tool and loads the
matched tools' schemas into the next request, bounded by a per-session LRU loadout.

Modules: `options` (validated knobs), `meta_tool` (schema and short answers), `loadout` (LRU with count
and token budgets), `session` (one per conversation), `core` (the provider-free turn logic, a generator),
`driver` (the sync/async loops), `streaming` (the streaming loops), `wrap` (the provider registry's
dispatch), `providers/` (one folder per API: `openai_chat`, `openai_responses`, `anthropic`), `raw` (the
raw-response views of every provider), `setup` (wiring checks, executor glue), `report`.
"""

from .core import turn_flow
from .loadout import LoadChange, Loadout
from .meta_tool import NO_MATCH
from .wrap import AsyncToolSearchOpenAI, ToolSearchOpenAI, wrap
from .options import InterceptorOptions
from .report import CallRecord, Report, RoundRecord, SearchRecord, Usage
from .session import Session

__all__ = [
    "AsyncToolSearchOpenAI",
    "CallRecord",
    "InterceptorOptions",
    "LoadChange",
    "Loadout",
    "NO_MATCH",
    "Report",
    "RoundRecord",
    "SearchRecord",
    "Session",
    "ToolSearchOpenAI",
    "Usage",
    "turn_flow",
    "wrap",
]
