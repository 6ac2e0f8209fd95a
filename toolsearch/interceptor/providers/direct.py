"""`return_direct` answers in each API's own shape.

When the agent loop ends on a round whose calls all went to `return_direct` tools (`Outcome.direct`),
no model call follows: the caller gets the last model response rewritten so the tools' results are the
assistant's answer, as if the model had written them:

- Chat Completions: `message.content` is the text, no `tool_calls`, `finish_reason="stop"`; streamed,
  one content chunk and a "stop" chunk close the stream.
- Responses: `output` is one assistant `message` with the text; streamed, that item's events
  (`output_item.added` ... `output_item.done`) precede `response.completed`. With
  `previous_response_id` chaining, the answers owed to the round's calls are the real results, followed
  by the answer as an assistant message, so the server-side conversation reads as it happened.
- Anthropic Messages: `content` is one text block, `stop_reason="end_turn"`; streamed, one text block
  (start, delta, stop) before the closing `message_delta`.

The round's calls and results stay in `response.toolsearch.messages` (the transcript) and
`report.returned_direct` names the tools.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..values import Outcome

__all__ = ["anthropic_direct", "anthropic_direct_events", "chat_direct", "chat_direct_chunks",
           "responses_direct", "responses_direct_events", "responses_message"]


# --- Chat Completions --------------------------------------------------------------------------

def chat_direct(response: Any, text: str) -> None:
    choice = response.choices[0]
    choice.message.content = text
    choice.message.tool_calls = None
    choice.finish_reason = "stop"


def chat_direct_chunks(template: Any, text: str, *, role: bool) -> list[Any]:
    """A content chunk (with the role if none went out yet) and the closing "stop" chunk, modelled
    on `template` (a chunk of the round: id, model, created)."""
    from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta

    def chunk(delta: Any, finish: Any) -> Any:
        return template.model_copy(update={"choices": [Choice(index=0, delta=delta, finish_reason=finish)],
                                           "usage": None})

    return [chunk(ChoiceDelta(content=text, role="assistant" if role else None), None),
            chunk(ChoiceDelta(), "stop")]


# --- Responses ---------------------------------------------------------------------------------

def responses_message(text: str, *, done: bool = True, item_id: str | None = None) -> Any:
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    return ResponseOutputMessage(
        id=item_id or f"msg_ts_{uuid.uuid4().hex}", type="message", role="assistant",
        status="completed" if done else "in_progress",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])] if done else [])


def responses_direct(adapter: Any, response: Any, outcome: Outcome, message: Any = None) -> None:
    """The settled response's output becomes the answer message; owed chained answers get the real
    results (see the module docstring)."""
    text = outcome.direct or ""
    message = message if message is not None else responses_message(text)
    response.output = [message]
    owed = adapter.chain.owed.get(getattr(response, "id", None) or "")
    if owed is None or not outcome.hidden:
        return
    results = {call_id: answer.text for call_id, answer in outcome.hidden[-1].answers}
    fixed = [{**item, "output": results[item.get("call_id")]} if item.get("type") == "function_call_output"
             and item.get("call_id") in results else item for item in owed]
    fixed.append({"type": "message", "role": "assistant", "content": text})
    adapter.chain.owed[response.id] = fixed


def responses_direct_events(text: str, position: int) -> tuple[list[Any], Any]:
    """The events of one answer message at output index `position` (sequence numbers are set by
    the caller), and the finished item."""
    from openai.types.responses import (
        ResponseContentPartAddedEvent,
        ResponseContentPartDoneEvent,
        ResponseOutputItemAddedEvent,
        ResponseOutputItemDoneEvent,
        ResponseOutputText,
        ResponseTextDeltaEvent,
        ResponseTextDoneEvent,
    )

    item_id = f"msg_ts_{uuid.uuid4().hex}"
    done = responses_message(text, item_id=item_id)
    common = {"item_id": item_id, "output_index": position, "content_index": 0, "sequence_number": 0}
    empty, full = (ResponseOutputText(type="output_text", text=t, annotations=[]) for t in ("", text))
    events = [
        ResponseOutputItemAddedEvent(type="response.output_item.added", output_index=position, sequence_number=0,
                                     item=responses_message(text, done=False, item_id=item_id)),
        ResponseContentPartAddedEvent(type="response.content_part.added", part=empty, **common),
        ResponseTextDeltaEvent(type="response.output_text.delta", delta=text, logprobs=[], **common),
        ResponseTextDoneEvent(type="response.output_text.done", text=text, logprobs=[], **common),
        ResponseContentPartDoneEvent(type="response.content_part.done", part=full, **common),
        ResponseOutputItemDoneEvent(type="response.output_item.done", output_index=position, sequence_number=0,
                                    item=done),
    ]
    return events, done


# --- Anthropic Messages ------------------------------------------------------------------------

def anthropic_direct(message: Any, text: str) -> None:
    from anthropic.types import TextBlock

    message.content = [TextBlock(type="text", text=text)]
    message.stop_reason = "end_turn"


def anthropic_direct_events(text: str, index: int) -> list[Any]:
    """One text block at content index `index`: start, one delta, stop."""
    from anthropic.types import RawContentBlockDeltaEvent, RawContentBlockStartEvent, RawContentBlockStopEvent
    from anthropic.types import TextBlock, TextDelta

    return [
        RawContentBlockStartEvent(type="content_block_start", index=index,
                                  content_block=TextBlock(type="text", text="")),
        RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=TextDelta(type="text_delta", text=text)),
        RawContentBlockStopEvent(type="content_block_stop", index=index),
    ]
