"""Cold start: an OpenAI-compatible model writes a few example requests for each tool that has none.

Before anyone has used a deployment there is nothing to learn from; a tool's own text is often terse
("Query the ORDERS table") while people ask in their words ("where is my package"). Document expansion
(Re-Invoke) asks a model for the requests a tool answers and indexes them with the tool. `enrich`
does that for the tools with no hand-written `examples` and no generated ones yet, and appends the
answers to the index folder's generated examples (usage/generated.py), which rank like hand-written
examples.

- Idempotent: a tool that has examples (written or generated) is never asked about again.
- Resumable: each answered batch is appended at once, so an interrupted run keeps what it got and
  the next run asks only for the tools still missing.
- The model is untrusted: its answer is read as one JSON object (a code fence or words around it are
  tolerated, at most `MAX_ANSWER_CHARS` read), only the tools it was asked about are kept, each
  example is bounded (generated.clean_examples) and at most `per_tool` kept. A batch answered badly
  is counted, not retried: the next run asks again.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog.model import Tool
from .generated import append_generated, clean_examples

__all__ = ["EnrichReport", "ask_batch", "enrich", "missing_tools", "parse_answer", "prompt"]

MAX_ANSWER_CHARS = 200_000  # a batch's answer: a few dozen short requests; more is not an answer
_DESCRIPTION_CHARS = 600
_PARAM_CHARS = 120

SYSTEM = ("You write realistic example requests for the tools of an assistant, used to find the right "
          "tool for what a user asks. Answer with JSON only.")


@dataclass
class EnrichReport:
    asked: int = 0  # tools asked about
    answered: int = 0  # tools that got at least one example
    examples: int = 0
    unanswered: list[str] = field(default_factory=list)  # asked, no usable example: asked again next run

    def __str__(self) -> str:
        text = f"{self.examples} example(s) for {self.answered} of {self.asked} tool(s)"
        if self.unanswered:
            text += (f"; {len(self.unanswered)} tool(s) got no usable answer (run again to retry): "
                     + ", ".join(self.unanswered[:5]) + (", ..." if len(self.unanswered) > 5 else ""))
        return text


def missing_tools(tools: Iterable[Tool], generated: dict[str, tuple[str, ...]]) -> list[Tool]:
    """The tools with no hand-written examples and no generated entry (an empty list counts: a
    person emptied it to have the tool left alone)."""
    return [t for t in tools if not t.examples and t.name not in generated]


def _brief(tool: Tool) -> dict[str, Any]:
    properties = tool.input_schema.get("properties")
    arguments = {name: str(spec.get("description", ""))[:_PARAM_CHARS] if isinstance(spec, dict) else ""
                 for name, spec in (properties.items() if isinstance(properties, dict) else ())}
    return {"name": tool.name, "description": " ".join(tool.description.split())[:_DESCRIPTION_CHARS],
            "arguments": arguments}


def prompt(tools: Sequence[Tool], per_tool: int) -> list[dict[str, str]]:
    """The chat messages asking for `per_tool` requests for each of `tools`."""
    listing = json.dumps([_brief(t) for t in tools], ensure_ascii=False, indent=1)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": (
                f"For each tool below, write {per_tool} different requests a user might type when they "
                "need it: everyday wording, 4 to 15 words each, varied (different goals, concrete "
                "values), as a person would ask, without the tool's name. Answer with only a JSON object "
                'mapping each tool name to its list of requests, e.g. {"get_weather": ["will it rain '
                'in Oslo tomorrow", ...]}.\n\nTools:\n' + listing)}]


def parse_answer(text: Any, names: Iterable[str], per_tool: int) -> dict[str, tuple[str, ...]]:
    """The examples of an answer, for the tools asked about only; {} for an answer that is not one."""
    if not isinstance(text, str):
        return {}
    text = text[:MAX_ANSWER_CHARS]
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return {}
    try:
        data = json.loads(text[start:end + 1])
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out = {}
    for name in names:
        examples = clean_examples(data.get(name))[:per_tool]
        if examples:
            out[name] = examples
    return out


def ask_batch(client: Any, model: str, tools: Sequence[Tool], per_tool: int) -> dict[str, tuple[str, ...]]:
    """One request for a batch of tools; the model API's errors propagate (the caller stops)."""
    response = client.chat.completions.create(model=model, messages=prompt(tools, per_tool))
    choices = getattr(response, "choices", None) or []
    content = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
    return parse_answer(content, [t.name for t in tools], per_tool)


def enrich(client: Any, model: str, tools: Sequence[Tool], path: str | Path, *, per_tool: int = 5,
           batch: int = 8, jobs: int = 4, progress: Callable[[int], None] | None = None) -> EnrichReport:
    """Ask about `tools` in batches of `batch`, `jobs` requests at a time, appending each answer to
    the generated examples at `path` as it arrives (one writer: this thread). `progress(n)`: n more
    tools done. An error of the model API stops the run (what was answered stays saved) and
    propagates; so does Ctrl-C, without waiting for the requests in flight (daemon workers)."""
    report = EnrichReport(asked=len(tools))
    batches: queue.SimpleQueue[list[Tool]] = queue.SimpleQueue()
    count = 0
    for i in range(0, len(tools), batch):
        batches.put(list(tools[i:i + batch]))
        count += 1
    answers_of: queue.SimpleQueue[tuple[list[Tool], Any, BaseException | None]] = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                part = batches.get_nowait()
            except queue.Empty:
                return
            try:
                answers_of.put((part, ask_batch(client, model, part, per_tool), None))
            except BaseException as exc:  # handed to the caller's thread, which raises it
                answers_of.put((part, None, exc))

    for n in range(min(max(1, jobs), count)):
        threading.Thread(target=work, name=f"toolsearch-enrich-{n}", daemon=True).start()
    try:
        for _ in range(count):
            part, answers, error = answers_of.get()
            if error is not None:
                raise error
            append_generated(path, answers, model=model)
            report.answered += len(answers)
            report.examples += sum(len(v) for v in answers.values())
            report.unanswered.extend(t.name for t in part if t.name not in answers)
            if progress is not None:
                progress(len(part))
    finally:
        stop.set()  # workers take no new batch
    return report
