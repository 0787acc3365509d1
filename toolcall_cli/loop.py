"""The tool-use loop: the only orchestration. It yields events and never prints or opens sockets.

Each layer assumes the model's output cannot be trusted: parse errors, bad arguments, unknown
tools and failing or hanging tools all go back to the model as results; repeated calls are
answered from the earlier result; rounds that keep failing make the model answer without tools;
and the run is bounded in iterations and time.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
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
)
from toolcall_cli.history import ENGINE_NOTE_PREFIX, windowed
from toolcall_cli.messages import Message, ToolResult, tool_message, user
from toolcall_cli.models.base import (
    MAX_LINE_BYTES,
    MAX_REPLY_CHARS,
    MAX_RESPONSE_BYTES,
    REQUEST_TIMEOUT,
    Model,
)
from toolcall_cli.rounds import Approver, Decision, Declined, Round, ToolPolicy, deny_all, refused
from toolcall_cli.strategies.base import Reply, Strategy
from toolcall_cli.strategies.replies import reply_chars
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.wire import NOTICE_KEY, ModelError

__all__ = ["Approver", "Decision", "Declined", "Limits", "ToolPolicy", "deny_all", "run"]

LAST_ANSWER = ENGINE_NOTE_PREFIX + (
    " That was the last round of tools this run allows. Do not call any tool: answer the "
    "question now with what you have, and say plainly what you could not find out."
)

EMPTY_REPLY = ENGINE_NOTE_PREFIX + (
    " Your reply was empty. Answer the user's question, or call a tool if you need one."
)

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
    last_answer: bool = True
    """At the iteration limit, one more request without tools, for a best-effort answer."""
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
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    approve: Approver = deny_all
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
    policy: ToolPolicy | None = None,
    clock: Clock = time.monotonic,
) -> Iterator[Event]:
    """Answer one question, yielding every step. `history` is extended in place.

    `policy` is how the session runs tools (and what it remembers of approvals and rate limits
    across runs). `clock` measures the run and its tools; waits still happen in real time, but
    how long anything took is only ever read from `clock`."""
    state = RunState(limits, clock, policy or ToolPolicy(), approve)
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
        question=question,
        model=model.name,
        strategy=strategy.name,
        tools=tuple(registry.names()),
        sampling=strategy.sampling.fields(),
    )
    history.append(user(question))
    stop = yield from _iterations(state, model, strategy, registry, history)
    yield state.finished(stop)


def _iterations(
    state: RunState,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
) -> Generator[Event, None, StopReason]:
    for iteration in range(1, state.limits.max_iterations + 1):
        if state.out_of_time:
            break
        state.iterations = iteration
        outcome = yield from _iteration(iteration, state, model, strategy, registry, history)
        if outcome is not None:
            return outcome
        yield from _check_failures(state, history)
    if state.out_of_time:
        yield LimitReached(
            limit="timeout", message=f"the run took longer than {state.limits.run_timeout:g} s"
        )
        return "limit"
    yield LimitReached(
        limit="iterations",
        message=f"stopped after {state.limits.max_iterations} iteration(s) without a final answer",
    )
    if state.limits.last_answer:
        yield from _last_answer(state, model, strategy, registry, history)
    return "limit"


def _last_answer(
    state: RunState,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
) -> Iterator[Event]:
    """One more request, without tools, so the user gets a best-effort answer, marked as such
    (smolagents does the same at max_steps). The run still ends at its limit (exit code 3)."""
    history.append(user(LAST_ANSWER))
    state.tools_withdrawn = True
    state.iterations += 1
    yield from _iteration(state.iterations, state, model, strategy, registry, history, last=True)


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
    *,
    last: bool = False,
) -> Generator[Event, None, StopReason | None]:
    """One request, its tools and the feedback. Returns a stop reason when the run is over.

    `last`: the best-effort request at the limit; its answer is final whatever it says, and
    no call it makes runs."""
    sent_history, notices = _request_history(state, history)
    yield from notices
    specs = [] if state.tools_withdrawn else registry.specs()
    request = strategy.build_request(sent_history, specs, model.name)
    yield IterationStarted(iteration=iteration, request=request.body)
    round_ = Round(
        registry=registry,
        cache=state.cache,
        policy=state.policy,
        approve=state.approve,
        tool_timeout=state.limits.tool_timeout,
        max_result_chars=state.limits.max_result_chars,
        withdrawn=state.tools_withdrawn,
        whole_reply=not strategy.streaming,
        clock=state.clock,
    )
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
                yield from _on_parser_event(event, strategy, round_, held, last)
            if strategy.streaming:
                yield from round_.ready()
    except ModelError as error:
        failure = error
    except OutOfTime:
        timed_out = True
    except Exception as error:  # a model (or its parser) that breaks is a failed model, not a crash
        failure = ModelError(f"the model failed: {type(error).__name__}: {error}", kind="internal")
    for event in parser.close():
        yield from _on_parser_event(event, strategy, round_, held, last)
    reply = parser.reply()
    state.add_usage(reply.usage)
    if failure is None or reply.raw or reply.calls or reply.errors:
        # A reply cut off by a failure is still shown: the partial text and any truncated call.
        yield _replied(iteration, reply, state.clock() - sent)
    if timed_out or failure is not None:
        round_.abandon()  # calls a streamed reply started: isolated ones are killed
    if timed_out:
        limit = state.limits.run_timeout or 0.0
        yield LimitReached(limit="timeout", message=f"the run took longer than {limit:g} s")
        return "limit"
    if failure is not None:
        yield from (event for event in held if isinstance(event, ParseError))
        # The partial reply is not added to the history, so the next turn is sound.
        yield ModelFailed(message=str(failure), error_kind=failure.kind)
        return "model_failed"
    if said_nothing(reply):
        yield ModelFailed(
            message="the model's answer held nothing: no text, no tool call, no finish reason",
            error_kind="protocol",
        )
        return "model_failed"
    history.append(assistant_message(reply))
    if last:
        return (yield from _best_effort(reply, held))
    yield from _start_held(held, round_)
    yield from round_.reply_ended()
    if not reply.calls and not reply.errors:
        if not reply.text.strip():
            # An empty reply is not an answer: say so to the model, and let it try again.
            yield Notice(level="warning", message="the model's reply was empty: told it so")
            history.append(user(EMPTY_REPLY))
            return None
        yield FinalAnswer(text=reply.text)
        return "answered"
    yield from round_.finish(deadline=lambda: state.remaining)
    yield from _feed_back(iteration, state, strategy, history, round_, reply)
    return None


def _best_effort(reply: Reply, held: list[ParserEvent]) -> Generator[Event, None, StopReason]:
    """The answer of the last request, marked best-effort; calls it makes anyway are shown and
    not run."""
    yield from held
    if reply.calls:
        yield Notice(
            level="warning",
            message="the model asked for tools in its last reply; none were run",
        )
    elif reply.errors:
        yield Notice(
            level="warning", message="the model's last reply could not be read; none of it was run"
        )
    if reply.text.strip():
        yield FinalAnswer(text=reply.text, best_effort=True)
    else:
        yield Notice(level="warning", message="the last request without tools gave no answer")
    return "limit"


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
    round_: Round,
    reply: Reply,
) -> Iterator[Event]:
    state.tool_calls += len(reply.calls)
    unfinished = [
        refused(c, "timeout", "the run's time limit was reached before this tool finished.")
        for c in round_.unanswered()
    ]
    results = round_.results + unfinished + [parse_error_result(e) for e in reply.errors]
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


def said_nothing(reply: Reply) -> bool:
    """A reply with no choice in it at all (events that carry none, or `choices: [{}]`): a
    server that sent no answer, not a model that answered with nothing."""
    empty = not reply.text.strip() and not reply.calls and not reply.errors
    return empty and not reply.reasoning and reply.finish_reason is None


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


def _start_held(held: list[ParserEvent], round_: Round) -> Iterator[Event]:
    """For non-streaming strategies: show the parsed calls after the raw output, then run them."""
    for event in held:
        yield event
        if isinstance(event, ToolCallParsed):
            yield from round_.add(event.call)


def _on_parser_event(
    event: ParserEvent, strategy: Strategy, round_: Round, held: list[ParserEvent], last: bool
) -> Iterator[Event]:
    """Streaming strategies show everything live and start tools at once; others wait for the
    whole reply, so their calls are shown (and run) after the raw output. In the last request
    at the limit, nothing runs."""
    if not strategy.streaming:
        if isinstance(event, (ToolCallParsed, ParseError)):
            held.append(event)
        return
    yield event
    if isinstance(event, ToolCallParsed) and not last:
        yield from round_.add(event.call)


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
