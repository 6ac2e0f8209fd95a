"""The OpenAI Responses adapter: `wrapped.responses.*` with tool search, native or as a function tool.

`ResponsesAdapter` maps one `responses.create` onto the core values (see `driver.Adapter`); one adapter
is made per call because it accumulates the items it appended to the caller's input (they only grow,
so every round's request extends the previous one and the prompt cache holds).

Modes (`search_mode`, per wrapper or per call as `create(..., search_mode=...)`, never sent):
- "native": the request carries OpenAI's `tool_search` tool with `execution: "client"`; catalog tools are
  not in `tools`. Each `tool_search_call` is answered with a `tool_search_output` (same `call_id`) holding
  the found tools (`namespaces=True`: grouped by skill). Loaded tools live in the conversation's items:
  with `previous_response_id` chaining the server keeps them; with full input replay the caller appends
  `response.toolsearch.messages` (the hidden rounds' items: reasoning, `tool_search_call`,
  `tool_search_output`, executed calls and results) and then `response.output`, exactly what the
  server saw. Tools the session loaded that the conversation does not show (prefetch, a forced
  `tool_choice`, a history restored into a fresh session, or a replay that kept only `response.output`)
  travel in an `additional_tools` item at the end of the input.
  Eviction cannot remove what the server stored, so in native mode it only happens when the budget
  is exceeded at a user-turn boundary, in one batch, by rewriting the replayed input: the report's
  `cache_break` names the tools it removed (the prompt cache is lost from the first rewritten item).
- "function": a `tool_search` function tool and loaded tools in `tools`, as in Chat Completions; works
  with every model and endpoint (Ollama, vLLM, Azure deployments, older models).
- "auto" (default): native for model names documented to support it (`supports_native_search`:
  gpt-5.4 and later, not gpt-5.4-nano), function otherwise.

Calls a `create` leaves unanswered (searches next to real calls, the "return" round-limit strategy,
the wrap-up round) are answered in the returned output (replay) and, for chaining, prepended to the
next `create` that names this response as `previous_response_id`: the API rejects unanswered calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...._errors import ConfigError
from ...core import AskModel, Forced, ModelReply, Outcome, SearchAnswer, ToolOutput, TurnInput, model_error
from . import shapes
from .chain import chain_of
from .shapes import get, item_dict

__all__ = ["ResponsesAdapter"]

class ResponsesAdapter:
    def __init__(self, wrapper: Any, session: Any, mode: str):
        self.w, self.session, self.mode = wrapper, session, mode
        self.o = wrapper.options
        self.meta_name = self.o.meta_tool_name
        self.catalog = wrapper.retriever.catalog
        self.skills = {s.name: s.description for s in getattr(self.catalog, "skills", ())}
        self.chain = chain_of(session)
        self.base: list[dict[str, Any]] = []  # the caller's input, as wire dicts (owed answers first)
        self.extra: list[dict[str, Any]] = []  # what we appended: only grows within one create
        self.shown: set[str] = set()  # tools the conversation shows (natively loaded)
        self.rendered = 0  # exchanges of the transcript already in `extra`
        self.cache_break: tuple[str, ...] = ()
        self.caller_tools: frozenset[str] = frozenset()
        self.previous: str | None = None
        self.stateless = False  # store=False: nothing is kept server-side
        self._pinned: frozenset[str] = frozenset()

    @property
    def native(self) -> bool:
        return self.mode == "native"

    # -- driver.Adapter ------------------------------------------------------------------------
    def turn_input(self, kwargs: dict[str, Any]) -> TurnInput:
        raw = kwargs.get("input")
        if raw is None:
            raise ConfigError("responses.create() needs input=... (a string or a list of input items)")
        items = [{"role": "user", "content": raw}] if isinstance(raw, str) else [item_dict(i) for i in raw]
        tools = list(kwargs.get("tools") or [])
        names: set[str] = set()
        for t in tools:
            kind = get(t, "type")
            if kind == "tool_search":
                raise ConfigError("your tools include a 'tool_search' tool; toolsearch supplies tool search "
                                  "itself: remove it (or call the unwrapped client)")
            if kind == "function":
                names.add(get(t, "name"))
            elif kind == "namespace":
                names.update(get(fn, "name") for fn in get(t, "tools") or ())
        if self.meta_name in names:
            raise ConfigError(f"your tools include {self.meta_name!r}, the name reserved for the search "
                              "meta-tool; rename your tool or pass meta_tool_name=... to wrap()")
        self.caller_tools = frozenset(names)
        previous = kwargs.get("previous_response_id")
        previous = self.previous = self.chain.aliases.get(previous, previous) if previous else previous
        owed = self.chain.owed.get(previous, []) if previous else []  # popped once answered (settle)
        self.stateless = kwargs.get("store") is False
        self.base = [*owed, *items]
        self.shown = set(shapes.loaded_names(self.base)) | set(self.chain.shown.get(previous, ()))
        history = [c.name for i in items if (c := shapes.tool_call_of(i, self.meta_name, self.catalog.tools))
                   and c.name != self.meta_name]
        last = items[-1] if items else {}
        choice = kwargs.get("tool_choice")
        forced = get(choice, "name") if isinstance(choice, Mapping) and get(choice, "type") == "function" else None
        return TurnInput(
            caller_tools=self.caller_tools,
            last_user_text=shapes.user_text(last),
            new_user_turn=get(last, "role") == "user" and get(last, "type", "message") == "message",
            forced=forced,
            required=choice == "required",
            history_tools=tuple(dict.fromkeys([*history, *shapes.loaded_names(items)])),
            reminder=self.w.reminder(),
        )

    def request(self, kwargs: dict[str, Any], ask: AskModel) -> dict[str, Any]:
        request = dict(kwargs)
        if self.previous:
            request["previous_response_id"] = self.previous
        self._pinned = frozenset(t.name for t in ask.pinned)
        if self.native and not self.rendered and not self.extra:
            self._evict_replayed(ask)
        for exchange in ask.transcript[self.rendered:]:
            self.extra += self.render(exchange)
        self.rendered = len(ask.transcript)
        caller_tools = list(kwargs.get("tools") or [])
        if self.native:
            missing = [t for t in ask.loaded if t.name not in self.shown]
            if missing:
                self.extra.append(shapes.additional_tools_item(missing, self.skills, namespaces=self.o.namespaces))
                self.shown.update(t.name for t in missing)
            sent = [*map(shapes.function_param, ask.pinned), *([shapes.search_tool_param(ask.meta)] if ask.meta else [])]
        else:
            sent = [shapes.function_param(t) for t in ask.tools]
        request["input"] = [*self.base, *self.extra]
        request["tools"] = caller_tools + sent
        choice = self._choice(kwargs.get("tool_choice"), ask)
        if choice is None:
            request.pop("tool_choice", None)
        else:
            request["tool_choice"] = choice
        return request

    def reply(self, response: Any) -> ModelReply:
        output = getattr(response, "output", None)
        if output is None:
            raise model_error("the model's response has no output", response)
        known = {**self.catalog.tools, **dict.fromkeys(self.caller_tools), self.meta_name: None}
        calls = [c for item in output if (c := shapes.tool_call_of(item, self.meta_name, known))]
        text = "".join(get(p, "text", "") for i in output if get(i, "type") == "message"
                       for p in get(i, "content") or () if get(p, "type") == "output_text") or None
        truncated = getattr(response, "status", None) == "incomplete" and get(
            getattr(response, "incomplete_details", None) or {}, "reason") == "max_output_tokens"
        return ModelReply(text=text, calls=tuple(calls), usage=shapes.usage_of(getattr(response, "usage", None)),
                          raw=[item_dict(i) for i in output], truncated=truncated)

    def finish(self, response: Any, outcome: Outcome) -> Any:
        report = outcome.recorder.build(messages=tuple(self.transcript(outcome.hidden)))
        settled = self.settle(response, outcome.drop_call_ids, self.with_cache_break(report, outcome.recorder))
        if outcome.direct is not None:  # return_direct: the tools' results are the answer
            self.answer_directly(settled, outcome)
        return settled

    def answer_directly(self, response: Any, outcome: Outcome, message: Any = None) -> None:
        """`return_direct`: the settled response's output becomes the answer message. With
        `previous_response_id` chaining, the answers owed to the round's calls are the real results,
        followed by the answer as an assistant message, so the server-side conversation reads as it
        happened."""
        text = outcome.direct or ""
        message = message if message is not None else shapes.direct_message(text)
        response.output = [message]
        owed = self.chain.owed.get(getattr(response, "id", None) or "")
        if owed is None or not outcome.hidden:
            return
        results = {call_id: answer.text for call_id, answer in outcome.hidden[-1].answers}
        fixed = [{**item, "output": results[item.get("call_id")]} if item.get("type") == "function_call_output"
                 and item.get("call_id") in results else item for item in owed]
        fixed.append({"type": "message", "role": "assistant", "content": text})
        self.chain.owed[response.id] = fixed

    def with_cache_break(self, report: Any, holder: Any) -> Any:
        """The report naming the tools an eviction stripped from the replay (kept where `holder`
        keeps its report: the recorder, or the session after a stream)."""
        if not self.cache_break:
            return report
        report = dataclasses.replace(report, cache_break=self.cache_break)
        setattr(holder, "report" if hasattr(holder, "rounds") else "last_report", report)
        return report

    def kept_output(self, output: Any, drop: frozenset[str]) -> list[Any]:
        """The final output items the caller gets: dropped function calls leave (the caller must not
        run them); in native mode a dropped search stays, its answer follows it (`settle`)."""
        return [i for i in output
                if not (shapes.call_id_of(i) in drop and not (self.native and get(i, "type") == "tool_search_call"))]

    def settle(self, response: Any, drop: frozenset[str], report: Any) -> Any:
        """The caller's response: kept output, summed usage, open calls answered, `.toolsearch`."""
        owed = self._owed([item_dict(i) for i in response.output], drop)
        kept_items = self.kept_output(response.output, drop)
        if self.native:
            kept_items += [shapes.output_item(i) for i in owed if i["type"] == "tool_search_output"]
        response.output = shapes.drop_orphan_reasoning(kept_items)
        if report.model_calls > 1:
            response.usage = shapes.response_usage(report.usage)
        if self.previous:
            self.chain.owed.pop(self.previous, None)
        if getattr(response, "id", None):
            shown = self.shown | {n for i in owed for n in shapes.loaded_names([i])}
            self.chain.keep(response.id, frozenset(shown), owed)
        response.toolsearch = report  # type: ignore[attr-defined]
        return response

    def transcript(self, exchanges: Any) -> list[dict[str, Any]]:
        """Hidden exchanges as Responses input items (also `response.toolsearch.messages`)."""
        return [i for e in exchanges for i in self.render(e, fresh=False)]

    # -- pieces --------------------------------------------------------------------------------
    def pinned_names(self) -> frozenset[str]:
        return self._pinned

    def render(self, exchange: Any, *, fresh: bool = True) -> list[dict[str, Any]]:
        """One hidden exchange as input items: the model's items verbatim (reasoning with its
        `encrypted_content` included), then one answer per call in call order."""
        # With store=False the API keeps nothing: a reasoning item can only be replayed with its
        # encrypted_content (include=["reasoning.encrypted_content"]); without it, it is left out.
        out = [dict(i) for i in exchange.reply.raw or ()
               if not (self.stateless and i.get("type") == "reasoning" and not i.get("encrypted_content"))]
        for call_id, answer in exchange.answers:
            call = next((c for c in exchange.reply.calls if c.id == call_id), None)
            if isinstance(answer, SearchAnswer) and self.native and call is not None and call.name == self.meta_name:
                # pinned and caller tools are in `tools` already: a second definition is rejected
                answer = dataclasses.replace(answer, tools=tuple(
                    t for t in answer.tools if t.name not in self._pinned and t.name not in self.caller_tools))
                out.append(shapes.search_output(call_id, answer, self.skills, namespaces=self.o.namespaces))
                if fresh:
                    self.shown.update(t.name for t in answer.tools)
                note = shapes.answer_note(answer, self.meta_name)
                if note is not None:
                    out.append(note)
            else:
                text = answer.text if isinstance(answer, (SearchAnswer, ToolOutput)) else str(answer)
                out.append({"type": "function_call_output", "call_id": call_id, "output": text})
        return out

    def _choice(self, caller: Any, ask: AskModel) -> Any:
        if ask.tool_choice is None:
            if isinstance(caller, Mapping) and caller.get("type") == "allowed_tools":
                listed = list(caller.get("tools") or [])
                have = {get(t, "name") for t in listed}
                extra = ask.pinned if self.native else ask.tools
                listed += [{"type": "function", "name": t.name} for t in extra if t.name not in have]
                if self.native and ask.meta is not None:
                    listed.append({"type": "tool_search"})
                return {**caller, "tools": listed}
            return caller
        if isinstance(ask.tool_choice, Forced):
            if ask.tool_choice.name == self.meta_name and self.native:
                return "required"  # no named choice exists for the tool_search tool
            return {"type": "function", "name": ask.tool_choice.name}
        return ask.tool_choice

    def _evict_replayed(self, ask: AskModel) -> None:
        """Native eviction: tools the session dropped at this user-turn boundary leave the replayed
        items (one batch; the prompt cache is lost from the first rewritten item)."""
        keep = {t.name for t in ask.loaded} | {t.name for t in ask.pinned} | self.caller_tools
        stale = [n for n in shapes.loaded_names(self.base) if n in self.catalog.tools and n not in keep]
        if not stale:
            return
        gone = set(stale)
        self.base = [shapes.without_tools(i, gone) for i in self.base]
        self.shown -= gone
        # A replay that still holds tools stripped before gets the same rewrite as last time, which
        # the cache already holds: only newly stripped tools cost a cache break.
        self.cache_break = tuple(n for n in stale if n not in self.chain.stripped)
        self.chain.stripped |= gone

    def _owed(self, final: list[dict[str, Any]], drop: frozenset[str]) -> list[dict[str, Any]]:
        """Answers to the calls of the final output that the caller will not answer."""
        owed = []
        fresh = [t for t in self.session.loaded_tools() if t.name not in self.shown]
        for item in final:
            if shapes.call_id_of(item) not in drop:
                continue
            if self.native and item.get("type") == "tool_search_call":
                answer = SearchAnswer("", tuple(fresh), text="")
                owed.append(shapes.search_output(item["call_id"], answer, self.skills, namespaces=self.o.namespaces))
                fresh = []
            else:
                owed.append({"type": "function_call_output", "call_id": item.get("call_id"),
                             "output": "Not run: answered by toolsearch; its results are in your tools."})
        return owed
