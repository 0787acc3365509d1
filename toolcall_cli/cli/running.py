"""Rendering a run: events to the renderer and the trace, and the exit code its end calls for."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import typer

from toolcall_cli.approval import attach
from toolcall_cli.cli.entry import EXIT_BY_STOP, EXIT_FAILURE, EXIT_INTERRUPTED, fail
from toolcall_cli.events import (
    Event,
    IterationStarted,
    LimitReached,
    ModelFailed,
    ModelReplied,
    Notice,
    RunFinished,
    RunStarted,
    ToolCallParsed,
)
from toolcall_cli.loop import Approver
from toolcall_cli.private_files import PathProblem
from toolcall_cli.render import RenderMode, make_renderer

if TYPE_CHECKING:
    from rich.console import Console

    from toolcall_cli.trace import TraceWriter


def pipe_console() -> Console:
    """A rich Console for stdout whose broken pipe reaches main() like any other command's
    (rich's own handling exits 1 on the spot)."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return PipeConsole(highlight=False)


def report_stop(event: Event) -> None:
    """Without the live view, why a run failed also goes to stderr as one line, so a script
    reading stdout (or nothing, with --quiet) still learns it."""
    if isinstance(event, ModelFailed) or (isinstance(event, Notice) and event.level == "error"):
        typer.echo(f"toolcall: error: {event.message}", err=True)
    elif isinstance(event, LimitReached):
        typer.echo(f"toolcall: {event.message}", err=True)


class RunProgress:
    """How far a run got, read from its events: the final event when the run is cut off
    (Ctrl-C, or stdout's reader leaving) before the loop could send its own."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = clock()
        self._iterations = 0
        self._tool_calls = 0
        self._usage: dict[str, int] = {}

    def add(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._started = self._clock()
        elif isinstance(event, IterationStarted):
            self._iterations = event.iteration
        elif isinstance(event, ToolCallParsed):
            self._tool_calls += 1
        elif isinstance(event, ModelReplied):
            for key, value in event.usage.items():
                self._usage[key] = self._usage.get(key, 0) + value

    def interrupted(self) -> RunFinished:
        return RunFinished(
            stop_reason="interrupted",
            iterations=self._iterations,
            tool_calls=self._tool_calls,
            elapsed=self._clock() - self._started,
            usage=dict(self._usage),
        )


class TraceWriteError(Exception):
    """The trace stopped taking writes mid-run (a full disk, a pipe whose reader died)."""


class RunTrace:
    """The run's trace, if it has one. A write that fails stops the run with one line and
    exit 1, rather than letting it go on with a trace that silently ends early."""

    def __init__(self, writer: TraceWriter | None, path: Path | None) -> None:
        self._writer = writer
        self._path = path

    def write(self, event: Event) -> None:
        if self._writer is None:
            return
        try:
            self._writer.write(event)
        except OSError as error:
            reason = error.strerror or str(error)
            raise TraceWriteError(f"cannot write the trace file {self._path}: {reason}") from None

    def close(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(OSError):  # a failed write was already reported
                self._writer.close()


def open_trace(path: Path | None) -> RunTrace:
    """The trace, opened before the run starts: a path that cannot be written is a usage
    error naming it, and nothing has run yet."""
    from toolcall_cli.trace import TraceWriter

    try:
        return RunTrace(TraceWriter.open(path) if path else None, path)
    except PathProblem as error:
        fail(str(error))


@contextlib.contextmanager
def renderer_stdout(mode: RenderMode) -> Iterator[IO[str] | None]:
    """stdout for the renderer alone while a run is shown as --json, --quiet or plain text.

    What a tool prints itself is caught per call (tools/capture.py); this catches what is below
    Python's reach: a subprocess a tool starts, a thread it spawns, `os.write(1, ...)`. During the
    run, file descriptor 1 points at stderr, and the renderer writes to a copy of the real
    stdout, so `--json` lines and the `--quiet` answer stay clean. The live view is for a
    terminal, where both go to the same screen anyway. Yields None where stdout is no file
    descriptor 1 (under a test runner), and nothing changes then."""
    try:
        real = sys.stdout.fileno() == 1 and mode != "live"
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is a ValueError
        real = False
    if not real:
        yield None
        return
    sys.stdout.flush()
    own = os.dup(1)
    os.dup2(2, 1)
    stream = open(own, "w", encoding=sys.stdout.encoding or "utf-8", errors="replace")  # noqa: SIM115
    try:
        yield stream
    finally:
        try:
            stream.flush()
        except BrokenPipeError:
            pass  # the reader left; main() deals with it
        finally:
            os.dup2(own, 1)
            with contextlib.suppress(OSError):
                stream.close()


def render_run(
    events: Iterator[Event],
    mode: RenderMode,
    trace: Path | None = None,
    approve: Approver | None = None,
    show_request: bool = False,
) -> int:
    """Render a run's events, trace them, and return the exit code the run's end calls for."""
    run_trace = open_trace(trace)
    with renderer_stdout(mode) as stdout:
        return _render(events, mode, run_trace, stdout, approve, show_request)


def _render(
    events: Iterator[Event],
    mode: RenderMode,
    run_trace: RunTrace,
    stdout: IO[str] | None,
    approve: Approver | None,
    show_request: bool,
) -> int:
    renderer = make_renderer(mode, stdout, show_request=show_request)
    if approve is not None:
        attach(approve, renderer)
    progress = RunProgress()
    code = EXIT_FAILURE
    try:
        try:
            for event in events:
                progress.add(event)
                run_trace.write(event)  # first: the trace keeps an event stdout broke on
                renderer.handle(event)
                if mode != "live":
                    report_stop(event)
                if isinstance(event, RunFinished):
                    code = EXIT_BY_STOP[event.stop_reason]
        except KeyboardInterrupt:
            # One final event for both, so a program reading --json learns what the trace says.
            final = progress.interrupted()
            run_trace.write(final)
            renderer.handle(final)
            code = EXIT_INTERRUPTED
        except BrokenPipeError:
            # stdout's reader left; the trace (if it still can) says how the run ended.
            with contextlib.suppress(TraceWriteError):
                run_trace.write(progress.interrupted())
            raise
        finally:
            # Also on an unexpected error, so the terminal is never left with a live region.
            renderer.close()
    except TraceWriteError as error:
        fail(str(error), EXIT_FAILURE)
    finally:
        run_trace.close()
    if code == EXIT_INTERRUPTED:
        typer.echo("toolcall: interrupted", err=True)
    return code
