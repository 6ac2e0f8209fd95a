"""Skills and tools: their models, loading, the registry, and schema export."""
