"""The one executor: runs prepared calls, at most `max_parallel` at a time, each tool within its
own concurrency limit, in a thread or (isolated) a worker process, and owns every call's timeout.
Why threads by default, and what isolation costs: docs/tools.md, Isolation; bench/ measures it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from toolcall_cli.feedback import Problem
from toolcall_cli.messages import ToolCall, ToolResult
from toolcall_cli.tools._capture import CapturedOutput, captured
from toolcall_cli.tools._outcome import Outcome, call_with, outcome_of
from toolcall_cli.tools.executor import error_result, prepare
from toolcall_cli.tools.registry import Tool, ToolRegistry

Clock = Callable[[], float]


@dataclass(frozen=True)
class Job:
    """A call ready to run: validated arguments, its timeout, and how to run it."""

    call: ToolCall
    tool: Tool
    arguments: dict[str, Any]
    timeout: float
    isolate: bool = False
    coerced: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finished:
    """A call's result, with when it started and ended on the pool's clock."""

    call: ToolCall
    result: ToolResult
    started: float
    ended: float


@dataclass
class _Running:
    job: Job
    started: float
    deadline: float
    stop: Callable[[], None]
    """Kills an isolated call's process; for a thread, nothing can be done."""
    output: CapturedOutput = field(default_factory=CapturedOutput)


class ToolPool:
    """Calls waiting, running and finished; `clock` is injectable, for the timeline and tests."""

    def __init__(self, *, max_parallel: int = 4, clock: Clock = time.monotonic) -> None:
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        self.max_parallel = max_parallel
        self._clock = clock
        self._waiting: deque[Job] = deque()
        self._running: dict[str, _Running] = {}
        self._inbox: queue.Queue[tuple[str, Outcome, float]] = queue.Queue()
        """Each call's outcome, with when it ended on the pool's clock."""

    @property
    def pending(self) -> int:
        """Calls submitted and not yet finished."""
        return len(self._waiting) + len(self._running)

    def running(self) -> list[ToolCall]:
        return [r.job.call for r in self._running.values()]

    def submit(self, job: Job) -> None:
        self._waiting.append(job)
        self._start_ready()

    def wait(self, timeout: float | None = None) -> Finished | None:
        """The next call to finish (or to pass its deadline); None when `timeout` seconds pass
        first, or when nothing is pending. Blocks on a queue until a call reports or the nearest
        deadline passes: no polling."""
        give_up = None if timeout is None else self._clock() + timeout
        while self.pending:
            # What has reported comes first: a call that ended in time is never judged by when
            # the caller came back to look.
            done = self._reported()
            if done is not None:
                return done
            expired = self._expired()
            if expired is not None:
                return expired
            now = self._clock()
            waits = [r.deadline - now for r in self._running.values()]
            if give_up is not None:
                waits.append(give_up - now)
            try:
                report = self._inbox.get(timeout=max(min(waits), 0) if waits else None)
            except queue.Empty:
                if give_up is not None and self._clock() >= give_up:
                    return None
                continue
            done = self._finish(*report)
            if done is not None:
                return done
        return None

    def _reported(self) -> Finished | None:
        """The first call that has reported by now, without waiting (late reports of calls
        already answered are dropped on the way)."""
        while True:
            try:
                report = self._inbox.get_nowait()
            except queue.Empty:
                return None
            done = self._finish(*report)
            if done is not None:
                return done

    def ready(self) -> list[Finished]:
        """What has finished by now, without waiting."""
        found: list[Finished] = []
        while True:
            done = self.wait(timeout=0)
            if done is None:
                return found
            found.append(done)

    def cancel(self, reason: Problem) -> list[Finished]:
        """Stop every call: running ones are killed (isolated) or abandoned (threads), waiting
        ones never start; each is answered with `reason`."""
        now = self._clock()
        stopped: list[Finished] = []
        for call_id, running in list(self._running.items()):
            running.stop()
            del self._running[call_id]
            result = cancelled(running.job.call, reason)
            stopped.append(
                Finished(
                    running.job.call,
                    replace(result, output=running.output.text()),
                    running.started,
                    now,
                )
            )
        while self._waiting:
            job = self._waiting.popleft()
            stopped.append(Finished(job.call, cancelled(job.call, reason), now, now))
        return stopped

    # --- inside ---------------------------------------------------------------------------------

    def _start_ready(self) -> None:
        held: deque[Job] = deque()
        while self._waiting and len(self._running) < self.max_parallel:
            job = self._waiting.popleft()
            if not self._room_for(job.tool):
                held.append(job)  # its tool is at its concurrency limit; later jobs may go
                continue
            self._start(job)
        self._waiting = held + self._waiting

    def _room_for(self, tool: Tool) -> bool:
        limit = tool.concurrency
        if limit is None:
            return True
        return sum(1 for r in self._running.values() if r.job.tool.name == tool.name) < limit

    def _start(self, job: Job) -> None:
        started = self._clock()
        running = _Running(job, started, started + job.timeout, stop=lambda: None)
        self._running[job.call.id] = running
        report = self._reporter(job.call.id)
        if job.isolate:
            from toolcall_cli.tools.isolated import start_isolated

            running.stop = start_isolated(job.tool, job.arguments, running.output, report)
        else:
            start_thread(job.tool, job.arguments, running.output, report)

    def _reporter(self, call_id: str) -> Callable[[Outcome], None]:
        def report(outcome: Outcome) -> None:
            # The end is read here, on the call's own thread, as it ends, not when the caller
            # next looks: it may be away a while (at a --step or approval prompt), and a tool
            # that finished in 0.01 s must not come back as timed out, nor as taking 13 s.
            self._inbox.put((call_id, outcome, self._clock()))

        return report

    def _finish(self, call_id: str, outcome: Outcome, ended: float) -> Finished | None:
        running = self._running.pop(call_id, None)
        if running is None:
            return None  # a late report from a call that timed out or was cancelled
        self._start_ready()
        if ended > running.deadline:
            # It ended past its deadline while nobody was looking: late all the same.
            return _timed_out(running, ended)
        call = running.job.call
        if outcome.failure is not None:
            kind, message = outcome.failure
            result = error_result(call, kind, Problem("tool_error", call.name, detail=message))
        else:
            result = ToolResult(call_id=call.id, name=call.name, content=outcome.text)
        return _finished(running, replace(result, coerced=running.job.coerced), ended)

    def _expired(self) -> Finished | None:
        now = self._clock()
        for call_id, running in self._running.items():
            if running.deadline <= now:
                del self._running[call_id]
                running.stop()
                self._start_ready()
                return _timed_out(running, now)
        return None


def _timed_out(running: _Running, now: float) -> Finished:
    job = running.job
    how = "; its process was killed" if job.isolate else ""
    late = Problem("tool_timeout", job.tool.name, detail=f"{job.timeout:g} s{how}")
    return _finished(running, error_result(job.call, "timeout", late), now)


def _finished(running: _Running, result: ToolResult, ended: float) -> Finished:
    """A call's end: its result with what the tool printed and how long it took."""
    duration = ended - running.started
    result = replace(result, output=running.output.text(), duration=duration)
    return Finished(running.job.call, result, running.started, ended)


def start_thread(
    tool: Tool,
    arguments: dict[str, Any],
    output: CapturedOutput,
    report: Callable[[Outcome], None],
) -> None:
    """Run a tool in a daemon thread (one per call), reporting its outcome when it returns.

    Daemon, not a ThreadPoolExecutor's worker: those are joined at interpreter exit, so a hung
    tool would keep the process alive."""

    def target() -> None:
        outcome = Outcome()
        try:
            with captured(output):
                outcome = outcome_of(lambda: call_with(tool.func, arguments))
        finally:
            report(outcome)

    threading.Thread(target=target, name=f"tool:{tool.name}", daemon=True).start()


def execute(call: ToolCall, registry: ToolRegistry, *, default_timeout: float = 10.0) -> ToolResult:
    """Run one call now and return its result (for tests and embedding; a run goes through the
    loop's round). Errors come back as results, never as exceptions."""
    started = time.perf_counter()
    found = registry.get(call.name)
    timeout = (found.timeout if found is not None else None) or default_timeout
    prepared = prepare(call, registry, time_limit=timeout)
    if isinstance(prepared, ToolResult):
        return replace(prepared, duration=time.perf_counter() - started)
    pool = ToolPool(max_parallel=1)
    tool = prepared.tool
    pool.submit(Job(call, tool, prepared.arguments, timeout, tool.isolate, prepared.coerced))
    finished = pool.wait()
    assert finished is not None  # one job, always answered: done, failed or timed out
    return finished.result


def cancelled(call: ToolCall, reason: Problem) -> ToolResult:
    return error_result(call, "cancelled", replace(reason, tool=call.name))
