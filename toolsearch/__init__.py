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
from .catalog import expanders as _expanders

# The composition root: skill files' `mcp:` blocks are expanded by the MCP layer, which the catalog
# (the lowest layer) never imports. Registered by name, so the import happens only for such a file.
_expanders.register_lazy("mcp", "toolsearch.mcp.skills:MCP_EXPANDER")
# Likewise `SearchConfig(rerank="hybrid", ...)`: the index never imports the embedding rerank; the
# factory above both (toolsearch/rerank.py) builds it, named in _composition.py, which the index reads.

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
        "Profile",
        "Registry",
        "RerankConfig",
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
        "build_reranker",
        "bundled_skills_path",
        "count_tokens",
        "export_tool",
        "load_profile",
        "load_profiles",
        "load_skill_file",
        "load_skills",
        "result_to_text",
        "skill_from_functions",
        "tool",
        "wrap",
    ]
)


# Everything else is imported on first use (PEP 562), so that `import toolsearch` - and with it every
# `toolsearch` command, `toolsearch search` above all - pays only for what it touches: the interceptor,
# the runtime and pydantic's models cost more to import than a whole search takes (issue 15).
_LAZY: dict[str, str] = {
    **dict.fromkeys(("ToolFunction", "result_to_text", "skill_from_functions", "tool"), "catalog.decorator"),
    "export_tool": "catalog.export",
    "bundled_skills_path": "catalog.bundled",  # the 12 bundled skills, for a quick start after pip install
    **dict.fromkeys(("Hit", "Retriever"), "catalog.hits"),
    **dict.fromkeys(("LoadResult", "load_skill_file", "load_skills"), "catalog.loader"),
    **dict.fromkeys(("RetryPolicy", "Skill", "Tool"), "catalog.model"),
    **dict.fromkeys(("META_TOOL_NAME", "Catalog", "Registry"), "catalog.registry"),
    **dict.fromkeys(("InterceptorOptions", "Report", "Session", "wrap"), "interceptor"),
    **dict.fromkeys(("Profile", "load_profile", "load_profiles"), "profiles"),
    "ToolContext": "runtime.context",
    "Executor": "runtime.executor",
    **dict.fromkeys(("ReloadReport", "SkillReloader"), "runtime.reload"),
    **dict.fromkeys(("RetryableError", "ToolResult"), "runtime.result"),
    "count_tokens": "tokens",
    # Searcher/SearchConfig load numpy and the index; the embed extra is numpy-only until a model is used.
    **dict.fromkeys(("Searcher", "SearchConfig"), "index"),
    **dict.fromkeys(("EmbeddingReranker", "Embedder", "FusionConfig", "OpenAIEmbedder", "RerankConfig",
                     "SentenceTransformerEmbedder"), "embed"),
    "build_reranker": "rerank",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolsearch' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
