"""The tool-use loop: the only orchestration. It yields events and never prints or opens sockets.

Each layer assumes the model's output cannot be trusted: parse errors, bad arguments, unknown
tools and failing or hanging tools all go back to the model as results; repeated calls are
answered from the earlier result; rounds that keep failing make the model answer without tools;
and the run is bounded in iterations and time.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolcall_cli.events import (
    AnswerWithoutTools,
    Event,
    FedBack,
    FinalAnswer,
    IterationStarted,
    LimitReached,
    ModelFailed,
    ModelReplied,
    Notice,
    ParseError,
    ParserEvent,
    RunFinished,
    RunStarted,
    StopReason,
    ToolCallParsed,
    ToolFinished,
    ToolStarted,
)
from toolcall_cli.history import ENGINE_NOTE_PREFIX, windowed
from toolcall_cli.messages import Message, ToolCall, ToolResult, tool_message, user
from toolcall_cli.models.base import (
    MAX_LINE_BYTES,
    MAX_REPLY_CHARS,
    MAX_RESPONSE_BYTES,
    REQUEST_TIMEOUT,
    Model,
)
from toolcall_cli.strategies.base import Reply, Strategy
from toolcall_cli.strategies.replies import reply_chars
from toolcall_cli.tools.executor import execute
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.wire import NOTICE_KEY, ModelError

Approver = Callable[[ToolCall, Tool], bool]
"""Asked before a dangerous tool runs; False means the user declined."""

ANSWER_WITHOUT_TOOLS = ENGINE_NOTE_PREFIX + (
    " The last {n} rounds of tool calls made no progress (they failed, or repeated earlier "
    "calls). Do not call any tool now: answer the question with what you already have, and say "
    "plainly what could not be found out."
)


@dataclass(frozen=True)
class Limits:
    max_iterations: int = 5
    tool_timeout: float = 10.0
    """Default per-tool timeout in seconds; a tool may declare its own."""
    run_timeout: float | None = None
    """Seconds for the whole run: model requests, tools and all."""
    max_failed_rounds: int = 3
    """After this many tool rounds in a row without progress (every call failed or repeated
    an earlier one), tools are withdrawn and the model is told to answer."""
    max_result_chars: int = 4000
    """Longer tool results are cut before they go back to the model."""
    history_rounds: int | None = 5
    """Tool rounds sent in full; older ones are compacted into a summary. None keeps all."""
    max_question_chars: int = 8000
    max_reply_chars: int = MAX_REPLY_CHARS
    """One reply's text, counted from the chunks whatever the model: content, reasoning and
    tool-call names and arguments. Longer, and the model has failed (it is not answering)."""
    # The loop does not use these: they bound each HTTP request (see models.base), and live here
    # so that every limit has its default in one place.
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_line_bytes: int = MAX_LINE_BYTES
    request_timeout: float = REQUEST_TIMEOUT


Clock = Callable[[], float]
"""Seconds from an arbitrary start, never going back: time.monotonic, or a test's own clock."""


@dataclass
class RunState:
    """What one run remembers across its iterations."""

    limits: Limits
    clock: Clock = time.monotonic
    """What the run's time limit, its elapsed time and the model's latency are read from."""
    started: float = field(init=False)
    iterations: int = 0
    tool_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    cache: dict[tuple[str, str], ToolResult] = field(default_factory=dict)
    failed_rounds: int = 0
    tools_withdrawn: bool = False
    compacted: int = 0

    def __post_init__(self) -> None:
        self.started = self.clock()

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value

    @property
    def out_of_time(self) -> bool:
        remaining = self.remaining
        return remaining is not None and remaining <= 0

    @property
    def remaining(self) -> float | None:
        """Seconds left under --timeout, or None without a limit."""
        timeout = self.limits.run_timeout
        return None if timeout is None else timeout - (self.clock() - self.started)

    def finished(self, stop: StopReason) -> RunFinished:
        return RunFinished(
            stop_reason=stop,
            iterations=self.iterations,
            tool_calls=self.tool_calls,
            elapsed=self.clock() - self.started,
            usage=dict(self.usage),
        )


class OutOfTime(Exception):
    """The run's time limit passed while the model was still answering."""


def within_deadline(chunks: Iterator[dict[str, Any]], state: RunState) -> Iterator[dict[str, Any]]:
    """The model's chunks, never waiting past the run's time limit.

    Without a limit they are read directly. With one, the model is read in a daemon thread, so
    a request that hangs (or a stream that trickles on) is abandoned at the deadline, as a hung
    tool is; the thread ends with its request, and never keeps the process alive.
    """
    if state.limits.run_timeout is None:
        yield from chunks
        return
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()

    def pump() -> None:
        try:
            for chunk in chunks:
                inbox.put(("chunk", chunk))
            inbox.put(("end", None))
        except BaseException as error:  # handed to the loop's thread, which raises it
            inbox.put(("error", error))

    threading.Thread(target=pump, name="model-request", daemon=True).start()
    while True:
        try:
            kind, value = inbox.get(timeout=max(state.remaining or 0.0, 0.0))
        except queue.Empty:
            raise OutOfTime from None
        if kind == "end":
            return
        if kind == "error":
            raise value
        yield value


def deny_all(call: ToolCall, tool: Tool) -> bool:
    """The approver when nobody can be asked (non-interactive runs without --yes)."""
    return False


def call_key(call: ToolCall) -> tuple[str, str]:
    """Same tool and canonically equal arguments (key order and spacing do not matter)."""
    return call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)


class ToolRunner:
    """Runs calls in background threads so several tools (and a still-streaming reply) overlap.

    Results come back through a queue that the loop drains on its own thread, so events are
    only ever yielded by the loop's generator.
    """

    def __init__(self, registry: ToolRegistry, state: RunState, approve: Approver) -> None:
        self._registry = registry
        self._state = state
        self._approve = approve
        self._done: queue.Queue[tuple[ToolCall, ToolResult]] = queue.Queue()
        self._pending = 0
        self.results: list[ToolResult] = []
        """Every result collected so far, in the order they finished."""

    def start(self, call: ToolCall) -> None:
        self._pending += 1
        tool = self._registry.get(call.name)
        earlier = self._state.cache.get(call_key(call))
        if earlier is not None and tool is not None and tool.cacheable:
            self._done.put((call, repeated(call, earlier)))
        elif self._state.tools_withdrawn:
            self._done.put((call, withdrawn(call)))
        elif tool is not None and tool.dangerous and not self._approve(call, tool):
            # Approval is asked here, on the loop's thread, before anything runs.
            self._done.put((call, declined(call)))
        else:
            threading.Thread(target=self._run, args=(call,), daemon=True).start()

    def _run(self, call: ToolCall) -> None:
        try:
            result = execute(call, self._registry, default_timeout=self._state.limits.tool_timeout)
        except Exception as error:  # the executor must not raise; if it does, still answer
            why = f"{type(error).__name__}: {error}"
            result = refused(call, "tool_error", f"toolcall failed to run the call ({why})")
        # Always answered, or the loop would wait for this call forever.
        self._done.put((call, cut(result, self._state.limits.max_result_chars)))

    def finished(self, *, wait: bool) -> Iterator[tuple[ToolCall, ToolResult]]:
        """Results that are ready; with wait=True, every pending result."""
        while self._pending:
            try:
                call, result = self._done.get(block=wait, timeout=0.05 if wait else None)
            except queue.Empty:
                if wait and not self._state.out_of_time:
                    continue
                return
            self._pending -= 1
            self.results.append(result)
            if result.ok and not result.cached:
                self._state.cache[call_key(call)] = result
            yield call, result


def repeated(call: ToolCall, earlier: ToolResult) -> ToolResult:
    note = (
        f"\n[toolcall] You already called {call.name} with these arguments in this run; this is "
        "the same result. Use it instead of calling again."
    )
    # No `output`: the tool did not run (and print) this time.
    return replace(
        earlier,
        call_id=call.id,
        content=earlier.content + note,
        cached=True,
        duration=0.0,
        output="",
    )


def cut(result: ToolResult, limit: int) -> ToolResult:
    """A long result is cut before it goes back to the model; the view says so."""
    if len(result.content) <= limit:
        return result
    note = f"\n[toolcall] result cut: showing {limit:,} of {len(result.content):,} characters."
    return replace(result, content=result.content[:limit] + note, full_length=len(result.content))


def refused(call: ToolCall, kind: str, message: str) -> ToolResult:
    return ToolResult(
        call_id=call.id, name=call.name, content=f"Error: {message}", ok=False, error_kind=kind
    )


def declined(call: ToolCall) -> ToolResult:
    return refused(call, "declined", f"the user declined to run `{call.name}`. Answer without it.")


def withdrawn(call: ToolCall) -> ToolResult:
    return refused(
        call, "withdrawn", "tools are withdrawn for this run. Answer with what you have."
    )


def parse_error_result(error: ParseError) -> ToolResult:
    """A call that could not be parsed is answered like a failed call, so the model can fix it."""
    return ToolResult(
        call_id=error.call_id,
        name="",
        content=f"Error: {error.message}",
        ok=False,
        error_kind="parse_error",
    )


def run(
    question: str,
    *,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    limits: Limits = Limits(),
    approve: Approver = deny_all,
    clock: Clock = time.monotonic,
) -> Iterator[Event]:
    """Answer one question, yielding every step. `history` is extended in place.

    `clock` measures the run against its time limit; waits for the model and for tools still
    happen in real time, but how long the run has taken is only ever read from `clock`."""
    state = RunState(limits, clock)
    if len(question) > limits.max_question_chars:
        # Refused before anything echoes it: a 100 KB paste must not flood the screen first.
        yield Notice(
            level="error",
            message=f"the question is {len(question):,} characters; "
            f"the limit is {limits.max_question_chars:,}",
        )
        yield state.finished("input_rejected")
        return
    yield RunStarted(
        question=question, model=model.name, strategy=strategy.name, tools=tuple(registry.names())
    )
    history.append(user(question))
    stop = yield from _iterations(state, model, strategy, registry, history, approve)
    yield state.finished(stop)


def _iterations(
    state: RunState,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    approve: Approver,
) -> Generator[Event, None, StopReason]:
    for iteration in range(1, state.limits.max_iterations + 1):
        if state.out_of_time:
            break
        state.iterations = iteration
        outcome = yield from _iteration(
            iteration, state, model, strategy, registry, history, approve
        )
        if outcome is not None:
            return outcome
        yield from _check_failures(state, history)
    if state.out_of_time:
        yield LimitReached(
            limit="timeout", message=f"the run took longer than {state.limits.run_timeout:g} s"
        )
    else:
        yield LimitReached(
            limit="iterations",
            message=f"stopped after {state.limits.max_iterations} iteration(s) "
            "without a final answer",
        )
    return "limit"


def _check_failures(state: RunState, history: list[Message]) -> Iterator[Event]:
    if state.tools_withdrawn or state.failed_rounds < state.limits.max_failed_rounds:
        return
    state.tools_withdrawn = True
    message = ANSWER_WITHOUT_TOOLS.format(n=state.failed_rounds)
    history.append(user(message))
    yield AnswerWithoutTools(failed_rounds=state.failed_rounds, message=message)


def _request_history(state: RunState, history: list[Message]) -> tuple[list[Message], list[Event]]:
    sent, compacted = windowed(history, state.limits.history_rounds)
    notices: list[Event] = []
    if compacted > state.compacted:
        notices.append(
            Notice(
                message=f"history window: {compacted} older tool round(s) sent as a short summary"
            )
        )
    state.compacted = compacted
    return sent, notices


def _iteration(
    iteration: int,
    state: RunState,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    approve: Approver,
) -> Generator[Event, None, StopReason | None]:
    """One request, its tools and the feedback. Returns a stop reason when the run is over."""
    sent_history, notices = _request_history(state, history)
    yield from notices
    specs = [] if state.tools_withdrawn else registry.specs()
    request = strategy.build_request(sent_history, specs, model.name)
    yield IterationStarted(iteration=iteration, request=request.body)
    runner = ToolRunner(registry, state, approve)
    parser = strategy.parser(f"call_{iteration}_")
    held: list[ParserEvent] = []
    sent = state.clock()
    failure: ModelError | None = None
    timed_out = False
    size = 0
    try:
        for chunk in within_deadline(model.stream(request), state):
            if NOTICE_KEY in chunk:
                yield Notice(level="warning", message=str(chunk[NOTICE_KEY]))
                continue
            size += reply_chars(chunk)
            if size > state.limits.max_reply_chars:
                raise reply_too_long(state.limits.max_reply_chars)
            for event in parser.feed(chunk):
                yield from _on_parser_event(event, strategy, runner, held)
            if strategy.streaming:
                yield from _tool_events(runner.finished(wait=False))
    except ModelError as error:
        failure = error
    except OutOfTime:
        timed_out = True
    except Exception as error:  # a model (or its parser) that breaks is a failed model, not a crash
        failure = ModelError(f"the model failed: {type(error).__name__}: {error}", kind="internal")
    for event in parser.close():
        yield from _on_parser_event(event, strategy, runner, held)
    reply = parser.reply()
    state.add_usage(reply.usage)
    if failure is None or reply.raw or reply.calls or reply.errors:
        # A reply cut off by a failure is still shown: the partial text and any truncated call.
        yield _replied(iteration, reply, state.clock() - sent)
    if timed_out:
        limit = state.limits.run_timeout or 0.0
        yield LimitReached(limit="timeout", message=f"the run took longer than {limit:g} s")
        return "limit"
    if failure is not None:
        yield from (event for event in held if isinstance(event, ParseError))
        # Tools a streaming reply already started run on in daemon threads; nothing waits on
        # them, and the partial reply is not added to the history, so the next turn is sound.
        yield ModelFailed(message=str(failure), error_kind=failure.kind)
        return "model_failed"
    history.append(assistant_message(reply))
    yield from _start_held(held, runner)
    if not reply.calls and not reply.errors:
        yield FinalAnswer(text=reply.text)
        return "answered"
    yield from _tool_events(runner.finished(wait=True))
    yield from _feed_back(iteration, state, strategy, history, runner, reply)
    return None


def reply_too_long(limit: int) -> ModelError:
    return ModelError(
        f"the reply passed {limit:,} characters (text, reasoning and tool-call arguments); "
        "--max-reply-chars raises the cap",
        kind="too_large",
    )


def _feed_back(
    iteration: int,
    state: RunState,
    strategy: Strategy,
    history: list[Message],
    runner: ToolRunner,
    reply: Reply,
) -> Iterator[Event]:
    state.tool_calls += len(reply.calls)
    missing = {c.id for c in reply.calls} - {r.call_id for r in runner.results}
    unfinished = [
        refused(c, "timeout", "the run's time limit was reached before this tool finished.")
        for c in reply.calls
        if c.id in missing
    ]
    results = runner.results + unfinished + [parse_error_result(e) for e in reply.errors]
    for result in results:
        if result.full_length is not None:
            yield Notice(
                message=f"result of {result.name} cut from {result.full_length:,} to "
                f"{state.limits.max_result_chars:,} characters before it was fed back"
            )
    # A round where every call failed, or only repeated an earlier call, made no progress.
    stuck = all(not r.ok or r.cached for r in results)
    state.failed_rounds = state.failed_rounds + 1 if stuck else 0
    fed = [tool_message(result) for result in ordered(results, reply)]
    history.extend(fed)
    yield FedBack(iteration=iteration, messages=tuple(strategy.to_wire(fed)))


def _replied(iteration: int, reply: Reply, latency: float) -> ModelReplied:
    return ModelReplied(
        iteration=iteration,
        raw=reply.raw,
        text=reply.text,
        reasoning=reply.reasoning,
        finish_reason=reply.finish_reason,
        latency=latency,
        usage=reply.usage,
    )


def _start_held(held: list[ParserEvent], runner: ToolRunner) -> Iterator[Event]:
    """For non-streaming strategies: show the parsed calls after the raw output, then run them."""
    for event in held:
        yield event
        if isinstance(event, ToolCallParsed):
            runner.start(event.call)
            yield ToolStarted(call=event.call)


def _on_parser_event(
    event: ParserEvent, strategy: Strategy, runner: ToolRunner, held: list[ParserEvent]
) -> Iterator[Event]:
    """Streaming strategies show everything live and start tools at once; others wait for the
    whole reply, so their calls are shown (and run) after the raw output."""
    if not strategy.streaming:
        if isinstance(event, (ToolCallParsed, ParseError)):
            held.append(event)
        return
    yield event
    if isinstance(event, ToolCallParsed):
        runner.start(event.call)
        yield ToolStarted(call=event.call)


def _tool_events(finished: Iterator[tuple[ToolCall, ToolResult]]) -> Iterator[Event]:
    for call, result in finished:
        yield ToolFinished(call=call, result=result)


def ordered(results: Sequence[ToolResult], reply: Reply) -> list[ToolResult]:
    """Results in the order the model made the calls, whatever order they finished in."""
    position = {call.id: i for i, call in enumerate(reply.calls)}
    position.update({e.call_id: len(position) + i for i, e in enumerate(reply.errors)})
    return sorted(results, key=lambda r: position.get(r.call_id, len(position)))


def assistant_message(reply: Reply) -> Message:
    if reply.native is not None:
        return Message(
            role="assistant",
            content=reply.native.get("content"),
            tool_calls=reply.calls,
            reasoning=reply.reasoning or None,
            extra={"tool_calls": reply.native.get("tool_calls") or []},
        )
    return Message(
        role="assistant",
        content=reply.raw if reply.raw else None,
        tool_calls=reply.calls,
        reasoning=reply.reasoning or None,
    )
