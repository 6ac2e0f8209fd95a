"""Quick start: OpenAI Responses API. Needs OPENAI_API_KEY (OPENAI_BASE_URL for a compatible server)."""
from openai import OpenAI

import toolsearch

searcher = toolsearch.Searcher.from_path(toolsearch.bundled_skills_path())
client = toolsearch.wrap(OpenAI(), searcher)  # native client tool_search on gpt-5.4 and later

history = [{"role": "user", "content": "What is 9am Berlin time in New York?"}]
response = client.responses.create(model="gpt-5.4", input=history)
print([item for item in response.output if item.type == "function_call"])  # convert_timezone
# Keep the hidden search rounds in your history, then the reply:
history += [*response.toolsearch.messages, *response.output]
