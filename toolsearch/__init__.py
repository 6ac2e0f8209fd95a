"""toolsearch: an LLM agent works with thousands of tools while the model sees only the few it needs.

Layout (one concern per subpackage):
    catalog/      Skill and Tool models, loading skill files and @tool functions, Registry, export
    index/        the persisted Whoosh BM25F index and the Searcher over it
    embed/        optional embedding rerank (the `embed` extra)
    interceptor/  wrap(client): the tool_search meta-tool, sessions, LRU loadout
    runtime/      Executor (timeout, retry, validation), hot reload, the agent loop
    builtin/      handlers of the bundled skills in skills/
    testing/      a real OpenAI-compatible HTTP server driven by a fake model
    cli/          the `toolsearch` command
"""

from ._errors import (
    CatalogError,
    ConfigError,
    IndexError_,
    MissingDependencyError,
    ModelBehaviorError,
    Problem,
    SkillError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolSearchError,
    ToolTimeoutError,
)
from ._version import __version__
from .catalog.decorator import ToolFunction, result_to_text, skill_from_functions, tool
from .catalog.export import export_tool
from .catalog.hits import Hit, Retriever
from .catalog.loader import LoadResult, load_skill_file, load_skills
from .catalog.model import RetryPolicy, Skill, Tool
from .catalog.registry import META_TOOL_NAME, Catalog, Registry
from .interceptor import InterceptorOptions, Report, Session, wrap
from .runtime.context import ToolContext
from .runtime.executor import Executor
from .runtime.reload import ReloadReport, SkillReloader
from .runtime.result import RetryableError, ToolResult
from .tokens import count_tokens

__all__ = sorted(
    [
        "META_TOOL_NAME",
        "Catalog",
        "CatalogError",
        "ConfigError",
        "EmbeddingReranker",
        "Embedder",
        "Executor",
        "FusionConfig",
        "Hit",
        "InterceptorOptions",
        "LoadResult",
        "IndexError_",
        "MissingDependencyError",
        "ModelBehaviorError",
        "OpenAIEmbedder",
        "Problem",
        "Registry",
        "ReloadReport",
        "Report",
        "Retriever",
        "RetryableError",
        "SearchConfig",
        "SentenceTransformerEmbedder",
        "Searcher",
        "RetryPolicy",
        "Session",
        "Skill",
        "SkillError",
        "SkillReloader",
        "Tool",
        "ToolContext",
        "ToolExecutionError",
        "ToolFunction",
        "ToolNotFoundError",
        "ToolResult",
        "ToolSearchError",
        "ToolTimeoutError",
        "__version__",
        "count_tokens",
        "export_tool",
        "load_skill_file",
        "load_skills",
        "result_to_text",
        "skill_from_functions",
        "tool",
        "wrap",
    ]
)


_EMBED_NAMES = ("EmbeddingReranker", "Embedder", "FusionConfig", "OpenAIEmbedder", "SentenceTransformerEmbedder")


def __getattr__(name: str) -> object:
    # Searcher/SearchConfig load numpy and the index on first use, keeping `import toolsearch` light.
    if name in ("Searcher", "SearchConfig"):
        from . import index

        return getattr(index, name)
    if name in _EMBED_NAMES:  # the embed extra: numpy-only until a model is first used
        from . import embed

        return getattr(embed, name)
    raise AttributeError(f"module 'toolsearch' has no attribute {name!r}")
