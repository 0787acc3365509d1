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

from toolcall_cli.answers import NotAnAnswer, engine_notes, judge, tool_errors
from toolcall_cli.choosing import Choosing, Retrieval
from toolcall_cli.events import (
    AnswerWithoutTools,
    Event,
    FedBack,
    FinalAnswer,
    IterationStarted,
    LimitReached,
    ModelChunk,
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
from toolcall_cli.history import (
    ANSWER_RESULT_CHARS,
    ENGINE_NOTE_PREFIX,
    PREVIEW_CHARS,
    fitted,
    windowed,
)
from toolcall_cli.limits import Limits as Limits  # re-exported: callers take it from here
from toolcall_cli.messages import Message, ToolCall, ToolResult, ToolSpec, tool_message, user
from toolcall_cli.models.base import (
    Model,
    context_window_of,
)
from toolcall_cli.rounds import (
    Approver,
    Decision,
    Declined,
    Edited,
    Round,
    StepAction,
    Stepper,
    StepQuit,
    ToolPolicy,
    deny_all,
    refused,
)
from toolcall_cli.strategies.base import Reply, Strategy
from toolcall_cli.strategies.content_calls import read_content_calls
from toolcall_cli.strategies.prompt import CALL_CLOSE, CALL_OPEN
from toolcall_cli.strategies.replies import check_depth, reply_chars
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.wire import NOTICE_KEY, ContextWindow, ModelError, ModelRequest
from toolcall_cli.wire.tokens import request_tokens

__all__ = [
    "Approver",
    "Decision",
    "Declined",
    "Edited",
    "Limits",
    "StepAction",
    "Stepper",
    "ToolPolicy",
    "deny_all",
    "run",
]

STOPPED_AT_A_STEP = "stopped by the user at a step (--step)"

LAST_ANSWER = ENGINE_NOTE_PREFIX + (
    " That was the last round of tools this run allows. Do not call any tool: answer the "
    "question now with what you have; if something is missing, say what."
)

CONTENT_CALLS = (
    "the model wrote its tool call as JSON text in its content; read as a call, as vLLM and "
    "Ollama do for several model families"
)

DROPPED_CALLS = ENGINE_NOTE_PREFIX + (
    " Your reply held {total} tool calls; only the first {cap} were run (at most {cap} per "
    "reply), and the other {dropped} were not run. Call again only what you still need."
)

ANSWER_WITHOUT_TOOLS = ENGINE_NOTE_PREFIX + (
    " The last {n} rounds of tool calls made no progress (they failed, or repeated earlier "
    "calls). Do not call any tool now: answer the question with what you already have; if "
    "something is missing, say what."
)

ANSWER_AFTER_REPEATS = ENGINE_NOTE_PREFIX + (
    " You called {calls} again, and got the result you already had. Do not call any tool now: "
    "answer the question with the results above."
)


REPLY_ROOM = 512
"""Tokens kept free for the reply when the request sets no max_tokens (or a quarter of the
window, if that is less)."""
RETRY_SQUEEZE = 0.75
"""After the server said a request was too long, requests are fitted into this share of the
budget for the rest of the run: the estimate was evidently short."""


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
    step: Stepper | None = None
    """--step: pauses before each model request and each tool execution."""
    started: float = field(init=False)
    iterations: int = 0
    tool_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    cache: dict[tuple[str, str], ToolResult] = field(default_factory=dict)
    failed_rounds: int = 0
    repeated_rounds: int = 0
    """Rounds in a row whose every call repeated an earlier one (its result reused)."""
    repeated_calls: tuple[str, ...] = ()
    """The tools the last such round called again, for the note that withdraws the tools."""
    tools_withdrawn: bool = False
    compacted: int = 0
    window: ContextWindow | None = None
    window_known: bool = False
    """Whether the window was looked for yet (it is looked for once, at the first request)."""
    token_scale: float = 1.0
    """How many of the server's tokens one estimated token proved to be (from its usage and
    its errors); never below 1."""
    squeeze: float = 1.0
    last_estimate: int = 0
    question: str = ""
    first_message: int = 0
    """Where this run's messages begin in the history (a chat holds earlier runs)."""
    call_ids: set[str] = field(default_factory=set)
    """Every call id of this run so far: a model copies one as a tool name, or as its answer."""
    choosing: Choosing | None = None
    """--retrieve: which tools each request carries (None: all of them)."""

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
    step: Stepper | None = None,
    retrieval: Retrieval | None = None,
) -> Iterator[Event]:
    """Answer one question, yielding every step. `history` is extended in place.

    `policy` is how the session runs tools (and what it remembers of approvals and rate limits
    across runs). `clock` measures the run and its tools; waits still happen in real time, but
    how long anything took is only ever read from `clock`. `step` pauses the run before each
    model request and each tool execution (--step); the user may stop it there. `retrieval`
    chooses the tools each request carries when there are many (--retrieve)."""
    state = RunState(limits, clock, policy or ToolPolicy(), approve, step)
    state.question, state.first_message = question, len(history)
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
    if retrieval is not None:
        state.choosing = Choosing(retrieval, registry)
        registry = state.choosing.registry  # with search_tools, when not every tool is sent
    try:
        stop = yield from _iterations(state, model, strategy, registry, history)
    except StepQuit:
        # What the round had started was stopped as the exception passed through it.
        yield Notice(level="warning", message=STOPPED_AT_A_STEP)
        stop = "interrupted"
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
    if state.tools_withdrawn:
        return
    repeating = state.repeated_rounds >= state.limits.max_repeated_rounds
    if not repeating and state.failed_rounds < state.limits.max_failed_rounds:
        return
    state.tools_withdrawn = True
    if repeating:
        calls = ", ".join(state.repeated_calls) or "the same tools"
        message = ANSWER_AFTER_REPEATS.format(calls=calls)
    else:
        message = ANSWER_WITHOUT_TOOLS.format(n=state.failed_rounds)
    history.append(user(message))
    yield AnswerWithoutTools(failed_rounds=state.failed_rounds, message=message, repeated=repeating)


def _rounds_sent_in_full(state: RunState) -> int | None:
    """How many recent tool rounds go in full (None: all). 0 once tools are withdrawn (the last
    request at the limit, or after rounds without progress): then every round goes as the
    summary, so the model reads its results as data and sees no call of its own to continue. A
    small model shown its calls kept writing calls, even with no tools offered."""
    return 0 if state.tools_withdrawn else state.limits.history_rounds


def _summary_result_chars(state: RunState) -> int:
    """How much of each result the summary keeps: all it can once tools are withdrawn, when the
    summary is what the model answers from."""
    return ANSWER_RESULT_CHARS if state.tools_withdrawn else PREVIEW_CHARS


def _request_history(state: RunState, history: list[Message]) -> tuple[list[Message], list[Event]]:
    sent, compacted = windowed(history, _rounds_sent_in_full(state), _summary_result_chars(state))
    notices: list[Event] = []
    if compacted > state.compacted:
        notices.append(
            Notice(
                message=f"history window: {compacted} older tool round(s) sent as a short summary"
            )
        )
    state.compacted = compacted
    return sent, notices


def _learn_window(state: RunState, model: Model) -> Iterator[Event]:
    """The window, once per run: the user's, else the model's (an HTTP model asks its server
    once per session); shown when known."""
    if state.window_known:
        return
    state.window_known = True
    state.window = state.limits.context_window or context_window_of(model)
    if state.window is not None:
        yield Notice(
            message=f"context window {state.window.tokens:,} tokens (from {state.window.source})"
        )


def reply_room(window: int, body: dict[str, Any]) -> int:
    """Tokens kept for the reply: the request's own max_tokens, else a quarter of the window or
    REPLY_ROOM, whichever is less."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, window)
    return min(window // 4, REPLY_ROOM)


def _request(
    state: RunState,
    model: Model,
    strategy: Strategy,
    history: list[Message],
    specs: list[ToolSpec],
) -> Generator[Event, None, ModelRequest]:
    """The request for this iteration, its history windowed and, when the context window is
    known, fitted into it; with notices for what was done to fit it."""
    sent_history, notices = _request_history(state, history)
    yield from notices
    request = strategy.build_request(sent_history, specs, model.name)
    state.last_estimate = request_tokens(request.body)
    window = state.window
    if window is None:
        return request
    budget = int((window.tokens - reply_room(window.tokens, request.body)) * state.squeeze)
    if state.last_estimate * state.token_scale <= budget:
        return request

    def measure(messages: list[Message]) -> int:
        body = strategy.build_request(messages, specs, model.name).body
        return int(request_tokens(body) * state.token_scale)

    fit = fitted(
        history, _rounds_sent_in_full(state), budget, measure, _summary_result_chars(state)
    )
    request = strategy.build_request(fit.messages, specs, model.name)
    state.last_estimate = request_tokens(request.body)
    yield _fit_notice(window, fit.compacted - state.compacted, fit.cut, fit.fits, fit.tokens)
    return request


def _fit_notice(
    window: ContextWindow, summarised: int, cut: int, fits: bool, tokens: int
) -> Notice:
    done = [f"{summarised} older round(s) summarised"] if summarised > 0 else []
    done += [f"{cut} result(s) cut"] if cut else []
    what = ", ".join(done) or "nothing left to compact"
    if fits:
        return Notice(message=f"fitted the request into the {window.tokens:,}-token window: {what}")
    return Notice(
        level="warning",
        message=f"the request (about {tokens:,} tokens) does not fit the {window.tokens:,}-token "
        f"window even compacted ({what}): sent anyway",
    )


def _shrink_after(state: RunState, error: ModelError) -> Notice:
    """Learn from the server's "too long" what the next try must fit into, and say so."""
    estimate = max(state.last_estimate, 1)
    if error.prompt_tokens:
        state.token_scale = max(state.token_scale, min(error.prompt_tokens / estimate, 8.0))
    told = error.window
    if told is not None and (state.window is None or told < state.window.tokens):
        state.window = ContextWindow(told, "the server's error")
    elif state.window is None:
        # No number at all: aim well below what was just refused.
        state.window = ContextWindow(
            int(estimate * state.token_scale) + REPLY_ROOM, "the server's error"
        )
    state.squeeze = min(state.squeeze, RETRY_SQUEEZE)
    numbers = ""
    if error.prompt_tokens and error.window:
        numbers = f" ({error.prompt_tokens:,} > {error.window:,} tokens)"
    elif error.window:
        numbers = f" (the window is {error.window:,} tokens)"
    return Notice(
        level="warning",
        message=f"the server said the request was too long{numbers}: compacted and retried",
    )


def _learn_scale(state: RunState, usage: dict[str, int]) -> None:
    """A server's own count of the last prompt corrects the estimate for later requests."""
    counted = usage.get("prompt_tokens")
    if isinstance(counted, int) and state.last_estimate > 0 and counted > state.last_estimate:
        state.token_scale = max(state.token_scale, min(counted / state.last_estimate, 8.0))


def _iteration(
    iteration: int,
    state: RunState,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    *,
    last: bool = False,
    retried: bool = False,
) -> Generator[Event, None, StopReason | None]:
    """One request, its tools and the feedback. Returns a stop reason when the run is over.

    `last`: the best-effort request at the limit; its answer is final whatever it says, and
    no call it makes runs. `retried`: this request is the one retry after the server said the
    last was too long for its context window."""
    yield from _learn_window(state, model)
    specs, chosen = _specs(iteration, state, registry, history)
    request = yield from _request(state, model, strategy, history, specs)
    yield IterationStarted(iteration=iteration, request=request.body)
    yield from chosen
    if state.step is not None and state.step.before_request(iteration, request.body) == "quit":
        raise StepQuit
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
        max_calls=state.limits.max_calls_per_reply,
        earlier_ids=state.call_ids,
        step=state.step,
    )
    try:
        return (
            yield from _reply_and_round(
                iteration,
                state,
                model,
                strategy,
                registry,
                history,
                request,
                round_,
                last=last,
                retried=retried,
            )
        )
    except BaseException:
        # Ctrl-C, the reader gone (GeneratorExit) or a bug: nothing the round started may
        # outlive the run. An isolated tool runs in its own session, out of reach of the
        # terminal's Ctrl-C, so it is killed here or not at all.
        round_.abandon()
        raise


def _specs(
    iteration: int, state: RunState, registry: ToolRegistry, history: list[Message]
) -> tuple[list[ToolSpec], list[Event]]:
    """The tools this request carries, and (under --retrieve) the events that show the choice."""
    if state.tools_withdrawn:
        return [], []
    if state.choosing is None or not state.choosing.on:
        return registry.specs(), []
    return state.choosing.choose(iteration, state.question, history[: state.first_message])


def _reply_and_round(
    iteration: int,
    state: RunState,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    request: ModelRequest,
    round_: Round,
    *,
    last: bool,
    retried: bool,
) -> Generator[Event, None, StopReason | None]:
    """The model's reply to `request`, the calls it makes run as `round_`, and the feedback."""
    # Ids like `#2.0`: `call_2_0` looked enough like a function name that a small model called
    # it. They are still valid as OpenAI tool_call_ids and in a <tool_result id="..."> tag.
    prefix = f"#{iteration}."
    parser = strategy.parser(prefix)
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
            check_depth(chunk)  # before any part of it is recorded or parsed
            if request.streaming:
                yield model_chunk(iteration, chunk)
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
    _learn_scale(state, reply.usage)
    if failure is None or reply.raw or reply.calls or reply.errors:
        # A reply cut off by a failure is still shown: the partial text and any truncated call.
        yield _replied(iteration, reply, state.clock() - sent)
    if timed_out or failure is not None:
        round_.abandon()  # calls a streamed reply started: isolated ones are killed
    if timed_out:
        limit = state.limits.run_timeout or 0.0
        yield LimitReached(limit="timeout", message=f"the run took longer than {limit:g} s")
        return "limit"
    if failure is not None and failure.kind == "context_length" and not retried and size == 0:
        # The server refused the request before answering: compact harder and try once more.
        yield _shrink_after(state, failure)
        return (
            yield from _iteration(
                iteration, state, model, strategy, registry, history, last=last, retried=True
            )
        )
    if failure is not None:
        yield from (event for event in held if isinstance(event, ParseError))
        # The partial reply is not added to the history, so the next turn is sound.
        yield ModelFailed(message=str(failure), error_kind=failure.kind)
        return "model_failed"
    if said_nothing(reply):
        yield ModelFailed(message=SAID_NOTHING, error_kind="protocol")
        return "model_failed"
    content = read_content_calls(reply, prefix, registry.names())
    if content.read:
        yield Notice(level="warning", message=CONTENT_CALLS)
        held.extend(ToolCallParsed(call=call) for call in content.reply.calls)
    reply, dropped = capped(content.reply, state.limits.max_calls_per_reply)
    state.call_ids.update([c.id for c in reply.calls] + [e.call_id for e in reply.errors])
    history.append(assistant_message(reply))
    verdict = _judge(state, registry, history, reply.text, content.unreadable)
    if last:
        return (yield from _best_effort(reply, held, verdict))
    if state.choosing is not None:
        yield from state.choosing.calls_made(reply.calls)
    yield from _start_held(held, round_)
    yield from round_.reply_ended()
    if not reply.calls and not reply.errors:
        if verdict is not None:
            yield from _not_an_answer(verdict, state, history)
            return None
        yield FinalAnswer(text=reply.text)
        return "answered"
    yield from round_.finish(deadline=lambda: state.remaining)
    yield from _feed_back(iteration, state, strategy, history, round_, reply, dropped)
    return None


def _judge(
    state: RunState,
    registry: ToolRegistry,
    history: list[Message],
    text: str,
    unreadable: str | None,
) -> NotAnAnswer | None:
    return judge(
        text,
        question=state.question,
        tools=registry.names(),
        call_ids=state.call_ids,
        notes=list(engine_notes(history[state.first_message :])),
        unreadable=unreadable,
        errors=list(tool_errors(history[state.first_message :])),
    )


def _not_an_answer(
    verdict: NotAnAnswer, state: RunState, history: list[Message]
) -> Iterator[Event]:
    """A reply that is not an answer never ends the run: the model is told what was wrong, and
    the round counts as one without progress."""
    yield Notice(
        level="warning", message=f"the model's reply was not an answer: {verdict.why}; told it so"
    )
    history.append(user(verdict.feedback(tools=not state.tools_withdrawn)))
    state.failed_rounds += 1


def _best_effort(
    reply: Reply, held: list[ParserEvent], verdict: NotAnAnswer | None
) -> Generator[Event, None, StopReason]:
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
    if verdict is None:
        yield FinalAnswer(text=reply.text, best_effort=True)
    else:
        yield Notice(
            level="warning",
            message=f"the last request without tools gave no answer: {verdict.why}",
        )
    return "limit"


SAID_NOTHING = "the model's answer held nothing: no text, no tool call, no finish reason"
REPLY_TOO_LONG = "the reply passed {limit:,} characters"


def reply_too_long(limit: int) -> ModelError:
    return ModelError(
        REPLY_TOO_LONG.format(limit=limit)
        + " (text, reasoning and tool-call arguments); --max-reply-chars raises the cap",
        kind="too_large",
    )


def judged_by_the_loop(message: str) -> bool:
    """Whether a model failure's message is the loop's own verdict on what the model sent (an
    empty answer, a reply past --max-reply-chars) rather than the model failing to answer: a
    recorded reply played back again meets the verdict again, under the limits of the day."""
    prefix = REPLY_TOO_LONG.split("{", 1)[0]
    return message == SAID_NOTHING or message.startswith(prefix)


def _feed_back(
    iteration: int,
    state: RunState,
    strategy: Strategy,
    history: list[Message],
    round_: Round,
    reply: Reply,
    dropped: int = 0,
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
    # A round that only asked again for what the model has is counted apart: it ends sooner.
    repeats = [r for r in results if r.cached or r.error_kind == "repeated"]
    if results and len(repeats) == len(results):
        state.repeated_rounds += 1
        state.repeated_calls = tuple(dict.fromkeys(f"`{r.name}`" for r in repeats if r.name))
    else:
        state.repeated_rounds = 0
    answered = ordered(results, reply)
    if dropped and answered:
        cap = state.limits.max_calls_per_reply
        yield Notice(
            level="warning",
            message=f"{dropped} call(s) past the cap of {cap} calls per reply were not run "
            "(--max-calls-per-reply); the model is told so in one note",
        )
        # One note on the last result, not a result per dropped call: a 119-call reply must not
        # flood the next request. The recorded reply keeps only the calls that ran (see
        # capped), so in native calling every tool_call_id sent is still answered.
        note = DROPPED_CALLS.format(total=len(reply.calls) + dropped, cap=cap, dropped=dropped)
        last = answered[-1]
        answered[-1] = replace(last, content=f"{last.content}\n{note}")
    fed = [tool_message(result) for result in answered]
    history.extend(fed)
    yield FedBack(iteration=iteration, messages=tuple(strategy.to_wire(fed)))


def model_chunk(iteration: int, chunk: dict[str, Any]) -> ModelChunk:
    """A streamed chunk as an event, for the trace: its first choice's delta as sent. A chunk
    of an odd shape gives what can be read of it (the parser is the one that rejects it)."""
    choices = chunk.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    choice = choice if isinstance(choice, dict) else {}
    delta = choice.get("delta")
    finish = choice.get("finish_reason")
    usage = chunk.get("usage")
    return ModelChunk(
        iteration=iteration,
        delta=delta if isinstance(delta, dict) else {},
        finish_reason=finish if isinstance(finish, str) else None,
        usage=usage if isinstance(usage, dict) else None,
    )


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


def capped(reply: Reply, cap: int) -> tuple[Reply, int]:
    """The reply with only its first `cap` calls (broken ones after whole ones), and how many
    were dropped. The history records this reply, so the next request neither echoes nor has to
    answer the calls that never ran."""
    calls = reply.calls[:cap]
    errors = reply.errors[: max(cap - len(calls), 0)]
    dropped = len(reply.calls) + len(reply.errors) - len(calls) - len(errors)
    if not dropped:
        return reply, 0
    if reply.native is not None:
        kept = {c.id for c in calls} | {e.call_id for e in errors}
        wire = [c for c in reply.native.get("tool_calls") or [] if c.get("id") in kept]
        native = {**reply.native, "tool_calls": wire}
        return replace(reply, calls=calls, errors=errors, native=native), dropped
    written = [reply.text, *(call_text(c) for c in calls), *(e.raw for e in errors)]
    raw = "\n".join(part for part in written if part.strip())
    return replace(reply, raw=raw, calls=calls, errors=errors), dropped


def call_text(call: ToolCall) -> str:
    """A call as the text protocol writes it."""
    body: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.ref:
        body = {"id": call.ref, **body}
    if call.depends_on:
        body["depends_on"] = list(call.depends_on)
    return f"{CALL_OPEN}{json.dumps(body, ensure_ascii=False)}{CALL_CLOSE}"


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
