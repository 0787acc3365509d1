"""The tool-use loop: the only orchestration. It yields events and never prints."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field

from toolcall_cli.events import (
    Event,
    FedBack,
    FinalAnswer,
    IterationStarted,
    LimitReached,
    ModelFailed,
    ModelReplied,
    ParseError,
    ParserEvent,
    RunFinished,
    RunStarted,
    StopReason,
    ToolCallParsed,
    ToolFinished,
    ToolStarted,
)
from toolcall_cli.messages import Message, ToolCall, ToolResult, tool_message, user
from toolcall_cli.models.base import Model, ModelError
from toolcall_cli.strategies.base import Reply, Strategy
from toolcall_cli.tools.executor import execute
from toolcall_cli.tools.registry import Tool, ToolRegistry

Approver = Callable[[ToolCall, Tool], bool]
"""Asked before a dangerous tool runs; False means the user declined."""


@dataclass(frozen=True)
class Limits:
    max_iterations: int = 5
    tool_timeout: float = 10.0
    """Default per-tool timeout in seconds; a tool may declare its own."""


@dataclass
class RunStats:
    iterations: int = 0
    tool_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value


def deny_all(call: ToolCall, tool: Tool) -> bool:
    """The approver when nobody can be asked (non-interactive runs without --yes)."""
    return False


class ToolRunner:
    """Runs calls in background threads so several tools (and a still-streaming reply) overlap.

    Results are collected through a queue; the loop drains it on its own thread, so events are
    only ever yielded from the loop's generator.
    """

    def __init__(self, registry: ToolRegistry, limits: Limits, approve: Approver) -> None:
        self._registry = registry
        self._limits = limits
        self._approve = approve
        self._done: queue.Queue[tuple[ToolCall, ToolResult]] = queue.Queue()
        self._pending = 0
        self.results: list[ToolResult] = []
        """Every result collected so far, in the order they finished."""

    def start(self, call: ToolCall) -> None:
        tool = self._registry.get(call.name)
        # Approval is asked here, on the loop's thread, before anything runs.
        if tool is not None and tool.dangerous and not self._approve(call, tool):
            self._done.put((call, declined(call)))
        else:
            thread = threading.Thread(target=self._run, args=(call,), daemon=True)
            thread.start()
        self._pending += 1

    def _run(self, call: ToolCall) -> None:
        result = execute(call, self._registry, default_timeout=self._limits.tool_timeout)
        self._done.put((call, result))

    def finished(self, *, wait: bool) -> Iterator[tuple[ToolCall, ToolResult]]:
        """Results that are ready; with wait=True, every pending result."""
        while self._pending:
            try:
                item = self._done.get(block=wait, timeout=None if not wait else 0.05)
            except queue.Empty:
                if not wait:
                    return
                continue
            self._pending -= 1
            self.results.append(item[1])
            yield item


def declined(call: ToolCall) -> ToolResult:
    return ToolResult(
        call_id=call.id,
        name=call.name,
        content=f"Error: the user declined to run `{call.name}`. Answer without it.",
        ok=False,
        error_kind="declined",
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
) -> Iterator[Event]:
    """Answer one question, yielding every step. `history` is extended in place."""
    started = time.monotonic()
    stats = RunStats()
    history.append(user(question))
    yield RunStarted(
        question=question, model=model.name, strategy=strategy.name, tools=tuple(registry.names())
    )
    stop: StopReason = "limit"
    for iteration in range(1, limits.max_iterations + 1):
        stats.iterations = iteration
        outcome = yield from _iteration(iteration, model, strategy, registry, history, limits, approve, stats)
        if outcome is not None:
            stop = outcome
            break
    else:
        yield LimitReached(
            limit="iterations",
            message=f"stopped after {limits.max_iterations} iterations without a final answer",
        )
    yield RunFinished(
        stop_reason=stop,
        iterations=stats.iterations,
        tool_calls=stats.tool_calls,
        elapsed=time.monotonic() - started,
        usage=dict(stats.usage),
    )


def _iteration(
    iteration: int,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    limits: Limits,
    approve: Approver,
    stats: RunStats,
) -> Generator[Event, None, StopReason | None]:
    """One request, its tools and the feedback. Returns a stop reason when the run is over."""
    request = strategy.build_request(history, registry.specs(), model.name)
    yield IterationStarted(iteration=iteration, request=request.body)
    runner = ToolRunner(registry, limits, approve)
    parser = strategy.parser(f"call_{iteration}_")
    held: list[ParserEvent] = []
    sent = time.monotonic()
    failure: ModelError | None = None
    try:
        for chunk in model.stream(request):
            for event in parser.feed(chunk):
                yield from _on_parser_event(event, strategy, runner, held)
            if strategy.streaming:
                yield from _tool_events(runner.finished(wait=False))
    except ModelError as error:
        failure = error
    for event in parser.close():
        yield from _on_parser_event(event, strategy, runner, held)
    reply = parser.reply()
    stats.add_usage(reply.usage)
    if failure is None or reply.raw or reply.calls or reply.errors:
        # A reply cut off by a failure is still shown: the partial text and any truncated call.
        yield _replied(iteration, reply, time.monotonic() - sent)
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
    stats.tool_calls += len(reply.calls)
    results = runner.results + [parse_error_result(error) for error in reply.errors]
    fed = [tool_message(result) for result in ordered(results, reply)]
    history.extend(fed)
    yield FedBack(iteration=iteration, messages=tuple(strategy.to_wire(fed)))
    return None


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
