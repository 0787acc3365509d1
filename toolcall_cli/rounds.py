"""One round of tool calls: every call of one reply, checked against the session's policy, run
through the pool (in dependency order with --dag, in parallel where independent), and answered
(every call gets exactly one result, whatever happens to it).

The round never raises for a call: an unknown tool, bad arguments, a refusal, a timeout, a
failed dependency or Ctrl-C all end as error results the model can read.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolcall_cli.events import (
    ApprovalAnswered,
    ApprovalAsked,
    CallFromResult,
    Event,
    Notice,
    ParseError,
    PlaceholdersFilled,
    StepPaused,
    TimelineEntry,
    ToolFinished,
    ToolStarted,
    ToolTimeline,
)
from toolcall_cli.feedback import Problem, clip, error_text, note, said
from toolcall_cli.grounding import ArgumentCheck
from toolcall_cli.history import ENGINE_NOTE_PREFIX as ENGINE_NOTE
from toolcall_cli.history import result_json
from toolcall_cli.limits import Limits
from toolcall_cli.messages import ToolCall, ToolResult, call_key
from toolcall_cli.quoted import Quote, ResultQuotes
from toolcall_cli.tools.dag import Graph, GraphProblem, Unresolved, build_graph, placeholders
from toolcall_cli.tools.dag import substitute as put_results_in
from toolcall_cli.tools.executor import error_result, prepare, runs_with
from toolcall_cli.tools.policy import RateLimits, permission_refusal
from toolcall_cli.tools.pool import Finished, Job, ToolPool
from toolcall_cli.tools.registry import Permission, Tool, ToolRegistry
from toolcall_cli.wording import plural

Decision = Literal["yes", "no", "always"]
"""An answer to ApprovalAsked: yes, no, or always (this tool, for the rest of the session).
True and False mean yes and no."""


Answer = Literal["yes", "no", "always", "declined"]
"""What the consumer answered an approval question, as the round takes it."""


@dataclass(frozen=True)
class Declined:
    """No, and why nobody said yes: the view shows it and the model reads it."""

    why: str


@dataclass(frozen=True)
class Edited:
    """Run the call with these arguments instead of the model's (--step, `e`)."""

    arguments: dict[str, Any]


StepAction = Literal["go", "skip", "quit"] | Edited
"""An answer to StepPaused before a tool runs."""


class StepQuit(BaseException):
    """The user stopped the run at a pause (--step, `q`). A BaseException, as Ctrl-C is: the
    loop turns a model's or parser's Exception into a failed reply, and this is no failure."""


NOBODY_TO_ASK = Declined(
    "declined: it is dangerous and needs approval, but this run cannot ask (it is not "
    "interactive) and --yes was not given"
)
"""What the view says when a dangerous call meets nobody to ask; the model reads the problem."""
CANCELLED = Problem("cancelled")
OUT_OF_TIME = Problem("stopped_at_time_limit")
SECOND_INTERRUPT = 1.0
"""A second Ctrl-C this soon after the first stops the whole turn."""


@dataclass
class ToolPolicy:
    """How a session runs tools, and what it remembers about them across its runs."""

    allow: Permission = "write"
    """The highest permission a tool may need: read < write < admin (--allow)."""
    yes: bool = False
    """--yes: dangerous tools run without asking. Not a call copied from a tool result: that
    one is always asked about."""
    max_parallel: int = 4
    isolate_all: bool = False
    """Run every plugin tool in a worker process (--isolate-tools)."""
    dag: bool = False
    """Calls of a reply may wait for each other and use each other's results (--dag)."""
    rate_limits: RateLimits = field(default_factory=RateLimits)
    always: set[str] = field(default_factory=set)
    """Dangerous tools the user approved for the rest of the session."""


@dataclass
class _Entry:
    call: ToolCall
    waits_for: tuple[str, ...] = ()
    started: float | None = None
    ended: float | None = None
    result: ToolResult | None = None
    approval_wait: float = 0.0
    """The seconds the user took to answer whether it may run."""


class Round:
    """The calls of one reply. `add` each parsed call (a streamed reply: as it arrives), then
    `reply_ended`, then `finish`; `ready` hands out what finished meanwhile."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        cache: dict[tuple[str, str], ToolResult],
        policy: ToolPolicy,
        limits: Limits,
        withdrawn: bool = False,
        streaming: bool = True,
        clock: Callable[[], float] = time.monotonic,
        earlier_ids: Collection[str] = (),
        stepping: bool = False,
        iteration: int = 1,
        quotes: ResultQuotes | None = None,
        run_time_left: Callable[[], float | None] = lambda: None,
        grounding: ArgumentCheck | None = None,
    ) -> None:
        self._registry = registry
        self._cache = cache
        self._policy = policy
        self._limits = limits
        self._withdrawn = withdrawn
        self.streaming = streaming
        """Calls start as they arrive. Otherwise the reply is complete before its calls are
        added: with --dag nothing of it starts before its graph is checked, so a bad graph runs
        none of its calls. A streamed reply starts calls without dependencies as they arrive."""
        self._clock = clock
        self._earlier_ids = earlier_ids
        """Ids of the run's earlier calls: a model copies one as a tool name."""
        self._stepping = stepping
        self._iteration = iteration
        self._quotes = quotes or ResultQuotes()
        """The conversation's tool results, read for calls: a call taken from one needs the
        user's approval."""
        self._run_time_left = run_time_left
        """Seconds left under the run's time limit (None without one): checking a call's
        arguments gets no more than that, nor more than its tool timeout."""
        self._grounding = grounding
        """Checks the figures of each call's arguments (--grounding); None: no check."""
        self._pool = ToolPool(max_parallel=policy.max_parallel, clock=clock)
        self._began = clock()
        self._entries: dict[str, _Entry] = {}
        self._held: list[str] = []
        self._past_cap: list[str] = []
        """The model's ids of the calls past --max-calls-per-reply, which never run."""
        self._graph: Graph | None = None
        self._last_interrupt: float | None = None
        self._first_by_key: dict[tuple[str, str], str] = {}
        self._twins: dict[str, list[ToolCall]] = {}
        """First call id → the identical calls of the reply that wait for its result."""
        self._data: dict[str, str] = {}
        """A result's data as the tool returned it (with --dag), or a reused result's without
        the note the model reads after it: what a placeholder into that call takes."""
        self.results: list[ToolResult] = []
        """Every result so far, in the order the calls finished."""
        self._notes: dict[str, str] = {}
        """Call id → what the model is told after the call's result (an argument left out)."""

    # --- the round's life -----------------------------------------------------------------------

    def add(self, call: ToolCall) -> Iterator[Event]:
        if len(self._entries) >= self._limits.max_calls_per_reply:
            # Never run (--max-calls-per-reply): a runaway reply of a hundred calls would flood
            # the next request with their results. The loop keeps the first calls, and says so.
            if call.ref is not None:
                self._past_cap.append(call.ref)
            return
        self._entries[call.id] = _Entry(call)
        if self._policy.dag and (not self.streaming or call.depends_on or _has_placeholders(call)):
            self._held.append(call.id)  # it waits: the reply's graph is known at its end
            return
        yield from self._start(call)

    def reply_ended(self) -> Iterator[Event]:
        """The reply is complete: check its graph, and start what waited for it."""
        if not self._held:
            return
        try:
            self._graph = build_graph([e.call for e in self._entries.values()], self._past_cap)
        except GraphProblem as problem:
            for call_id in self._held:
                call = self._entries[call_id].call
                yield from self._answer(
                    call,
                    refused(
                        call, "dependency_error", Problem("dependency_error", detail=str(problem))
                    ),
                )
            self._held.clear()
            return
        for call_id in self._held:
            self._entries[call_id].waits_for = self._graph.waits_for.get(call_id, ())
        yield from self._release()

    def ready(self) -> Iterator[Event]:
        """What finished by now (and what that let start), without waiting."""
        for finished in self._pool.ready():
            yield from self._finished(finished)

    def finish(self, deadline: Callable[[], float | None] = lambda: None) -> Iterator[Event]:
        """Wait until every call is answered, or `deadline()` (seconds left, None: no limit)
        runs out. Ctrl-C while tools run cancels this round's calls; the run goes on with
        "cancelled" results, unless a second Ctrl-C follows within a second."""
        while self._pool.pending:
            left = deadline()
            if left is not None and left <= 0:
                # The run's time is up: stop what still runs (an isolated tool is killed, not
                # left to finish on its own) and answer each call so.
                for stopped in self._pool.cancel(OUT_OF_TIME):
                    yield from self._finished(stopped)
                return
            try:
                finished = self._pool.wait(timeout=left)
            except KeyboardInterrupt:
                yield from self._interrupted()
                continue
            if finished is not None:
                yield from self._finished(finished)
        yield self.timeline()

    def abandon(self) -> None:
        """The reply failed: stop what it started (isolated calls are killed), answer nothing."""
        self._pool.cancel(Problem("reply_failed"))
        self._held.clear()

    def all_results(self, errors: Sequence[ParseError]) -> list[ToolResult]:
        """Every call's result once the round is over: the calls still running when the run's
        time ran out, and the calls that could not be parsed, answered as failed."""
        unanswered = [e.call for e in self._entries.values() if e.result is None]
        unfinished = [refused(c, "timeout", Problem("out_of_time")) for c in unanswered]
        return [*self.results, *unfinished, *(parse_error_result(e) for e in errors)]

    def timeline(self) -> ToolTimeline:
        entries = tuple(
            TimelineEntry(
                call_id=e.call.id,
                name=e.call.name,
                ref=e.call.ref,
                waits_for=e.waits_for,
                started=_offset(e.started, self._began),
                ended=_offset(e.ended, self._began),
                ok=bool(e.result and e.result.ok),
                outcome=_outcome(e.result),
                approval_wait=e.approval_wait,
            )
            for e in self._entries.values()
        )
        return ToolTimeline(entries=entries)

    # --- inside -----------------------------------------------------------------------------------

    def _interrupted(self) -> Iterator[Event]:
        now = self._clock()
        if self._last_interrupt is not None and now - self._last_interrupt < SECOND_INTERRUPT:
            raise KeyboardInterrupt
        self._last_interrupt = now
        stopped = self._pool.cancel(CANCELLED)
        for call_id in self._held:
            call = self._entries[call_id].call
            stopped.append(Finished(call, refused(call, "cancelled", CANCELLED), now, now))
        self._held.clear()
        yield Notice(
            level="warning",
            message=f"Ctrl-C: cancelled {plural(len(stopped), 'tool call')} of this round; the "
            "model goes on without them (Ctrl-C again within a second stops the turn)",
        )
        for finished in stopped:
            yield from self._finished(finished)

    def _start(self, call: ToolCall) -> Iterator[Event]:
        """Take up a call: the checks, pauses and questions before it may run, then its run.
        ToolStarted comes only when it is handed to its tool, after any approval: a reader of
        the events never sees a call started that was then declined, reused or refused (those
        get their ToolFinished alone)."""
        first_id = self._first_by_key.setdefault(call_key(call), call.id)
        if first_id != call.id:
            yield from self._follow(call, first_id)
            return
        refusal = self._refusal(call)
        if refusal is not None:
            yield from self._answer(call, refusal)
            return
        stepped = yield from self._stepped(call)
        if stepped is None:
            return
        call = stepped
        prepared = prepare(
            call, self._registry, time_limit=self._check_time(call), drop_unexpected=True
        )
        if isinstance(prepared, ToolResult):
            yield from self._answer(call, prepared)
            return
        tool = prepared.tool
        if prepared.dropped:
            self._note(call, left_out(tool, prepared.dropped))
        refusal = yield from self._grounded(call, prepared.arguments, tool)
        if refusal is not None:
            yield from self._answer(call, refusal)
            return
        refusal = yield from self._approval(call, tool)
        if refusal is not None:
            yield from self._answer(call, refusal)
            return
        # --isolate-tools: plugin tools only; an MCP tool already runs in its server's process.
        from_a_file = bool(tool.source) and not tool.source.startswith(("mcp:", "built-in"))
        isolate = tool.isolate or (self._policy.isolate_all and from_a_file)
        timeout = tool.timeout or self._limits.tool_timeout
        yield ToolStarted(call=call)
        self._entries[call.id].started = self._clock()
        self._pool.submit(Job(call, tool, prepared.arguments, timeout, isolate, prepared.coerced))

    def _grounded(
        self, call: ToolCall, arguments: dict[str, Any], tool: Tool
    ) -> Generator[Event, None, ToolResult | None]:
        """The refusal of a call whose arguments hold a figure from nowhere, the first time
        (--grounding); the view is shown the check, and a call run anyway gets a note."""
        if self._grounding is None:
            return None
        # A call that waited for others of this reply (--dag) takes figures from their results,
        # whole: a placeholder takes a figure past the cut the model reads.
        given = [
            self._data.get(call_id, e.result.content)
            for call_id, e in self._entries.items()
            if e.result and e.result.ok
        ]
        verdict = self._grounding.verdict(call, arguments, tool.spec.parameters, given)
        if verdict is None:
            return None
        yield verdict.event
        if verdict.note is not None:
            self._note(call, verdict.note)
        return verdict.refusal

    def _note(self, call: ToolCall, note: str) -> None:
        earlier = self._notes.get(call.id)
        self._notes[call.id] = note if earlier is None else f"{earlier}\n{note}"

    def _check_time(self, call: ToolCall) -> float:
        """How long checking `call`'s arguments may take: its tool timeout, or the time the
        run has left when that is less."""
        tool = self._registry.get(call.name)
        limit = (tool.timeout if tool is not None else None) or self._limits.tool_timeout
        left = self._run_time_left()
        return limit if left is None else max(min(limit, left), 0.0)

    def _stepped(self, call: ToolCall) -> Generator[Event, None, ToolCall | None]:
        """With --step, the pause before a known tool runs: the call to run (its arguments
        perhaps edited by the user), or None when the user skipped it (it is answered so).
        Edited arguments are checked as the model's are; if they do not fit, the pause comes
        again, saying why."""
        if not self._stepping or self._registry.get(call.name) is None:
            return call
        problem, draft = None, None
        while True:
            pause = StepPaused(
                before="tool", iteration=self._iteration, call=call, problem=problem, draft=draft
            )
            yield pause
            action = pause.answered or "go"
            if action == "quit":
                raise StepQuit
            if action == "skip":
                skipped = refused(call, "skipped_by_user", Problem("skipped_by_user"))
                yield from self._answer(call, skipped)
                return None
            if not isinstance(action, Edited):
                return call
            problem, draft = self._edit_problem(call, action.arguments), action.arguments
            if problem is None:
                yield Notice(
                    message=f"{call.name}: the user edited its arguments to "
                    f"{json.dumps(action.arguments, ensure_ascii=False)}"
                )
                return replace(call, arguments=action.arguments)

    def _edit_problem(self, call: ToolCall, arguments: dict[str, Any]) -> str | None:
        """Why arguments the user wrote cannot run, said as the model would be told; None when
        they can."""
        edited = replace(call, arguments=arguments)
        prepared = prepare(edited, self._registry, time_limit=self._check_time(call))
        if not isinstance(prepared, ToolResult):
            return None
        return prepared.content.removeprefix("Error: ")

    def _follow(self, call: ToolCall, first_id: str) -> Iterator[Event]:
        """An identical call earlier in this reply (same tool, canonically equal arguments) runs
        once: this one gets its result, now or when it comes. Even for a tool that is not
        cacheable: two identical calls in one reply are the model repeating itself, not asking
        twice (two calls of get_time a millisecond apart would differ only by noise)."""
        first = self._entries[first_id].result
        if first is None:
            self._twins.setdefault(first_id, []).append(call)
            return
        self._data[call.id] = self._data.get(first_id, first.content)
        yield from self._answer(call, twin(call, first))

    def _echoed_result(self, call: ToolCall) -> str | None:
        """The earlier result of the same tool that a one-argument call only hands back
        (calculate("5800") after calculate("123*47+19") gave 5800): a small model loops so, one
        tool round after another, instead of answering. Another tool taking the result (an id
        looked up, then used) is a chain, and runs."""
        if not isinstance(call.arguments, dict) or len(call.arguments) != 1:
            return None
        (value,) = call.arguments.values()
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return None
        text = str(value).strip()
        for earlier in self._cache.values():
            if (
                earlier.ok
                and earlier.name == call.name
                and text
                and earlier.content.strip() == text
            ):
                return text
        return None

    def _result_in_arguments(self, call: ToolCall, tool: Tool | None) -> str | None:
        """An argument the tool does not take whose value an earlier result of the same tool
        holds under the same key: the model wrote the result it has back into the call
        (convert_units(value=26, from_unit="mi", to_unit="km", result=41.84, text="26 mi = …")
        after convert_units gave exactly that, seen over and over from Qwen2.5-0.5B). It is a
        repeat, not a mistake to correct: returns that argument as `key=value`."""
        if tool is None or not isinstance(call.arguments, dict):
            return None
        if tool.spec.parameters.get("additionalProperties") is not False:
            return None  # a tool that takes any argument may take a result's field as one
        taken = tool.spec.parameters.get("properties") or {}
        extra = {k: v for k, v in call.arguments.items() if k not in taken}
        if not extra:
            return None
        for earlier in self._cache.values():
            if not earlier.ok or earlier.name != call.name:
                continue
            fields = result_json(earlier.content)
            if not isinstance(fields, dict):
                continue
            for key, value in extra.items():
                if key in fields and same_value(fields[key], value):
                    return f"{key}={json.dumps(value, ensure_ascii=False)}"
        return None

    def _ran_as(self, call: ToolCall) -> tuple[str, str]:
        """The key of the call as it runs (executor.runs_with, the injection guard's too):
        coerced, without the arguments its tool does not take, its defaults written out. So an
        argument left out does not make it another call: Qwen2.5-0.5B wrote a result back into
        its call as such an argument, changed each time (result=131.0, then 131), and the same
        calculation ran again, round after round, never a repeat."""
        tool = self._registry.get(call.name)
        if tool is None or not isinstance(call.arguments, dict):
            return call_key(call)
        return call_key(replace(call, arguments=runs_with(tool.spec, call.arguments)))

    def _is_an_id(self, name: str) -> bool:
        return name in self._earlier_ids or name in self._entries

    def _refusal(self, call: ToolCall) -> ToolResult | None:
        """A result given without running the call: reused, withdrawn, or not allowed."""
        tool = self._registry.get(call.name)
        if tool is None and self._is_an_id(call.name):
            names = tuple(self._registry.names())
            return refused(call, "unknown_tool", Problem("not_a_tool", allowed=names))
        written_back = self._result_in_arguments(call, tool)
        if written_back is not None:
            return refused(call, "repeated", Problem("written_back", given=written_back))
        echoed = self._echoed_result(call)
        if echoed is not None:
            return refused(call, "repeated", Problem("echoed_result", given=echoed))
        earlier = self._cache.get(self._ran_as(call))
        if earlier is not None and tool is not None and tool.cacheable:
            self._data[call.id] = earlier.content
            return repeated(call, earlier)
        if self._withdrawn:
            return refused(call, "withdrawn", Problem("withdrawn"))
        if tool is None:
            return None  # prepare() names the unknown tool and lists the others
        why = permission_refusal(tool, self._policy.allow)
        if why is not None:
            return refused(call, "permission", why)
        return None

    def _approval(self, call: ToolCall, tool: Tool) -> Generator[Event, None, ToolResult | None]:
        """None when the call may run; the refusal as a result otherwise, with events for the
        view. Asked here, on the loop's thread, before anything runs; the rate limit counts
        only calls that will run."""
        quote = self._quotes.find(call, tool.spec)
        if quote is not None:
            yield CallFromResult(
                call=call,
                result_name=quote.result_name,
                result_id=quote.result_id,
                verbatim=quote.verbatim,
            )
            refusal = yield from self._approve_quoted(call, tool, quote)
        else:
            refusal = yield from self._approve_dangerous(call, tool)
        if refusal is not None:
            return refusal
        why = self._policy.rate_limits.refusal(tool)
        if why is not None:
            yield Notice(level="warning", message=f"{call.name} rate-limited: {said(why)}")
            return refused(call, "rate_limited", why)
        return None

    def _approve_dangerous(
        self, call: ToolCall, tool: Tool
    ) -> Generator[Event, None, ToolResult | None]:
        """A dangerous tool runs after a yes: --yes, "always" earlier, or the consumer's answer."""
        if not tool.dangerous or self._policy.yes or tool.name in self._policy.always:
            return None
        asked = ApprovalAsked(call=call, reason="dangerous")
        answer = yield from self._ask(asked)
        if answer == "always":
            self._policy.always.add(tool.name)
        elif answer == "declined":
            declined = asked.answered if isinstance(asked.answered, Declined) else NOBODY_TO_ASK
            yield Notice(level="warning", message=f"{call.name} not run: {declined.why}")
            unasked = declined is NOBODY_TO_ASK
            why = Problem("nobody_to_ask") if unasked else Problem("declined", detail=declined.why)
            return refused(call, "declined", why)
        elif answer == "no":
            return refused(call, "declined", Problem("user_declined"))
        return None

    def _ask(self, asked: ApprovalAsked) -> Generator[Event, None, Answer]:
        """The question, to whoever answers, then what they answered, as the round takes it
        (answer_given): the event and the decision read it alike. The time they took is kept
        as the call's wait, apart from its run (the loop keeps it out of the run's time as
        well)."""
        began = self._clock()
        yield asked
        waited = self._clock() - began
        answer = answer_given(asked)
        if answer != "declined":  # declined: nobody was there to ask, nobody waited
            self._entries[asked.call.id].approval_wait += waited
        call = asked.call
        yield ApprovalAnswered(call_id=call.id, name=call.name, answer=answer, waited=waited)
        return answer

    def _approve_quoted(
        self, call: ToolCall, tool: Tool, quote: Quote
    ) -> Generator[Event, None, ToolResult | None]:
        """A call taken from a tool result runs only if a person says yes to it, whatever
        --yes says; a yes covers this call only (no "always")."""
        asked = ApprovalAsked(
            call=call,
            reason="from_result",
            dangerous=tool.dangerous,
            result_name=quote.result_name,
            result_id=quote.result_id,
        )
        answer = yield from self._ask(asked)
        source = f"{quote.result_name} (call {quote.result_id})"
        if answer == "yes":
            return None
        if answer != "declined":  # a no ("always" is not offered for a call from a result)
            return refused(call, "declined", Problem("quoted_declined", given=source))
        if isinstance(asked.answered, Declined):
            return refused(call, "from_result", Problem("declined", detail=asked.answered.why))
        return refused(call, "from_result", Problem("from_result", given=source))

    def _answer(self, call: ToolCall, result: ToolResult) -> Iterator[Event]:
        now = self._clock()
        yield from self._finished(Finished(call, result, now, now))

    def _finished(self, finished: Finished) -> Iterator[Event]:
        call = finished.call
        entry = self._entries[call.id]
        if entry.result is not None:
            return  # answered already (a dependency failed first, say)
        # A reused result was cut when it was made; cutting it again would drop its note.
        result = finished.result
        if self._policy.dag and result.ok and not result.cached:
            # A placeholder takes what the tool returned, not the cut and notes the model reads.
            self._data.setdefault(call.id, result.content)
        result = result if result.cached else cut(result, self._limits.max_result_chars)
        if call.id in self._notes:
            result = replace(result, content=f"{result.content}\n{self._notes.pop(call.id)}")
        entry.result = result
        entry.started, entry.ended = finished.started, finished.ended
        self.results.append(result)
        if result.ok and not result.cached:
            self._cache[self._ran_as(call)] = result
        yield ToolFinished(
            call=call,
            result=result,
            started=_offset(finished.started, self._began),
            ended=_offset(finished.ended, self._began),
        )
        for waiting in self._twins.pop(call.id, []):
            self._data[waiting.id] = self._data.get(call.id, result.content)
            yield from self._answer(waiting, twin(waiting, result))
        yield from self._release()

    def _release(self) -> Iterator[Event]:
        """Start held calls whose dependencies are done; skip those whose dependency failed."""
        if self._graph is None:
            return
        progress = True
        while progress:
            progress = False
            for call_id in list(self._held):
                if call_id not in self._held:
                    continue  # answered meanwhile: answering a call releases (or skips) others
                entry = self._entries[call_id]
                failed = [d for d in entry.waits_for if _failed(self._entries[d])]
                if failed:
                    self._held.remove(call_id)
                    progress = True
                    yield from self._answer(entry.call, self._skipped(entry.call, failed[0]))
                elif all(self._entries[d].result is not None for d in entry.waits_for):
                    self._held.remove(call_id)
                    progress = True
                    yield from self._start_with_results(entry.call)

    def _start_with_results(self, call: ToolCall) -> Iterator[Event]:
        results = {
            ref: self._data.get(call_id, entry.result.content)
            for ref, call_id in (self._graph.by_ref.items() if self._graph else ())
            if (entry := self._entries[call_id]).result is not None
        }
        try:
            arguments = put_results_in(call.arguments, results)
        except (Unresolved, GraphProblem) as problem:
            unresolved = Problem("dependency_error", detail=str(problem))
            yield from self._answer(call, refused(call, "dependency_error", unresolved))
            return
        filled = replace(call, arguments=arguments)
        written = tuple(dict.fromkeys(text for text, _ in placeholders(call.arguments)))
        if written:
            yield PlaceholdersFilled(call=filled, placeholders=written)
        yield from self._start(filled)

    def _skipped(self, call: ToolCall, failed_id: str) -> ToolResult:
        failed = self._entries[failed_id]
        assert failed.result is not None
        what = (
            f"`{failed.call.ref}` ({failed.call.name})"
            if failed.call.ref
            else f"`{failed.call.name}`"
        )
        why = failed.result.content.removeprefix("Error: ")
        return refused(call, "skipped", Problem("skipped", given=what, detail=why))


def _has_placeholders(call: ToolCall) -> bool:
    return next(placeholders(call.arguments), None) is not None


def _failed(entry: _Entry) -> bool:
    return entry.result is not None and not entry.result.ok


def answer_given(asked: ApprovalAsked) -> Answer:
    """The consumer's answer as the round takes it: nothing, or a Declined, declines; "always"
    only where it was offered; anything but a yes is a no."""
    answer = asked.answered
    if answer is None or isinstance(answer, Declined):
        return "declined"
    if answer is True or answer == "yes":
        return "yes"
    return "always" if answer == "always" and asked.offers_always else "no"


def _offset(moment: float | None, began: float) -> float | None:
    return None if moment is None else max(moment - began, 0.0)


def _outcome(result: ToolResult | None) -> str:
    if result is None:
        return "unanswered"
    if result.cached:
        return "reused"
    return "ok" if result.ok else (result.error_kind or "error")


def same_value(given: Any, had: Any) -> bool:
    """A value handed back: equal, or the same number with a digit less (the model copied
    37.77777778 as 37.7777778)."""
    if isinstance(given, bool) or isinstance(had, bool):
        return False
    if isinstance(given, (int, float)) and isinstance(had, (int, float)):
        return math.isclose(given, had, rel_tol=1e-6)
    return bool(given == had)


def left_out(tool: Tool, dropped: Sequence[str]) -> str:
    """The note after a call run without the arguments its tool does not take."""
    names = ", ".join(f"`{name}`" for name in dropped)
    taken = ", ".join(f"`{name}`" for name in tool.spec.parameters.get("properties") or {})
    them = "them" if len(dropped) > 1 else "it"
    return (
        f"{ENGINE_NOTE} Ran without {names}: {tool.name} does not take {them} (it takes "
        f"{taken or 'no arguments'}). Send only those next time."
    )


def repeated(call: ToolCall, earlier: ToolResult) -> ToolResult:
    return reused(call, earlier, note("repeated_call", tool=call.name))


def twin(call: ToolCall, first: ToolResult) -> ToolResult:
    return reused(call, first, note("same_call_in_reply"))


def reused(call: ToolCall, earlier: ToolResult, note: str) -> ToolResult:
    """`earlier`'s result answering `call`, with `note` for the model after it. No `output`:
    the tool did not run (and print) this time."""
    return replace(
        earlier,
        call_id=call.id,
        content=f"{earlier.content}\n{note}",
        cached=True,
        duration=0.0,
        output="",
    )


def cut(result: ToolResult, limit: int) -> ToolResult:
    """A long result is cut before it goes back to the model; the view says so."""
    if len(result.content) <= limit:
        return result
    cut_note = note("result_cut", shown=f"{limit:,}", total=f"{len(result.content):,}")
    content = f"{result.content[:limit]}\n{cut_note}"
    return replace(result, content=content, full_length=len(result.content))


def refused(call: ToolCall, kind: str, problem: Problem) -> ToolResult:
    """The error result of a call not run, its problem naming the call's tool."""
    return error_result(call, kind, replace(problem, tool=call.name))


def parse_error_result(error: ParseError) -> ToolResult:
    """A call that could not be parsed is answered like a failed call, so the model can fix it."""
    problem = Problem("unparseable_call", given=clip(error.raw, 120), detail=error.message)
    return ToolResult(
        call_id=error.call_id,
        name="",
        content=error_text(problem),
        ok=False,
        error_kind="parse_error",
        problems=(problem,),
    )
