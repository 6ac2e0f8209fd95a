"""Anthropic Messages API (the optional `anthropic` extra): `client.py` (the wrapped client, `messages`
entry points), `adapter.py` (`AnthropicAdapter`: native `tool_reference` / inline modes), `shapes.py`
(pure history, usage and tool_choice shapes), `stream.py` (round accumulator, event streams and the SDK's
`MessageStream` over them)."""
