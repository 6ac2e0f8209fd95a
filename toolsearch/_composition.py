"""Choices of the composition root for the lower layers: parts a layer uses but must not import.

The index builds the reranker that `SearchConfig(rerank="hybrid", ...)` describes without importing
the embedding rerank above it (index/reranker.py): it imports the factory named here, by name, the
first time such settings are used. Kept out of `toolsearch/__init__.py` so that reading it costs the
index nothing, and out of the index so that the index names nothing above it.
"""

RERANK_FACTORY = "toolsearch.rerank:FACTORY"  # "package.module:attribute"
