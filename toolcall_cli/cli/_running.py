"""Rendering a run: events to the renderer and the trace, and the exit code its end calls for."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import typer

from toolcall_cli import strictjson
from toolcall_cli.cli.entry import (
    EXIT_ANSWERED,
    EXIT_BY_STOP,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_LIMIT,
    EXIT_SCRIPT_MISMATCH,
    fail,
    terminal_gone,
)
from toolcall_cli.termination import Terminated

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

    from toolcall_cli.events import Event, RunFinished
    from toolcall_cli.models.scripted import ScriptedModel, ScriptEnd
    from toolcall_cli.render import RenderMode
    from toolcall_cli.render.base import Renderer
    from toolcall_cli.render.explain import Explain
    from toolcall_cli.session import Answers
    from toolcall_cli.trace import RunProgress, TraceWriter
    from toolcall_cli.trace.writer import InterruptReason


def pipe_console(whole_lines: bool = False) -> Console:
    """A rich Console for stdout whose broken pipe reaches main() like any other command's
    (rich's own handling exits 1 on the spot). `whole_lines`: piped, lines are not cut to the
    width of a terminal that is not there. Piped, lines end without the spaces rich adds."""
    from rich.console import Console, ConsoleOptions, RenderableType

    class PipeConsole(Console):
        rendering = False
        """A print's renderable is being rendered: what it holds is rendered within it."""

        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

        def render(
            self, renderable: RenderableType, options: ConsoleOptions | None = None
        ) -> Iterable[Segment]:
            if self.is_terminal or self.rendering:
                yield from super().render(renderable, options)
                return
            self.rendering = True
            try:
                yield from unpadded(super().render(renderable, options))
            finally:
                self.rendering = False

    console = PipeConsole(highlight=False)
    console.soft_wrap = whole_lines and not console.is_terminal
    return console


def unpadded(segments: Iterable[Segment]) -> Iterator[Segment]:
    """Rendered lines without the spaces rich adds at their ends: a table pads each line to its
    width, an indented block to its widest line, a wrapped line keeps the space it broke at;
    a terminal does not show them, and a file, a diff or `grep 'x$'` does. Text shown as it was
    written (render.verbatim: the model's, a tool's) keeps its own: a model's answer may end a
    line with two spaces on purpose (a Markdown hard break)."""
    from rich.segment import Segment

    line: list[Segment] = []
    for segment in segments:
        if segment.control or "\n" not in segment.text:
            line.append(segment)
            continue
        *ended, rest = segment.text.split("\n")
        for part in ended:
            yield from line_end_trimmed([*line, Segment(part, segment.style)])
            yield Segment("\n", segment.style)
            line = []
        line = [Segment(rest, segment.style)] if rest else []
    yield from line  # an unfinished line: what is printed next may go on with it


def line_end_trimmed(line: list[Segment]) -> list[Segment]:
    """The line without the spaces at its end, back to text shown as it was written."""
    from rich.segment import Segment

    from toolcall_cli.render.verbatim import is_verbatim

    while line and not line[-1].control and not is_verbatim(line[-1].style):
        last = line.pop()
        kept = last.text.rstrip(" ")
        if kept:
            line.append(Segment(kept, last.style))
            break
    return line


@contextlib.contextmanager
def status_line(title: str) -> Iterator[Callable[[str], None]]:
    """On a terminal, a line on stderr that says what is going on, gone when done; elsewhere
    nothing."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda _: None
        return
    with console.status(title) as status:
        yield status.update


def report_stop(event: Event) -> None:
    """Without the live view, why a run failed also goes to stderr as one line, so a script
    reading stdout (or nothing, with --quiet) still learns it."""
    from toolcall_cli.events import FinalAnswer, LimitReached, ModelFailed, Notice

    if isinstance(event, ModelFailed) or (isinstance(event, Notice) and event.level == "error"):
        typer.echo(f"toolcall: error: {event.message}", err=True)
    elif isinstance(event, LimitReached):
        typer.echo(f"toolcall: {event.message}", err=True)
    elif isinstance(event, FinalAnswer):
        # After "without a final answer", --quiet prints an answer: this says what it is.
        if event.best_effort:
            typer.echo(
                "toolcall: the answer is best effort: made without tools at the limit", err=True
            )
        if event.cut:
            from toolcall_cli.render.base import CUT_ANSWER

            typer.echo(f"toolcall: the answer was {CUT_ANSWER} (--max-tokens)", err=True)


@dataclass(frozen=True)
class RunTrace:
    """The run's trace, if it has one (see _tracing.start_trace). A write that fails stops the
    run with one line and exit 1, rather than letting it go on with a trace that silently ends
    early."""

    writer: TraceWriter | None = None
    """Chat records its runs one by one through the writer itself."""
    default: bool = False
    """In the trace directory, where the user did not say: then its path is shown once."""

    @property
    def path(self) -> Path | None:
        return self.writer.path if self.writer is not None else None

    def write(self, event: Event) -> None:
        """Raises TraceWriteError when the trace stops taking writes."""
        if self.writer is not None:
            self.writer.write(event)

    def script_end(self, end: ScriptEnd) -> None:
        """Raises TraceWriteError when the trace stops taking writes."""
        if self.writer is not None:
            self.writer.script_end(end)

    def cut_short(self, reason: InterruptReason, detail: str, final: RunFinished | None) -> None:
        """The end of a run that did not end itself: its final event (unless it had sent one),
        then the `interrupted` line. A trace that cannot take them keeps what it has."""
        from toolcall_cli.trace import TraceWriteError

        if self.writer is None:
            return
        with contextlib.suppress(TraceWriteError):
            if final is not None:
                self.writer.write(final)
            self.writer.interrupted(reason, " ".join(detail.split()))

    def crashed(self, error: Exception, final: RunFinished | None) -> None:
        """The end of a run an exception stopped: a bug, or the terminal hung up under it."""
        if terminal_gone(error):
            self.cut_short("sighup", "the terminal hung up (its window closed)", final)
        else:
            self.cut_short("crash", f"{type(error).__name__}: {error}", final)

    def stopped(self, stop: KeyboardInterrupt | Terminated, final: RunFinished | None) -> None:
        """The end of a run stopped from outside: by Ctrl-C, or by SIGTERM or SIGHUP."""
        if isinstance(stop, Terminated):
            self.cut_short(stop.reason, f"terminated ({stop.signal.name})", final)
        else:
            self.cut_short("ctrl-c", "interrupted by Ctrl-C", final)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def show_path(self, mode: RenderMode) -> None:
        """Where a default trace went, said once: under the live view's footer, or on stderr
        for plain text; --quiet and --json keep their output to what they promise."""
        if not self.default or self.path is None:
            return
        if mode == "live":
            from rich.text import Text

            # One line the terminal wraps, never rich: a path cut by a newline cannot be copied.
            pipe_console().print(Text(f"trace {self.path}", style="dim"), soft_wrap=True)
        elif mode == "plain":
            typer.echo(f"toolcall: trace {self.path}", err=True)


@contextlib.contextmanager
def renderer_stdout(mode: RenderMode) -> Iterator[IO[str] | None]:
    """stdout for the renderer alone while a run is shown as --json, --quiet or plain text.

    What a tool prints itself is caught per call (tools/_capture.py); this catches what is below
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
    encoding = sys.stdout.encoding or "utf-8"
    stream = open(own, "w", encoding=encoding, errors=strictjson.STREAM_ERRORS)  # noqa: SIM115
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
    run_trace: RunTrace,
    answers: Answers | None = None,
    show_request: bool = False,
    script: ScriptedModel | None = None,
    *,
    explain: Explain | None = None,
) -> int:
    """Render a run's events, trace them, and return the exit code the run's end calls for.
    `script`: the run's scripted model, whose script not lining up with the run is told before
    the run's end. `answers`: who answers what the run asks (approval, --step), with the view
    suspended while they ask; `explain`: notes after the steps (--explain)."""
    from toolcall_cli.render import make_renderer
    from toolcall_cli.render.explain import Explain
    from toolcall_cli.session import answered

    try:
        with renderer_stdout(mode) as stdout:
            renderer = make_renderer(mode, stdout, show_request=show_request)
            events = answered(events, answers, renderer.suspended)
            renderer = (explain or Explain()).wrap(renderer)
            return _render(events, mode, run_trace, renderer, script)
    finally:
        run_trace.close()


def tell_script_ends(
    ends: Sequence[ScriptEnd], mode: RenderMode, run_trace: RunTrace, renderer: Renderer
) -> bool:
    """Each way the script and the run did not line up: a record in the trace, and a notice in
    the view (and a line on stderr where there is no live view, as for a failure) unless the
    run's model failure already said it. Whether there was any."""
    from toolcall_cli.events import Notice

    for end in ends:
        run_trace.script_end(end)
        if end.told_by_failure:
            continue
        renderer.handle(Notice(level="warning", message=end.message))
        if mode != "live":
            typer.echo(f"toolcall: {end.message}", err=True)
    return bool(ends)


def script_mismatch_code(code: int) -> int:
    """The exit code of a run whose script did not line up with it: the run's own answer,
    failure or limit are owed to the script, so they give way; a usage error or Ctrl-C not."""
    return EXIT_SCRIPT_MISMATCH if code in (EXIT_ANSWERED, EXIT_FAILURE, EXIT_LIMIT) else code


def _render(
    events: Iterator[Event],
    mode: RenderMode,
    run_trace: RunTrace,
    renderer: Renderer,
    script: ScriptedModel | None,
) -> int:
    from toolcall_cli.trace import RunProgress, TraceWriteError

    progress = RunProgress()
    code = EXIT_FAILURE
    mismatch = False
    try:
        try:
            code, mismatch = _show_events(events, mode, run_trace, renderer, script, progress)
        except (KeyboardInterrupt, Terminated) as stop:
            # One final event for both, so a program reading --json learns what the trace says.
            final = progress.interrupted()
            run_trace.stopped(stop, final)
            renderer.handle(final)
            if isinstance(stop, Terminated):
                raise
            code = EXIT_INTERRUPTED
        except BrokenPipeError:
            # stdout's reader left; the trace (if it still can) says how the run ended.
            run_trace.cut_short("broken-pipe", "stdout's reader left", progress.interrupted())
            raise
        except TraceWriteError:
            raise
        except Exception as error:
            # A bug: the trace keeps how far the run got, then main() says it in one line.
            last = None if progress.finished else progress.interrupted()
            run_trace.crashed(error, last)
            raise
        finally:
            # Also on an unexpected error, so the terminal is never left with a live region.
            renderer.close()
    except TraceWriteError as error:
        fail(str(error), EXIT_FAILURE)
    if code == EXIT_INTERRUPTED:
        typer.echo("toolcall: interrupted", err=True)
    return script_mismatch_code(code) if mismatch else code


def _show_events(
    events: Iterator[Event],
    mode: RenderMode,
    run_trace: RunTrace,
    renderer: Renderer,
    script: ScriptedModel | None,
    progress: RunProgress,
) -> tuple[int, bool]:
    """Each event to the trace, then the view; the exit code the run's end calls for, and
    whether the script (if any) did not line up with the run."""
    from toolcall_cli.events import RunFinished

    code, mismatch = EXIT_FAILURE, False
    for event in events:
        progress.add(event)
        if isinstance(event, RunFinished) and script is not None:
            ends = script.ends(final=True)
            mismatch = tell_script_ends(ends, mode, run_trace, renderer) or mismatch
        run_trace.write(event)  # first: the trace keeps an event stdout broke on
        renderer.handle(event)
        if mode != "live":
            report_stop(event)
        if isinstance(event, RunFinished):
            code = EXIT_BY_STOP[event.stop_reason]
    return code, mismatch
