"""The turn logic of the interceptor, written once, free of any provider and of any I/O.

`turn_flow` is a generator (the shape of httpx's `_auth.py` flows): it yields what it needs done —
`AskModel` (send a request, send back the `ModelReply`) or `RunTools` (execute calls, send back their
`ToolOutput`s) — and returns an `Outcome`. The sync and async OpenAI drivers are thin loops around it, so
both behave identically by construction.

Rules of one `create` call (see issue 3):
- The model sees caller tools (added by the driver, untouched), pinned tools, the meta-tool, then the
  session's loaded tools in load order.
- All `tool_search` calls of a turn are run; their hits are merged, de-duplicated and loaded; each call
  gets a short answer. Malformed arguments get an error answer; a name that is neither visible nor in
  the catalog gets an error answer; a catalog tool that is not loaded is loaded and its call passes.
- Mixed turns (searches next to real calls), without the agent loop: the searches are run and their
  hits loaded (ready for the next request), but the real calls are returned to the caller at once and
  the search/unknown calls are removed from the response. Asking the model again would throw away real
  calls it already made; answering the searches later is unnecessary because their tools are in the
  next request anyway.
- Round cap: a turn that searches uses one round. After `max_search_rounds` rounds, "withdraw" sends
  the next request without the meta-tool; "raise" / "return" act when the model searches once more.
  Turns that only call unknown tools are capped the same way and then raise `ModelBehaviorError`.
- Agent loop (`execute=True`): catalog tool calls are executed and fed back until the model answers;
  a call to one of the caller's own tools ends the loop and is returned. At `max_steps` model calls a
  last request without tools asks for the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass

from .._errors import ModelBehaviorError
from ..catalog.hits import Retriever
from ..catalog.model import Tool
from .loadout import tool_tokens
from .meta_tool import BadSearchArguments, meta_tool, parse_search_arguments, render_hits
from .options import InterceptorOptions
from .report import CallRecord, Recorder, SearchRecord, Usage
from .session import Session

__all__ = [
    "AskModel",
    "Exchange",
    "ModelReply",
    "Outcome",
    "RunTools",
    "ToolCall",
    "ToolOutput",
    "TurnInput",
    "turn_flow",
]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as models send it


@dataclass(frozen=True)
class ModelReply:
    text: str | None
    calls: tuple[ToolCall, ...]
    usage: Usage = Usage()


@dataclass(frozen=True)
class ToolOutput:
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class Exchange:
    """One internal round trip to replay to the model: its message and our answers, by call id."""

    reply: ModelReply
    answers: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class AskModel:
    tools: tuple[Tool, ...]  # catalog-side tools, in the order they must be sent
    transcript: tuple[Exchange, ...]
    no_tools: bool = False  # wrap-up request: send no tools at all


@dataclass(frozen=True)
class RunTools:
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class TurnInput:
    caller_tools: frozenset[str]
    last_user_text: str | None  # the latest message if it is the user's (a new user turn)
    reminder: Callable[[], str | None] | None = None  # todo summary for the agent loop


@dataclass(frozen=True)
class Outcome:
    drop_call_ids: frozenset[str]
    recorder: Recorder


Flow = Generator["AskModel | RunTools", "ModelReply | list[ToolOutput]", Outcome]


def turn_flow(session: Session, retriever: Retriever, inp: TurnInput) -> Flow:
    return _Turn(session, retriever, inp).run()


class _Turn:
    def __init__(self, session: Session, retriever: Retriever, inp: TurnInput):
        self.s, self.retriever, self.inp = session, retriever, inp
        self.o: InterceptorOptions = session.options
        self.rec = Recorder()
        self.catalog = retriever.catalog
        session.follow(self.catalog)
        self.meta = meta_tool(
            self.o.meta_tool_name, default_limit=self.o.search_limit, max_limit=self.o.max_search_limit
        )
        pinned = [t for t in self.catalog.pinned] + [
            t for n in self.o.pinned if (t := self.catalog.get(n)) is not None and not t.pinned
        ]
        self.pinned = tuple(t for t in pinned if t.name not in inp.caller_tools)

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> Flow:
        o, rec = self.o, self.rec
        if o.prefetch and self.inp.last_user_text and self.inp.last_user_text.strip():
            self._search_and_load([(self.inp.last_user_text.strip(), o.prefetch_limit)], prefetch=True)
        transcript: list[Exchange] = []
        search_rounds = repairs = 0
        while True:
            wrap_up = o.execute and len(rec.rounds) >= o.max_steps
            offer_meta = not wrap_up and not (
                o.on_round_limit == "withdraw" and search_rounds >= o.max_search_rounds
            )
            reply = yield self._ask(transcript, offer_meta, wrap_up)
            assert isinstance(reply, ModelReply)
            rec.update_round(usage=reply.usage)
            if not reply.calls:
                return self._outcome(())
            if wrap_up:
                rec.step_limit_hit = True
                self._record(reply.calls, "dropped")
                return self._outcome(c.id for c in reply.calls)
            searches, real, unknown = self._classify(reply.calls, offer_meta)
            self._note_todo(real)
            caller_calls = [c for c in real if c.name in self.inp.caller_tools]
            if real and (not o.execute or caller_calls):
                # Hand the real calls to the caller; searches still load their hits for next time.
                self._search_and_load(self._parse_all(searches)[0])
                self._record(real, "returned")
                self._record([*searches, *unknown], "dropped")
                return self._outcome(c.id for c in [*searches, *unknown])
            if searches:
                if search_rounds >= o.max_search_rounds:
                    rec.round_limit_hit = True
                    if o.on_round_limit == "raise":
                        raise ModelBehaviorError(
                            f"the model searched for tools more than max_search_rounds="
                            f"{o.max_search_rounds} times in one turn (queries: "
                            f"{', '.join(repr(c.arguments) for c in searches)})"
                        )
                    self._record(reply.calls, "dropped")
                    return self._outcome(c.id for c in reply.calls)
                search_rounds += 1
            elif not real:
                repairs += 1
                if repairs > o.max_search_rounds:
                    raise ModelBehaviorError(
                        "the model kept calling tools that do not exist: "
                        + ", ".join(sorted({c.name for c in unknown}))
                    )
            answers = self._answer_searches(searches) | self._answer_unknown(unknown, offer_meta)
            if real:  # only reached in the agent loop
                outputs = yield RunTools(tuple(real))
                assert isinstance(outputs, list) and len(outputs) == len(real)
                for call, out in zip(real, outputs):
                    answers[call.id] = out.text
                    rec.update_round(
                        calls=[CallRecord(call.name, call.arguments, "executed", out.text, out.is_error)]
                    )
            ordered = [(c.id, answers[c.id]) for c in reply.calls]
            transcript.append(Exchange(reply, tuple(self._remind(ordered))))

    # -- pieces --------------------------------------------------------------------------------
    def _ask(self, transcript: list[Exchange], offer_meta: bool, wrap_up: bool) -> AskModel:
        tools = () if wrap_up else (
            *self.pinned, *((self.meta,) if offer_meta else ()), *self.s.loaded_tools()
        )
        self.rec.start_round(
            tools_sent=tuple(t.name for t in tools),
            tool_tokens=sum(tool_tokens(t) for t in tools),
            meta=offer_meta,
        )
        return AskModel(tools=tools, transcript=tuple(transcript), no_tools=wrap_up)

    def _classify(
        self, calls: tuple[ToolCall, ...], offer_meta: bool
    ) -> tuple[list[ToolCall], list[ToolCall], list[ToolCall]]:
        searches, real, unknown = [], [], []
        visible = set(self.inp.caller_tools) | {t.name for t in self.pinned} | set(self.s.loaded)
        for call in calls:
            if call.name == self.o.meta_tool_name and offer_meta:
                searches.append(call)
            elif call.name in visible:
                real.append(call)
            elif call.name != self.o.meta_tool_name and (tool := self.catalog.get(call.name)):
                change = self.s.load([tool])  # a catalog tool the model knew by name: let it pass
                self.rec.note_change(change.loaded, change.evicted, change.dropped)
                real.append(call)
            else:
                unknown.append(call)
        self.s.touch(c.name for c in real)
        return searches, real, unknown

    def _parse_all(
        self, searches: list[ToolCall]
    ) -> tuple[list[tuple[str, int]], dict[str, str], list[str]]:
        """(query, limit) pairs of the well-formed calls, error answers by call id, their ids."""
        parsed, errors = [], {}
        for call in searches:
            try:
                args = parse_search_arguments(
                    call.arguments, default_limit=self.o.search_limit, max_limit=self.o.max_search_limit
                )
                parsed.append((args.query, args.limit, call.id))
            except BadSearchArguments as exc:
                errors[call.id] = str(exc)
        return [(q, k) for q, k, _ in parsed], errors, [i for *_, i in parsed]

    def _search_and_load(
        self, queries: list[tuple[str, int]], *, prefetch: bool = False
    ) -> list[list[Tool]]:
        """Run every search, merge and de-duplicate the hits, load them in one batch."""
        per_query: list[list[Tool]] = []
        for query, limit in queries:
            tools = []
            for hit in self.retriever.search(query, limit):
                tool = hit.tool if hit.tool is not None else self.catalog.get(hit.name)
                if tool is None or tool.name in self.inp.caller_tools or tool.name == self.meta.name:
                    continue
                tools.append(self.catalog.get(tool.name) or tool)
            per_query.append(tools)
            record = SearchRecord(query, limit, tuple(t.name for t in tools), prefetch=prefetch)
            if prefetch:
                self.rec.prefetch.append(record)
            else:
                self.rec.update_round(searches=[record])
        pinned = {t.name for t in self.pinned}
        merged = [t for tools in per_query for t in tools if t.name not in pinned]
        change = self.s.load(merged)
        self.rec.note_change(change.loaded, change.evicted, change.dropped)
        return per_query

    def _answer_searches(self, searches: list[ToolCall]) -> dict[str, str]:
        queries, errors, ids = self._parse_all(searches)
        found = self._search_and_load(queries) if queries else []
        answers = {i: render_hits(tools, max_chars=self.o.description_chars) for i, tools in zip(ids, found)}
        self._record(searches, "search")
        return answers | errors

    def _answer_unknown(self, unknown: list[ToolCall], offer_meta: bool) -> dict[str, str]:
        answers = {}
        for call in unknown:
            if call.name == self.o.meta_tool_name:
                answers[call.id] = (
                    f"Error: {call.name} is no longer available in this turn. Use the tools you "
                    "already have, or answer the user."
                )
            else:
                hint = (
                    f"call {self.o.meta_tool_name} to find a tool that can do this"
                    if offer_meta
                    else "use one of the tools you were given"
                )
                answers[call.id] = f"Error: there is no tool named {call.name!r}; {hint}."
        self._record(unknown, "rejected")
        return answers

    def _record(self, calls: list[ToolCall] | tuple[ToolCall, ...], outcome: str) -> None:
        if calls:
            self.rec.update_round(calls=[CallRecord(c.name, c.arguments, outcome) for c in calls])

    def _note_todo(self, real: list[ToolCall]) -> None:
        if any((t := self.catalog.get(c.name)) is not None and t.skill == self.o.todo_skill for c in real):
            self.s.turns_since_todo = 0
        else:
            self.s.turns_since_todo += 1

    def _remind(self, answers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Seed 001's nag: after N model turns without touching the plan, the plan's summary is
        appended to the first answer of the turn. Unlike the seed, the count restarts after a
        reminder, so the model is reminded every N turns rather than at every turn."""
        n = self.o.todo_reminder_turns
        if not (self.o.execute and n and self.inp.reminder and answers) or self.s.turns_since_todo < n:
            return answers
        summary = self.inp.reminder()
        if not summary:
            return answers
        self.s.turns_since_todo = 0
        call_id, text = answers[0]
        note = f"\n\n<reminder>You have not updated your todo plan for {n} turns; update it before going on. Plan: {summary}</reminder>"
        return [(call_id, text + note), *answers[1:]]

    def _outcome(self, drop: Iterable[str]) -> Outcome:
        return Outcome(frozenset(drop), self.rec)
