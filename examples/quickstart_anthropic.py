"""Quick start: Anthropic Messages API (pip install "toolsearch[anthropic]"). Needs ANTHROPIC_API_KEY."""
from anthropic import Anthropic

import toolsearch

searcher = toolsearch.Searcher.from_path(toolsearch.bundled_skills_path())
client = toolsearch.wrap(Anthropic(), searcher)  # was: client = Anthropic()

messages = [{"role": "user", "content": "What is 9am Berlin time in New York?"}]
response = client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, messages=messages)
print([block for block in response.content if block.type == "tool_use"])  # convert_timezone
# Keep the hidden search rounds in your history, then the reply:
messages += [*response.toolsearch.messages, {"role": "assistant", "content": response.content}]
