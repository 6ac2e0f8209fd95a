"""OpenAI Responses API: `client.py` (`wrapped.responses` entry points, `search_mode` per call),
`adapter.py` (`ResponsesAdapter`: native `tool_search` items or the function tool), `shapes.py` (pure item
and usage shapes), `stream.py` (round accumulator, streams), `chain.py` (per-session memory of
`previous_response_id` chains)."""
