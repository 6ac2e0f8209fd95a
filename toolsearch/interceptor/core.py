"""The turn logic of the interceptor, written once, free of any provider API and of any I/O.

`turn_flow` is a generator (the shape of httpx's `_auth.py` flows): it yields what it needs done —
`AskModel` (send one request, send back the `ModelReply`) or `RunTools` (execute calls, send back their
`ToolOutput`s) — and returns an `Outcome`. `driver.drive` / `driver.adrive` are the only loops around it,
and every provider adapter (Chat, Responses, Anthropic, MCP) maps its API onto these values, so the
rules below hold for all of them by construction.

Rules of one `create` call:
- Requests carry caller tools (added by the adapter, untouched), pinned tools, the meta-tool, then the
  session's loaded tools in load order. Within a conversation that list only grows at its end: tools are
  evicted in one batch at a user-turn boundary (`TurnInput.new_user_turn`), never mid-turn, and nothing
  loaded or called in the current turn is evicted. The meta-tool keeps its place once offered.
- Honest loads: all searches of a round run; their hits interleave by rank (each query's best hit first)
  and load while the budgets allow; each search is answered with a `SearchAnswer` naming only tools that
  will be in the next request, plus how many more matched but did not fit.
- A repeated (near-identical) query in one conversation excludes the loaded tools, so it finds the
  next-best ones. (These two rules are `toolsearch.search.answer`, the policy the MCP gateway shares.) A profile (`permits(tool)`) filters searches and answers a call outside it exactly as
  a call to a tool that does not exist.
- A catalog tool the model guessed by name is validated against its schema: valid, it is loaded and the
  call goes on; invalid, a repair round answers the error and the schema.
- Mixed rounds without the agent loop: real calls return to the caller at once (asking again would lose
  them); the searches of that round still load their hits for the next request.
- Round cap: after `max_search_rounds` search rounds, "raise"/"return" act on the next search; the default
  "withdraw" answers it with `LIMIT_REACHED` (the meta-tool stays: the tool list keeps its prefix) and
  sends the next request with `tool_choice="none"` as the last one: any call in its reply (an endpoint
  that ignores "none") is dropped and ends the turn, so one `create` makes at most
  `max_search_rounds + 2` model calls however the model behaves.
- `tool_choice`: a forced catalog tool is loaded before the first request; a forced choice applies to the
  first round only (then "auto"); `max_steps` caps the model calls of one `create`, the last one being a
  wrap-up request with the same tools and `tool_choice="none"` (so "required" cannot loop past it).
- Agent loop (`execute=True`): catalog calls are executed and fed back until the model answers; a call to
  one of the caller's own tools ends the loop and is returned. `Outcome.hidden` holds every internal
  exchange so adapters can hand the caller a transcript. A round whose calls all go to `return_direct`
  tools and all succeed ends the loop too: `Outcome.direct` is their results, which each adapter shapes
  as the assistant's answer (no model call follows).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from .._errors import ConfigError
from ..catalog.hits import Retriever, as_retriever
from ..catalog.model import Tool
from ..search.answer import Loaded, Need, answer_searches, search_and_load
from .loadout import tool_tokens
from .lookup import argument_error, pinned_tools, query_of
from .meta_tool import LIMIT_REACHED, BadSearchArguments, meta_tool, parse_search_arguments, render_answer
from .options import InterceptorOptions
from .report import CallRecord, Recorder, SearchRecord
from . import values as _values
from .session import Session
from .values import (
    Answer,
    AskModel,
    Exchange,
    Flow,
    Forced,
    ModelReply,
    Outcome,
    RunTools,
    SearchAnswer,
    ToolCall,
    ToolChoice,
    ToolOutput,
    TurnInput,
    Usage,
    model_error,
)

__all__ = [*_values.__all__, "turn_flow"]  # the values are re-exported here


def turn_flow(session: Session, retriever: Retriever, inp: TurnInput) -> Flow:
    return _Turn(session, retriever, inp).run()


class _Turn:
    def __init__(self, session: Session, retriever: Retriever, inp: TurnInput):
        self.s, self.retriever, self.inp = session, as_retriever(retriever), inp
        self.o: InterceptorOptions = session.options
        self.rec = Recorder()
        self.catalog = self.retriever.catalog
        evicted_by_reload = session.follow(self.catalog)
        if evicted_by_reload:
            self.rec.evicted += evicted_by_reload
            self.rec.evictions.append((tuple(evicted_by_reload), "reload", 0))
        self.meta = meta_tool(
            self.o.meta_tool_name, default_limit=self.o.search_limit, max_limit=self.o.max_search_limit
        )
        self.skip = inp.caller_tools | {self.meta.name}  # names a search never answers
        profile = session.profile if session.profile is not None else self.o.profile
        self.allow: Callable[[Tool], bool] | None = profile.permits if profile is not None else None
        self.pinned = tuple(  # a profile hides pinned tools it does not permit, too
            t for t in pinned_tools(self.o, self.catalog)
            if t.name not in inp.caller_tools and (self.allow is None or self.allow(t))
        )
        self.pinned_names = frozenset(t.name for t in self.pinned)
        self.fixed_tokens = sum(tool_tokens(t) for t in self.pinned) + tool_tokens(self.meta)

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> Flow:
        o, rec, inp = self.o, self.rec, self.inp
        self._prepare()
        transcript: list[Exchange] = []
        search_rounds = over_cap = repairs = 0
        while True:
            step = len(rec.rounds) + 1
            wrap_up = step >= o.max_steps
            rec.step_limit_hit = rec.step_limit_hit or wrap_up  # the cap cut the loop, answered or not
            # Past the search cap the request says tool_choice="none" and is the last one: endpoints
            # that ignore "none" (Ollama and several compatible servers) searched on until max_steps.
            last = wrap_up or over_cap > 0
            reply = yield self._ask(transcript, self._choice(step, over_cap, wrap_up), last)
            assert isinstance(reply, ModelReply)
            rec.update_round(usage=reply.usage)
            self._check(reply)
            if not reply.calls:
                return self._outcome((), transcript)
            if last:
                self._record(reply.calls, "dropped")
                return self._outcome((c.id for c in reply.calls), transcript)
            searches, real, answers = self._classify(reply.calls)
            self._note_todo(real)
            caller_calls = [c for c in real if c.name in inp.caller_tools]
            if real and (not o.execute or caller_calls):
                # Hand the real calls to the caller; searches still load their hits for next time.
                self._answer_searches(searches)
                self._record(real, "returned")
                dropped = [c for c in reply.calls if c not in real]
                self._record([c for c in dropped if c.id in answers], "dropped")
                return self._outcome((c.id for c in dropped), transcript)
            if searches:
                if search_rounds >= o.max_search_rounds:
                    rec.round_limit_hit = True
                    if o.on_round_limit == "raise":
                        raise model_error(
                            f"the model searched for tools more than max_search_rounds="
                            f"{o.max_search_rounds} times in one turn (queries: "
                            f"{', '.join(repr(c.arguments) for c in searches)})",
                            reply.raw,
                        )
                    if o.on_round_limit == "return":
                        self._record(reply.calls, "dropped")
                        return self._outcome((c.id for c in reply.calls), transcript)
                    over_cap += 1
                    for c in searches:
                        answers[c.id] = SearchAnswer(query_of(c), (), text=LIMIT_REACHED, is_error=True)
                    self._record(searches, "rejected")
                else:
                    search_rounds += 1
                    answers.update(self._answer_searches(searches))
            elif not real:
                repairs += 1
                if repairs > o.max_search_rounds:
                    raise model_error(
                        "the model kept calling tools that do not exist or with invalid arguments: "
                        + ", ".join(sorted({c.name for c in reply.calls})),
                        reply.raw,
                    )
            if real:  # only reached in the agent loop
                outputs = yield RunTools(tuple(real))
                assert isinstance(outputs, list) and len(outputs) == len(real)
                for call, out in zip(real, outputs):
                    answers[call.id] = out
                    rec.update_round(
                        calls=[CallRecord(call.name, call.arguments, "executed", out.text, out.is_error,
                                          out.duration, out.attempts, out.error_kind)]
                    )
            ordered = [(c.id, answers[c.id]) for c in reply.calls]
            if real and len(real) == len(reply.calls) and self._direct(real, outputs):
                # Every call of the round went to a return_direct tool and succeeded: the results are
                # the answer, no model call follows (the exchange stays in the transcript).
                transcript.append(Exchange(reply, tuple(ordered)))
                rec.returned_direct = tuple(c.name for c in real)
                return Outcome(frozenset(c.id for c in reply.calls), rec, tuple(transcript),
                               direct="\n\n".join(out.text for out in outputs))
            transcript.append(Exchange(reply, tuple(self._remind(ordered))))

    def _direct(self, real: list[ToolCall], outputs: list[ToolOutput]) -> bool:
        """Whether a round's results end the loop: all its tools are `return_direct` (caller tools never
        reach here) and none failed (a failure goes back to the model, which can try another way)."""
        return all((t := self.catalog.get(c.name)) is not None and t.return_direct for c in real) and not any(
            out.is_error for out in outputs)

    # -- before the first request --------------------------------------------------------------
    def _prepare(self) -> None:
        inp, o = self.inp, self.o
        if inp.new_user_turn or self.s.turns == 0:
            evicted = self.s.begin_turn()
            self.rec.note_change((), evicted)
            if evicted:
                self.rec.evictions.append((tuple(evicted), "turn_edge", 0))
        if inp.history_tools and self.s.fresh:
            restored = self.s.restore(
                n for n in inp.history_tools if n not in inp.caller_tools and n not in self.pinned_names
                and (self.allow is None or ((t := self.catalog.get(n)) is not None and self.allow(t)))
            )
            self.rec.note_change(restored)
        forced = inp.forced
        if forced and forced not in inp.caller_tools and forced != o.meta_tool_name:
            tool = self.catalog.get(forced)
            if tool is None or (self.allow is not None and not self.allow(tool)):
                raise ConfigError(
                    f"tool_choice forces {forced!r}, which is neither one of your tools, the search "
                    f"meta-tool {o.meta_tool_name!r}, nor a catalog tool{' this profile permits' if tool else ''}"
                )
            if forced not in self.pinned_names:
                kept, _, fresh = self.s.offer([tool])
                if not kept:
                    raise ConfigError(
                        f"tool_choice forces {forced!r}, but it does not fit max_loaded_tools/"
                        "max_loaded_tokens even after eviction; raise the budgets"
                    )
                self.rec.note_change(tuple(fresh))
        if o.prefetch and inp.new_user_turn and inp.last_user_text and inp.last_user_text.strip():
            self._prefetch(inp.last_user_text.strip())

    def _choice(self, step: int, over_cap: int, wrap_up: bool) -> ToolChoice | None:
        if wrap_up or over_cap:
            return "none"
        if step > 1 and self.inp.forced:
            return "auto"  # a forced choice applies to the first round only
        return None

    # -- pieces --------------------------------------------------------------------------------
    def _ask(self, transcript: list[Exchange], choice: ToolChoice | None, wrap_up: bool) -> AskModel:
        ask = AskModel(self.pinned, self.meta, self.s.loaded_tools(), tuple(transcript), choice, wrap_up)
        names = tuple(t.name for t in ask.tools)
        stable = self.s.note_request(names)
        self.rec.start_round(
            tools_sent=names, tool_tokens=self.fixed_tokens + self.s.loaded_tokens, meta=True,
            prefix_stable=stable, tool_choice=choice,
        )
        return ask

    def _check(self, reply: ModelReply) -> None:
        ids = [c.id for c in reply.calls]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise model_error(f"the model sent duplicate tool call ids {dup}", reply.raw)
        if reply.truncated and reply.calls:
            raise model_error(
                "the model hit its output token limit inside a tool call (finish_reason='length'); "
                "the call's arguments are cut off: raise max_tokens / max_completion_tokens",
                reply.raw,
            )

    def _classify(self, calls: tuple[ToolCall, ...]) -> tuple[list[ToolCall], list[ToolCall], dict[str, Answer]]:
        """(searches, real calls, error answers by call id for every other call)."""
        searches, real, answers = [], [], {}
        visible = set(self.inp.caller_tools) | self.pinned_names | set(self.s.loaded)
        rejected: list[ToolCall] = []
        for call in calls:
            if call.name == self.o.meta_tool_name:
                searches.append(call)
                continue
            tool = None if call.name in self.inp.caller_tools else self.catalog.get(call.name)
            hidden = tool is not None and self.allow is not None and not self.allow(tool)
            if hidden:  # answered exactly like an unknown name: a profile must not reveal what it hides
                tool = None
            if call.name in visible and not hidden:
                real.append(call)
                continue
            elif tool is not None:  # a catalog tool the model knew by name
                error = argument_error(tool, call.arguments)
                kept, _, fresh = self.s.offer([tool])
                self.rec.note_change(tuple(fresh))
                if error is None and kept:
                    visible.add(call.name)
                    real.append(call)
                    continue
                answers[call.id] = ToolOutput(
                    (error or f"Error: no room to load {call.name!r} in this turn; use the tools you have.")
                    + f"\nSchema of {call.name}: {json.dumps(tool.input_schema, separators=(',', ':'))}",
                    True,
                )
            else:
                answers[call.id] = ToolOutput(
                    f"Error: there is no tool named {call.name!r}; call {self.o.meta_tool_name} to find a "
                    "tool that can do this.", True)
            rejected.append(call)
        self.s.used(c.name for c in real)
        self._record(rejected, "rejected")
        return searches, real, answers

    def _answer_searches(self, searches: list[ToolCall]) -> dict[str, Answer]:
        if not searches:
            return {}
        parsed, answers = [], {}
        for call in searches:
            try:
                args = parse_search_arguments(
                    call.arguments, default_limit=self.o.search_limit, max_limit=self.o.max_search_limit
                )
                parsed.append((call.id, args))
            except BadSearchArguments as exc:
                answers[call.id] = SearchAnswer(query_of(call), (), text=str(exc), is_error=True)
        # one search per need (a call may carry several: meta_tool's `queries`), answered per call
        found, loaded = answer_searches(self.retriever, self.s, [args for _, args in parsed], allow=self.allow,
                                        skip=self.skip, pinned=self.pinned_names)
        self._note([need for one in found for need in one.needs], loaded, prefetch=False)
        for (call_id, _), one in zip(parsed, found):
            text = render_answer(one.tools, one.more, max_chars=self.o.description_chars)
            answers[call_id] = SearchAnswer(one.query, one.tools, one.more, text)
        self._record(searches, "search")
        return answers

    def _prefetch(self, text: str) -> None:
        needs, loaded = search_and_load(self.retriever, self.s, [(text, self.o.prefetch_limit)], allow=self.allow,
                                        skip=self.skip, pinned=self.pinned_names)
        self._note(needs, loaded, prefetch=True)

    def _note(self, needs: list[Need], loaded: Loaded, *, prefetch: bool) -> None:
        """Record a batch of searches and what loading their hits did (the report and events read it)."""
        for need in needs:
            record = SearchRecord(need.query, need.limit, tuple(t.name for t in need.found), prefetch=prefetch,
                                  duration=need.duration)
            if prefetch:
                self.rec.prefetch.append(record)
            else:
                self.rec.update_round(searches=[record])
        if loaded.shed:
            self.rec.evictions.append((loaded.shed, "budget", len(self.rec.rounds)))
        self.rec.note_change(loaded.fresh, loaded.shed, loaded.refused)

    def _record(self, calls: Iterable[ToolCall], outcome: str) -> None:
        calls = list(calls)
        if calls:
            self.rec.update_round(calls=[CallRecord(c.name, c.arguments, outcome) for c in calls])

    def _note_todo(self, real: list[ToolCall]) -> None:
        if any((t := self.catalog.get(c.name)) is not None and t.skill == self.o.todo_skill for c in real):
            self.s.turns_since_todo = 0
        else:
            self.s.turns_since_todo += 1

    def _remind(self, answers: list[tuple[str, Answer]]) -> list[tuple[str, Answer]]:
        """Seed 001's nag: after N model turns without touching the plan, the plan's summary is
        appended to the first answer of the turn; the count restarts after a reminder."""
        n = self.o.todo_reminder_turns
        if not (self.o.execute and n and self.inp.reminder and answers) or self.s.turns_since_todo < n:
            return answers
        summary = self.inp.reminder()
        if not summary:
            return answers
        self.s.turns_since_todo = 0
        call_id, answer = answers[0]
        note = (f"\n\n<reminder>You have not updated your todo plan for {n} turns; update it before "
                f"going on. Plan: {summary}</reminder>")
        if isinstance(answer, SearchAnswer):
            answer = SearchAnswer(answer.query, answer.tools, answer.more, answer.text + note, answer.is_error)
        else:
            answer = ToolOutput(answer.text + note, answer.is_error)
        return [(call_id, answer), *answers[1:]]

    def _outcome(self, drop: Iterable[str], transcript: list[Exchange]) -> Outcome:
        return Outcome(frozenset(drop), self.rec, tuple(transcript))
