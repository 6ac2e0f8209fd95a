"""Token savings (the headline): what the model is sent per request, per strategy and catalog size,
through the real `openai` client (Chat Completions and Responses) and the real `anthropic` client
against the local fake-model servers.

    python -m benchmarks tokens [--quick] [--out DIR]

`suite.py` plays Chat Completions; `responses_api.py` and `anthropic_api.py` the same tasks through the
other two APIs with their prompt-cache rules simulated.
"""
