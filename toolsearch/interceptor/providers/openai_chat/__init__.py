"""OpenAI Chat Completions: `client.py` (the OpenAI client wrapper, `chat.completions` entry points),
`adapter.py` (`ChatAdapter`), `shapes.py` (pure wire shapes), `stream.py` (chunk accumulator, streams)."""
