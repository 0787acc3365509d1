"""The tool-use loop: the only orchestration. It yields events; it never prints, never asks the
user and never opens a socket itself.

    history = [question]
    while the run is within its limits (iterations, time):
        request = strategy.build_request(history, tools)        Run.build_request
        reply   = model.stream(request), read by the strategy    Run.read_reply
        no call in it?  an answer ends the run;                  Run.take_answer
                        anything else is fed back as no answer
        results = each call checked ▶ approved ▶ run             Run.run_round
        history += the reply and one result per call            Run.feed_back
        rounds that make no progress: the tools are withdrawn    Run.check_progress
    at the limit: one last request, without tools, for a best-effort answer

A model's output cannot be trusted, so every step expects the worst: a reply that cannot be
parsed, an unknown tool, bad arguments, a failing or hanging tool all go back to the model as a
result it can correct itself from; a call repeated is answered from the earlier result; and the
run is bounded in iterations and time. Approval and --step are events the consumer answers
(ApprovalAsked, StepPaused): the loop waits for the answer, and goes on without one.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolcall_cli.answer_check import Conversation, NotAnAnswer, judge
from toolcall_cli.events import (
    AnswerWithoutTools,
    ApprovalAsked,
    Event,
    FedBack,
    FinalAnswer,
    GroundingChecked,
    IterationStarted,
    LimitReached,
    ModelChunk,
    ModelFailed,
    ModelReplied,
    Notice,
    ParseError,
    ParserEvent,
    ReplyNotRead,
    RunFinished,
    RunStarted,
    StepPaused,
    StopReason,
    ToolCallParsed,
)
from toolcall_cli.feedback import answer_note, not_read_note, note
from toolcall_cli.grounding import AnswerCheck, ArgumentCheck
from toolcall_cli.limits import Limits as Limits  # re-exported: callers take it from here
from toolcall_cli.limits import question_refused
from toolcall_cli.messages import Message, ToolResult, tool_message, user
from toolcall_cli.models.base import Model
from toolcall_cli.progress import Progress
from toolcall_cli.quoted import ResultQuotes
from toolcall_cli.request_tools import Choosing, Retrieval
from toolcall_cli.requests import RequestFitter
from toolcall_cli.rounds import Decision, Declined, Edited, Round, StepQuit, ToolPolicy
from toolcall_cli.strategies.base import Reply, ReplyParser, Strategy
from toolcall_cli.strategies.echo import assistant_message, first_calls
from toolcall_cli.strategies.replies import check_depth, reply_chars
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.wire import NOTICE_KEY, UNREADABLE_REPLY, ModelError, ModelRequest
from toolcall_cli.wording import plural

__all__ = ["Decision", "Declined", "Edited", "Limits", "Run", "ToolPolicy", "run"]

Clock = Callable[[], float]
"""Seconds from an arbitrary start, never going back: time.monotonic, or a test's own clock."""

STOPPED_AT_A_STEP = "stopped by the user at a step (--step)"

CONTENT_CALLS = (
    "the model wrote its tool call as JSON text in its content; read as a call, as vLLM and "
    "Ollama do for several model families"
)
SAID_NOTHING = "the model's answer held nothing: no text, no tool call, no finish reason"
REPLY_TOO_LONG = "the reply passed {limit:,} characters"

TOO_LONG_FOR_THE_WINDOW: Literal["too_long"] = "too_long"
"""What read_reply returns when the server refused the request as too long for its window."""
NOT_READ: Literal["not_read"] = "not_read"
"""What read_reply returns when the server could not read the model's reply as a tool call: the
model has been told why, and is asked again."""


def run(
    question: str,
    *,
    model: Model,
    strategy: Strategy,
    registry: ToolRegistry,
    history: list[Message],
    limits: Limits = Limits(),
    policy: ToolPolicy | None = None,
    clock: Clock = time.monotonic,
    stepping: bool = False,
    retrieval: Retrieval | None = None,
) -> Iterator[Event]:
    """Answer one question, yielding every step. `history` is extended in place.

    `policy` is how the session runs tools (and what it remembers of approvals and rate limits
    across runs). `clock` measures the run and its tools; waits happen in real time, but how
    long anything took is only ever read from `clock`. `stepping` pauses the run before each
    model request and each tool execution (--step). `retrieval` chooses the tools each request
    carries when there are many (--retrieve)."""
    return Run(
        question,
        model=model,
        strategy=strategy,
        registry=registry,
        history=history,
        limits=limits,
        policy=policy or ToolPolicy(),
        clock=clock,
        stepping=stepping,
        retrieval=retrieval,
    ).events()


class Run:
    """One question's run: what it remembers across its iterations, and one method per step."""

    def __init__(
        self,
        question: str,
        *,
        model: Model,
        strategy: Strategy,
        registry: ToolRegistry,
        history: list[Message],
        limits: Limits,
        policy: ToolPolicy,
        clock: Clock,
        stepping: bool,
        retrieval: Retrieval | None,
    ) -> None:
        self.question = question
        self.model, self.strategy, self.registry = model, strategy, registry
        self.history, self.limits, self.policy = history, limits, policy
        self.clock, self.stepping = clock, stepping
        self.first_message = len(history)
        """Where this run's messages begin in the history (a chat holds earlier runs)."""
        self.choosing = Choosing(retrieval, registry) if retrieval is not None else None
        """--retrieve: which tools each request carries (None: all of them)."""
        self.fitter = RequestFitter(limits, model, strategy)
        self.started = clock()
        self.waited = 0.0
        """Seconds spent waiting for the user's answers: never counted as the run's time."""
        self.iterations = 0
        self.tool_calls = 0
        self.usage: dict[str, int] = {}
        self.cache: dict[tuple[str, str], ToolResult] = {}
        """Results of this run by call (tool and arguments): a repeated call is answered so."""
        self.call_ids: set[str] = set()
        """Every call id of this run so far: a model copies one as a tool name, or as its answer."""
        self.quotes = ResultQuotes()
        """The conversation's tool results read for calls: one copied from a result runs only
        with the user's approval."""
        self.progress = Progress()
        """Rounds without progress, and rounds that only repeated calls: when tools go."""
        self.arguments_check = ArgumentCheck(limits.grounding, self.tools.names())
        """--grounding: a call's figures come from the question or the results."""
        self.answer_check = AnswerCheck(limits.grounding)
        """--grounding: the answer's figures too (one nudge, then it stands, marked)."""
        self.tools_withdrawn = False
        self.asked_again: list[Message] = []
        """The copies of the question put after an instruction to answer: for the requests of this
        run only, so they leave the history when it ends."""
        self.dropped = 0
        """Calls of this iteration's reply past --max-calls-per-reply, never run."""

    # --- the loop -------------------------------------------------------------------------------

    def events(self) -> Iterator[Event]:
        refused = question_refused(self.question, self.limits)
        if refused is not None:
            # Refused before anything echoes it: a 100 KB paste must not flood the screen first.
            yield Notice(level="error", message=refused)
            yield self.finished("input_rejected")
            return
        yield self.run_started()
        self.history.append(user(self.question))
        try:
            stop = yield from self.timing_waits(self.iterate())
        except StepQuit:
            # What the round had started was stopped as the exception passed through it.
            yield Notice(level="warning", message=STOPPED_AT_A_STEP)
            stop = "interrupted"
        self.forget_the_copies()
        yield self.finished(stop)

    def timing_waits(
        self, steps: Generator[Event, None, StopReason]
    ) -> Generator[Event, None, StopReason]:
        """`steps`, with the time spent waiting for the user's answer (an approval, a --step
        pause) kept apart: a person thinking is not the run working, so that time counts
        against no limit (--timeout) and not in the run's elapsed time."""
        try:
            event = next(steps)
            while True:
                if isinstance(event, (ApprovalAsked, StepPaused)):
                    asked = self.clock()
                    yield event
                    self.waited += self.clock() - asked
                else:
                    yield event
                event = next(steps)
        except StopIteration as end:
            stop: StopReason = end.value
            return stop
        finally:
            steps.close()  # the run left early (Ctrl-C, the reader gone): the round is stopped

    def iterate(self) -> Generator[Event, None, StopReason]:
        while self.iterations < self.limits.max_iterations and not self.out_of_time:
            self.iterations += 1
            stop = yield from self.iteration()
            if stop is not None:
                return stop
            yield from self.check_progress()
        return (yield from self.at_the_limit())

    def iteration(self, *, retried: bool = False) -> Generator[Event, None, StopReason | None]:
        """One request, its reply, the calls it makes and what goes back; a stop reason when
        the run is over. `retried`: the one retry after the server said the request was too
        long for its context window."""
        request = yield from self.build_request()
        round_ = self.new_round()
        try:
            reply = yield from self.read_reply(request, round_, may_retry=not retried)
            if reply == TOO_LONG_FOR_THE_WINDOW:
                return (yield from self.iteration(retried=True))
            if reply == NOT_READ:
                return None
            if not isinstance(reply, Reply):
                return reply
            if not reply.calls and not reply.errors:
                return (yield from self.take_answer(reply))
            yield from self.run_round(round_)
            yield from self.feed_back(round_, reply)
            return None
        except BaseException:
            # Ctrl-C, the reader gone (GeneratorExit) or a bug: nothing the round started may
            # outlive the run. An isolated tool runs in its own session, out of reach of the
            # terminal's Ctrl-C, so it is killed here or not at all.
            round_.abandon()
            raise

    # --- the steps ------------------------------------------------------------------------------

    def build_request(self) -> Generator[Event, None, ModelRequest]:
        """The request for this iteration: the tools it carries, its history windowed and fitted
        into the context window; shown, and paused at with --step."""
        yield from self.fitter.learn_window()
        specs, chosen = self.tools_for_request()
        request = yield from self.fitter.request(self.history, specs, self.tools_withdrawn)
        yield IterationStarted(iteration=self.iterations, request=request.body)
        yield from chosen
        if self.stepping:
            pause = StepPaused(before="request", iteration=self.iterations, request=request.body)
            yield pause
            if pause.answered == "quit":
                raise StepQuit
        return request

    def read_reply(
        self, request: ModelRequest, round_: Round, *, last: bool = False, may_retry: bool = False
    ) -> Generator[Event, None, Reply | StopReason | Literal["too_long", "not_read"]]:
        """The model's reply, parsed. A streaming strategy starts each call in `round_` as soon
        as it is complete; the others start their calls once the reply is whole and shown. The
        reply is recorded in the history; or the reason the run stops; or, when `may_retry`,
        TOO_LONG_FOR_THE_WINDOW: the server refused the request as too long for its window; or
        NOT_READ: the server could not read the reply as a tool call, and the model was told."""
        parser = self.strategy.parser(f"#{self.iterations}.", self.tools.names())
        reading = Reading(parser, round_, runs_calls=not last, may_retry=may_retry)
        # The reply's latency leaves out the user's answers given while it streamed (a streamed
        # call's approval): the loop reads no chunk while it waits, and a person is no model.
        sent = self.clock() - self.waited
        yield from self.stream_reply(request, reading)
        closing = parser.close()
        if reading.heard:
            yield from reading.parsed(closing)
        reply = parser.reply()
        self.add_usage(reply.usage)
        self.fitter.learn_scale(reply.usage)
        if reading.heard and (reading.failure is None or reply.raw or reply.calls or reply.errors):
            # A reply cut off by a failure is still shown: the partial text and any cut call.
            yield replied(self.iterations, reply, self.clock() - self.waited - sent)
        stop = yield from self.failed_reply(reading, reply)
        if stop is not None:
            return stop
        if reply.calls_from_content:
            yield Notice(level="warning", message=CONTENT_CALLS)
        reply, self.dropped = first_calls(reply, self.limits.max_calls_per_reply)
        self.call_ids.update([c.id for c in reply.calls] + [e.call_id for e in reply.errors])
        self.history.append(assistant_message(reply))
        if last:
            yield from reading.held
            return reply
        if self.choosing is not None:
            yield from self.choosing.calls_made(reply.calls)
        yield from reading.start_held()
        yield from round_.reply_ended()
        return reply

    def take_answer(self, reply: Reply) -> Generator[Event, None, StopReason | None]:
        """A reply without calls: the answer, which ends the run; or something that is no
        answer (a tool's name, an echoed note...), which the model is told about; or, once,
        an answer whose figures come from nowhere, which the model is shown the results for."""
        verdict = self.judge(reply)
        if verdict is None:
            # The run's tools, offered or withdrawn: an answer made once they were withdrawn
            # (呼和浩特, not in the table: "晴朗，温度约为22°C") went unchecked.
            if self.tools_withdrawn and not self.progress.succeeded:
                self.answer_check.no_nudge_left()
            grounded = self.check_figures(reply)
            if grounded is None:
                self.keep_as_answered(reply)
                yield final_answer(reply)
                return "answered"
            checked, nudge = grounded
            yield checked
            if nudge is None:
                self.keep_as_answered(reply)
                yield final_answer(reply, ungrounded=checked.figures)
                return "answered"
            self.history.append(user(nudge))
            return None
        yield Notice(
            level="warning",
            message=f"the model's reply was not an answer: {verdict.why}; told it so",
        )
        feedback = verdict.feedback(tools=not self.tools_withdrawn, question=self.question)
        if self.tools_withdrawn:
            self.ask_for_the_answer(feedback)
        else:
            self.history.append(user(feedback))
        self.progress.no_answer()
        return None

    def run_round(self, round_: Round) -> Iterator[Event]:
        """Wait for every call of the reply to be answered, within the run's time."""
        yield from round_.finish(deadline=lambda: self.remaining)

    def feed_back(self, round_: Round, reply: Reply) -> Iterator[Event]:
        """One result per call into the history, in the order the calls were made; the round
        counted as progress or not."""
        self.tool_calls += len(reply.calls)
        results = answered_in_order(round_.all_results(reply.errors), reply)
        for result in results:
            if result.full_length is not None:
                yield Notice(
                    message=f"result of {result.name} cut from {result.full_length:,} to "
                    f"{self.limits.max_result_chars:,} characters before it was fed back"
                )
        self.progress.count(results, reply.calls)
        if self.dropped and results:
            yield self.dropped_notice()
            last = results[-1]
            results[-1] = replace(last, content=f"{last.content}\n{self.dropped_note(reply)}")
        fed = [tool_message(result) for result in results]
        self.history.extend(fed)
        yield FedBack(iteration=self.iterations, messages=tuple(self.strategy.to_wire(fed)))

    def check_progress(self) -> Iterator[Event]:
        """Rounds that keep failing, or only repeat calls (whatever those gave the first time),
        make it answer without tools."""
        withdrawal = (
            None if self.tools_withdrawn else self.progress.withdrawal(self.limits, self.question)
        )
        if withdrawal is None:
            return
        message, repeating = withdrawal
        self.tools_withdrawn = True
        self.ask_for_the_answer(message)
        yield AnswerWithoutTools(
            failed_rounds=self.progress.failed_rounds,
            message=message,
            repeated=repeating,
            failed_again=repeating and self.progress.only_failures_repeated,
            asked_again=self.question,
        )

    def at_the_limit(self) -> Generator[Event, None, StopReason]:
        """The run is out of iterations or time. Out of iterations, one more request, without
        tools, gives the user a best-effort answer, marked as such (smolagents does the same at
        max_steps); the run still ends at its limit."""
        if self.out_of_time:
            yield self.timed_out()
            return "limit"
        yield LimitReached(
            limit="iterations",
            message=f"stopped after {plural(self.limits.max_iterations, 'iteration')} "
            "without a final answer",
        )
        if self.limits.last_answer:
            yield from self.best_effort_answer()
        return "limit"

    def best_effort_answer(self) -> Iterator[Event]:
        self.ask_for_the_answer(answer_note("last_round", self.question))
        self.tools_withdrawn = True
        self.iterations += 1
        request = yield from self.build_request()
        round_ = self.new_round()
        reply = yield from self.read_reply(request, round_, last=True)
        if not isinstance(reply, Reply):
            return
        if reply.calls:
            yield Notice(
                level="warning",
                message="the model asked for tools in its last reply; none were run",
            )
        elif reply.errors:
            yield Notice(
                level="warning",
                message="the model's last reply could not be read; none of it was run",
            )
        verdict = self.judge(reply)
        if verdict is None:
            self.keep_as_answered(reply)
            self.answer_check.no_nudge_left()  # no request follows the last one
            grounded = self.check_figures(reply)
            if grounded is not None:
                yield grounded[0]
            loose = grounded[0].figures if grounded is not None else ()
            yield final_answer(reply, best_effort=True, ungrounded=loose)
        else:
            yield Notice(
                level="warning",
                message=f"the last request without tools gave no answer: {verdict.why}",
            )

    def check_figures(self, reply: Reply) -> tuple[GroundingChecked, str | None] | None:
        """--grounding: the answer's figures against the question and this run's results, with
        the run's tools, offered or withdrawn, named in a nudge."""
        return self.answer_check.look(
            reply.text, self.question, self.history, self.first_message, self.tools.names()
        )

    def keep_as_answered(self, reply: Reply) -> None:
        """The history keeps the answer as the user read it, not in a strategy's wrapper (JSON
        mode's {"answer": ...}): a chat switched to regex showed Qwen2.5-0.5B its earlier answers
        so wrapped, and it answered `{"answer": "26"}`, taken whole as the answer."""
        last = self.history[-1] if self.history else None
        if last is not None and last.role == "assistant" and not last.tool_calls:
            self.history[-1] = replace(last, content=reply.text)

    def ask_for_the_answer(self, instruction: str) -> None:
        """Without tools, the instruction to answer, then the user's question again on its own:
        a small model answers the last thing it was asked, and when the last thing is a note it
        often says the note back (Qwen2.5-0.5B, the request after each withdrawal of bench's
        tuning half sent again: 56 of 120 right with the question last, 51 with the note last;
        bench/results/tuning_default/)."""
        self.history.append(user(instruction))
        self.asked_again.append(user(self.question))
        self.history.append(self.asked_again[-1])

    def forget_the_copies(self) -> None:
        """The question said again after each instruction leaves the history: the next turn of a
        chat reads it once, with the instruction and the answer that followed."""
        copies = {id(message) for message in self.asked_again}
        self.history[:] = [message for message in self.history if id(message) not in copies]

    # --- inside the steps -----------------------------------------------------------------------

    @property
    def tools(self) -> ToolRegistry:
        """The tools the model may call: with --retrieve, also search_tools."""
        return self.choosing.registry if self.choosing is not None else self.registry

    def tools_for_request(self) -> tuple[list[Any], list[Event]]:
        """The tool specs this request carries, and (under --retrieve) the events that show the
        choice."""
        if self.tools_withdrawn:
            return [], []
        if self.choosing is None or not self.choosing.on:
            return self.tools.specs(), []
        return self.choosing.choose(
            self.iterations, self.question, self.history[: self.first_message]
        )

    def offered(self) -> list[str]:
        """The tools the model may call now."""
        return [] if self.tools_withdrawn else self.tools.names()

    def new_round(self) -> Round:
        self.quotes.read(self.history, self.tools.names())
        self.arguments_check.read(self.history, self.first_message)
        return Round(
            registry=self.tools,
            cache=self.cache,
            policy=self.policy,
            limits=self.limits,
            withdrawn=self.tools_withdrawn,
            streaming=self.strategy.streaming,
            clock=self.clock,
            earlier_ids=self.call_ids,
            stepping=self.stepping,
            iteration=self.iterations,
            quotes=self.quotes,
            run_time_left=lambda: self.remaining,
            grounding=self.arguments_check,
        )

    def stream_reply(self, request: ModelRequest, reading: Reading) -> Iterator[Event]:
        """The model's chunks into the parser, within the run's time and the reply cap. A
        failure of the model (or of its parser) is kept in `reading`, never raised."""
        try:
            for chunk in within_deadline(self.model.stream(request), lambda: self.remaining):
                if NOTICE_KEY in chunk:
                    yield Notice(level="warning", message=str(chunk[NOTICE_KEY]))
                    continue
                check_depth(chunk)  # before any part of it is recorded or parsed
                reading.chunks += 1
                if request.streaming:
                    yield model_chunk(self.iterations, chunk)
                reading.size += reply_chars(chunk)
                if reading.size > self.limits.max_reply_chars:
                    raise reply_too_long(self.limits.max_reply_chars)
                yield from reading.parsed(reading.parser.feed(chunk))
                if self.strategy.streaming:
                    yield from reading.round.ready()
        except ModelError as error:
            reading.failure = error
        except OutOfTime:
            reading.timed_out = True
        except Exception as error:  # a model (or its parser) that breaks has failed, no crash
            reading.failure = ModelError(
                f"the model failed: {type(error).__name__}: {error}", kind="internal"
            )

    def failed_reply(
        self, reading: Reading, reply: Reply
    ) -> Generator[Event, None, StopReason | Literal["too_long", "not_read"] | None]:
        """Why the run stops after this reply (the model failed, or time ran out), or None."""
        failure = reading.failure
        if reading.timed_out or failure is not None:
            reading.round.abandon()  # calls a streamed reply started: isolated ones are killed
        if reading.timed_out:
            yield self.timed_out()
            return "limit"
        if failure is not None and reading.retries(failure):
            # The server refused the request before answering: compact harder, try once more.
            yield self.fitter.shrink_after(failure)
            return TOO_LONG_FOR_THE_WINDOW
        if failure is not None and failure.kind == UNREADABLE_REPLY and reading.runs_calls:
            yield from self.tell_not_read(failure)
            return NOT_READ
        if failure is not None:
            yield from (event for event in reading.held if isinstance(event, ParseError))
            # The partial reply is not added to the history, so the next turn is sound.
            yield ModelFailed(message=str(failure), error_kind=failure.kind)
            return "model_failed"
        if said_nothing(reply):
            yield ModelFailed(message=SAID_NOTHING, error_kind="protocol")
            return "model_failed"
        return None

    def tell_not_read(self, failure: ModelError) -> Iterator[Event]:
        """The model wrote a call its server could not read (a server that reads calls itself
        answers with an error in place of the reply): malformed output like any other. The user
        sees the server's reason; the model is told it, and what a call looks like, and asked
        again. Nothing of the reply reached us, so nothing of it goes into the history; the
        round made no progress, so the limits on such rounds hold."""
        yield ReplyNotRead(iteration=self.iterations, message=str(failure), said=failure.said)
        self.history.append(user(not_read_note(failure.said, self.question, self.offered())))
        self.progress.no_answer()

    def judge(self, reply: Reply) -> NotAnAnswer | None:
        said = Conversation.of_run(
            self.question,
            tools=self.tools.names(),
            call_ids=self.call_ids,
            messages=self.history[self.first_message :],
            unreadable=reply.unreadable,
        )
        return judge(reply.text, said)

    def dropped_notice(self) -> Notice:
        cap = self.limits.max_calls_per_reply
        return Notice(
            level="warning",
            message=f"{plural(self.dropped, 'call')} past the cap of {cap} calls per reply "
            f"{'was' if self.dropped == 1 else 'were'} not run (--max-calls-per-reply); the model "
            "is told so in one note",
        )

    def dropped_note(self, reply: Reply) -> str:
        """One note on the last result, not a result per dropped call: a 119-call reply must not
        flood the next request. The recorded reply keeps only the calls that ran (first_calls),
        so in native calling every tool_call_id sent is still answered."""
        cap = self.limits.max_calls_per_reply
        total = len(reply.calls) + self.dropped
        return note("dropped_calls", total=total, cap=cap, dropped=self.dropped)

    # --- time, usage and the run's ends ---------------------------------------------------------

    @property
    def remaining(self) -> float | None:
        """Seconds left under --timeout, or None without a limit."""
        timeout = self.limits.run_timeout
        return None if timeout is None else timeout - self.elapsed

    @property
    def elapsed(self) -> float:
        """Seconds the run has worked: since it started, less the waits for the user."""
        return self.clock() - self.started - self.waited

    @property
    def out_of_time(self) -> bool:
        remaining = self.remaining
        return remaining is not None and remaining <= 0

    def timed_out(self) -> LimitReached:
        limit = self.limits.run_timeout or 0.0
        return LimitReached(limit="timeout", message=f"the run took longer than {limit:g} s")

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value

    def run_started(self) -> RunStarted:
        return RunStarted(
            question=self.question,
            model=self.model.name,
            strategy=self.strategy.name,
            tools=tuple(self.registry.names()),
            sampling=self.strategy.sampling.fields(),
            mode=self.strategy.mode,
        )

    def finished(self, stop: StopReason) -> RunFinished:
        return RunFinished(
            stop_reason=stop,
            iterations=self.iterations,
            tool_calls=self.tool_calls,
            elapsed=self.elapsed,
            usage=dict(self.usage),
        )


@dataclass
class Reading:
    """One reply as it is read: its parser, the round its calls start in, and how it went."""

    parser: ReplyParser
    round: Round
    runs_calls: bool
    """False for the best-effort request at the limit: its calls are shown, never run."""
    may_retry: bool = False
    """A request the server refuses as too long may be compacted and sent once more."""
    size: int = 0
    """Characters of the reply so far (text, reasoning and call arguments)."""
    chunks: int = 0
    """Chunks (or whole completions) the model sent for this reply."""
    failure: ModelError | None = None
    timed_out: bool = False
    held: list[ParserEvent] = field(default_factory=list)
    """Calls and parse errors of a reply that is not streamed: shown (and run) after it."""

    def parsed(self, events: Sequence[ParserEvent]) -> Iterator[Event]:
        """A streamed reply shows everything at once and starts each call as it completes;
        any other reply holds its calls until it is whole."""
        for event in events:
            if not self.round.streaming:
                if isinstance(event, (ToolCallParsed, ParseError)):
                    self.held.append(event)
                continue
            yield event
            if isinstance(event, ToolCallParsed) and self.runs_calls:
                yield from self.round.add(event.call)

    @property
    def heard(self) -> bool:
        """Whether there is a reply to show: the model sent something, or it ended without
        failing. A request that failed before any answer (no server there, a refusal, the
        run's time out) has no model output: what a parser would make of nothing (an empty
        assistant message, a JSON reply that is not JSON) would be output no model wrote."""
        return self.chunks > 0 or (self.failure is None and not self.timed_out)

    def retries(self, failure: ModelError) -> bool:
        """The server refused the request as too long before answering, and it may be tried
        once more, compacted harder."""
        return self.may_retry and failure.kind == "context_length" and self.size == 0

    def start_held(self) -> Iterator[Event]:
        """The held calls, shown after the raw reply, then run."""
        for event in self.held:
            yield event
            if isinstance(event, ToolCallParsed):
                yield from self.round.add(event.call)


class OutOfTime(Exception):
    """The run's time limit passed while the model was still answering."""


def within_deadline(
    chunks: Iterator[dict[str, Any]], remaining: Callable[[], float | None]
) -> Iterator[dict[str, Any]]:
    """The model's chunks, never waiting past the run's time limit.

    Without a limit they are read directly. With one, the model is read in a daemon thread, so
    a request that hangs (or a stream that trickles on) is abandoned at the deadline, as a hung
    tool is; the thread ends with its request, and never keeps the process alive.
    """
    if remaining() is None:
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
            kind, value = inbox.get(timeout=max(remaining() or 0.0, 0.0))
        except queue.Empty:
            raise OutOfTime from None
        if kind == "end":
            return
        if kind == "error":
            raise value
        yield value


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


def said_nothing(reply: Reply) -> bool:
    """A reply with no choice in it at all (events that carry none, or `choices: [{}]`): a
    server that sent no answer, not a model that answered with nothing."""
    empty = not reply.text.strip() and not reply.calls and not reply.errors
    return empty and not reply.reasoning and reply.finish_reason is None


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


def replied(iteration: int, reply: Reply, latency: float) -> ModelReplied:
    return ModelReplied(
        iteration=iteration,
        raw=reply.raw,
        text=reply.text,
        reasoning=reply.reasoning,
        finish_reason=reply.finish_reason,
        latency=latency,
        usage=reply.usage,
    )


def final_answer(
    reply: Reply, *, best_effort: bool = False, ungrounded: tuple[str, ...] = ()
) -> FinalAnswer:
    """The reply as the run's answer, marked for what the user should know of it. A reply that
    stopped at the token limit ends mid-sentence as often as not, and reads as whole unless
    the view says it was cut."""
    cut = reply.finish_reason == "length"
    return FinalAnswer(text=reply.text, best_effort=best_effort, ungrounded=ungrounded, cut=cut)


def answered_in_order(results: Sequence[ToolResult], reply: Reply) -> list[ToolResult]:
    """Results in the order the model made the calls, whatever order they finished in."""
    position = {call.id: i for i, call in enumerate(reply.calls)}
    position.update({e.call_id: len(position) + i for i, e in enumerate(reply.errors)})
    return sorted(results, key=lambda r: position.get(r.call_id, len(position)))
