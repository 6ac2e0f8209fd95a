"""One adapter per model API, each mapping its API onto the core values (`core.py`) and loops
(`driver.py`, `streaming.py`): `openai_chat` (Chat Completions), `openai_responses` (Responses),
`anthropic` (Messages). Adapters import their SDK lazily, so a missing optional SDK costs nothing."""
