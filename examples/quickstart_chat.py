"""Quick start: OpenAI Chat Completions. Needs OPENAI_API_KEY (OPENAI_BASE_URL for a compatible server)."""
from openai import OpenAI

import toolsearch

# The 62 bundled tools; or your own skills folder, skill file or tools.jsonl.
searcher = toolsearch.Searcher.from_path(toolsearch.bundled_skills_path())
client = toolsearch.wrap(OpenAI(), searcher)  # was: client = OpenAI()

response = client.chat.completions.create(
    model="gpt-4o-mini",
    messages=[{"role": "user", "content": "What is 9am Berlin time in New York?"}],
)
# The model searched, toolsearch loaded convert_timezone, the model called it: the call is yours to run.
print(response.choices[0].message.tool_calls)
print("loaded:", response.toolsearch.loaded)
