"""One folder per model API, each mapping its API onto the core values (`core.py`) and loops (`driver.py`,
`streaming.py`): `openai_chat/` (Chat Completions), `openai_responses/` (Responses), `anthropic/` (Messages).

Every folder has the same files: `client.py` (the wrapper and its sync/async entry points, on
`base.Endpoint`), `adapter.py` (the `Adapter` protocol), `shapes.py` (pure wire shapes), `stream.py` (the
`RoundAccumulator` protocol and the caller's stream); `openai_responses/` adds `chain.py`. `base.py` holds
the wrapper base with its public hooks, the endpoint base, the protocols and the registry `wrap()` consults
(`PROVIDERS`); `interceptor/raw.py` the raw views of every provider. Adapters import their SDK lazily,
so a missing optional SDK costs nothing.

`return_direct` (the agent loop ended on tools whose results are the answer, `Outcome.direct`): no model
call follows; each adapter's `finish` rewrites the last response so the results are the assistant's
answer, and each accumulator's `direct(outcome)` streams that answer, in the API's own shape.

Adding a provider (Gemini, Bedrock, ...): copy a folder and rewrite its shapes and adapter for the API,
add one row to `base.PROVIDERS` (the SDK's client classes, the wrapper classes), write its fake server
in `toolsearch/testing/`. docs/providers/adding-a-provider.md has the recipe step by step.
"""
