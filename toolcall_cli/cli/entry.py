"""The typer app, exit codes, and how `main` turns every way a command ends into one of them."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from toolcall_cli import strictjson
from toolcall_cli.termination import Terminated

try:  # typer >= 0.26 vendors click and raises its own copies of click's exceptions
    from typer._click import exceptions as click_exceptions
    from typer._click.core import Context as ClickContext
except ImportError:  # pragma: no cover - older typer uses the click package
    from click import Context as ClickContext  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]
    from click import exceptions as click_exceptions  # type: ignore[import-not-found, no-redef, unused-ignore]


EXIT_ANSWERED = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_LIMIT = 3
EXIT_PROBLEMS = 4
"""`toolcall doctor` found problems in the trace."""
EXIT_DIFFERENT = 5
"""`toolcall replay`: the replayed run differs from the recording."""
EXIT_SCRIPT_MISMATCH = 6
"""`--model scripted`: the script and the run did not line up (a request found no reply left,
or the run ended with replies unused). It replaces the run's own 0, 1 or 3."""
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
"""SIGTERM (`kill`, `timeout`, a process manager): 128 + 15, as the shell reports it."""
EXIT_OUTPUT_CLOSED = 141
"""The reader of stdout left early (`| head -1`): 128 + SIGPIPE, what the shell reports for
any program cut off that way. Not 0: a run cut short has not answered."""

EXIT_BY_STOP = {
    "answered": EXIT_ANSWERED,
    "input_rejected": EXIT_USAGE,
    "limit": EXIT_LIMIT,
    "model_failed": EXIT_FAILURE,
    "interrupted": EXIT_INTERRUPTED,
}


def _terminate(signum: int, frame: object) -> None:
    if signum == getattr(signal, "SIGHUP", None):
        # The terminal is gone: a write to it fails (EIO) and would end a chat as a crash,
        # before the trace is told of the hang-up. Output to a file or pipe is kept.
        silence_output(terminals_only=True)
    raise Terminated(signum)


@contextlib.contextmanager
def first_stop_only() -> Iterator[None]:
    """Within the block, the first Ctrl-C, SIGTERM or SIGHUP acts as it always does, and every
    one after it is ignored: an eval that stops ends its runs' traces and says what it kept,
    and a second Ctrl-C pressed while it does so cut that short, leaving traces without their
    end. Signals set to be ignored (`nohup`) stay so. Only the main thread may set handlers;
    elsewhere the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = False
    before: dict[int, Callable[[int, Any], Any]] = {}

    def once(signum: int, frame: Any) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            before[signum](signum, frame)

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):  # no SIGHUP on Windows
        number = getattr(signal, name, None)
        handler = signal.getsignal(number) if number is not None else None
        if number is not None and callable(handler):
            before[number] = handler
            signal.signal(number, once)
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


EXIT_HUNG_UP = 129
"""The terminal hung up (its window closed): 128 + SIGHUP, as the shell reports it."""


_TERMINALS: list[int] = []
"""stdout and stderr, those of them that were a terminal at start: a terminal that hung up
answers isatty() with no, so it is known by this record."""


def terminal_gone(error: BaseException) -> bool:
    """A write to a terminal that hung up fails with EIO, often before SIGHUP arrives: the
    user closed the window, and toolcall has no bug to report. An EIO from anything else (a
    failing disk) is not this, and is said as an error."""
    if not (isinstance(error, OSError) and error.errno == errno.EIO):
        return False
    return any(not os.isatty(fd) for fd in _TERMINALS)


FULL_DISK = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""A write the disk refused: said as one error line (exit 1), never as a bug in toolcall."""


class OutputClosed(Exception):
    """stdout's reader went away. Deliberately not an OSError: typer's own handler would turn a
    broken pipe into exit 1 before main() could see it."""


class ToolcallGroup(TyperGroup):
    """The command group; a broken pipe anywhere in parsing (help, --version) or in a command
    reaches main() as OutputClosed."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: ClickContext | None = None,
        **extra: Any,
    ) -> ClickContext:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError as error:
            raise OutputClosed from error

    def resolve_command(
        self, ctx: ClickContext, args: list[str]
    ) -> tuple[str | None, Any, list[str]]:
        from toolcall_cli.cli._plain_values import pass_plain_values

        name, command, rest = super().resolve_command(ctx, args)
        # The command's context will take its help option's names from this one unless it
        # names its own, so its parameters, --help included, are known here.
        if command is not None and "help_option_names" not in command.context_settings:
            pass_plain_values(command.get_params(ctx))  # spares a run pydantic (_plain_values.py)
        return name, command, rest

    def get_params(self, ctx: ClickContext) -> list[Any]:
        from toolcall_cli.cli._plain_values import pass_plain_values

        params = super().get_params(ctx)
        pass_plain_values(params)  # the group's own: --version, --help
        return params

    def invoke(self, ctx: ClickContext) -> Any:
        from toolcall_cli.app.errors import AppError

        try:
            return super().invoke(ctx)
        except BrokenPipeError as error:
            raise OutputClosed from error
        except AppError as error:  # assembly said no: its one line, and the kind's exit code
            fail(error.message, EXIT_USAGE if error.kind == "usage" else EXIT_FAILURE)
        except KeyboardInterrupt:
            # Said here: typer would turn it into a silent exit 130. A command that says it
            # itself (run, chat) returns its code instead of raising.
            typer.echo("toolcall: interrupted", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None


app = typer.Typer(
    cls=ToolcallGroup,
    name="toolcall",
    help="Watch LLM tool use (function calling) work, step by step.",
    no_args_is_help=True,
    add_completion=True,  # `--install-completion`: bash, zsh, fish, PowerShell (README)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # Every command and group below takes its help option's names from here.
    context_settings={"help_option_names": ["-h", "--help"]},
)
config_app = typer.Typer(
    help="Where the config file is, and what it resolves to.", no_args_is_help=True
)


def show_version(value: bool) -> None:
    if value:
        from toolcall_cli.version import __version__

        typer.echo(f"toolcall {__version__}")
        raise typer.Exit(0)


@app.callback()
def toolcall_app(
    version: Annotated[
        bool,
        typer.Option("--version", callback=show_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Watch LLM tool use (function calling) work, step by step."""


trace_app = typer.Typer(
    help="The recorded runs: list them, or show one again (see docs/traces.md).",
    no_args_is_help=True,
)


app.add_typer(config_app, name="config")
app.add_typer(trace_app, name="trace")


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    typer.echo(f"toolcall: error: {message}", err=True)
    raise typer.Exit(code)


def warn(message: str) -> None:
    typer.echo(f"toolcall: warning: {message}", err=True)


def silence_output(terminals_only: bool = False) -> None:
    """Point stdout and stderr (or those of them that were a terminal at start) at devnull, so
    what is still buffered for a reader that left (a pipe nobody reads, a terminal that hung
    up) cannot fail again in the interpreter's final flush ("Exception ignored ...")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        # A stream without a descriptor has nothing to flush to a pipe.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if not terminals_only or stream.fileno() in _TERMINALS:
                os.dup2(devnull, stream.fileno())
    os.close(devnull)


def main() -> None:
    """Entry point: usage errors become one line and exit code 2, never a traceback."""
    for stream in (sys.stdout, sys.stderr):
        # A character the terminal or pipe cannot take (PYTHONIOENCODING=ascii, or a lone
        # surrogate a model's `\ud800` decodes to) is written as its \uXXXX escape: no crash,
        # and no `?` that changes the data.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=strictjson.STREAM_ERRORS)
    _TERMINALS[:] = [fd for fd in (1, 2) if os.isatty(fd)]
    for name in ("SIGTERM", "SIGHUP"):  # no SIGHUP on Windows
        # Only where the signal would end the process anyway: `nohup toolcall serve` (its
        # SIGHUP ignored) must outlive the terminal it was started from.
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, _terminate)
    try:
        code = run_app()
        # A reader that left shows here at the latest, not in the interpreter's last flush.
        sys.stdout.flush()
    except (OutputClosed, BrokenPipeError):
        # The reader went away (`toolcall run ... | head -1`), perhaps while an error line was
        # being written: not an error worth a word.
        silence_output()
        code = EXIT_OUTPUT_CLOSED
    sys.exit(code)


def system_failure(error: Exception) -> int | None:
    """The exit code of an error that is the system's doing, not a bug in toolcall; None for
    any other."""
    if terminal_gone(error):
        silence_output(terminals_only=True)
        return EXIT_HUNG_UP
    if isinstance(error, OSError) and error.errno in FULL_DISK:
        # `toolcall run ... > out.txt` on a full disk: the disk's failure, not a bug.
        typer.echo(f"toolcall: error: cannot write: {error.strerror}", err=True)
        return EXIT_FAILURE
    return None


def run_app() -> int:
    """The app's exit code, with every way out of it turned into one."""
    try:
        code = app(standalone_mode=False)
    except click_exceptions.UsageError as error:
        if "NoArgsIsHelp" in type(error).__name__:  # `toolcall` alone: its help, not an error
            typer.echo(error.ctx.get_help() if error.ctx else error.format_message())
            return 0
        from toolcall_cli.cli._bad_values import bad_value_line, dash_hint

        hint = f" (see `{error.ctx.command_path} --help`)" if error.ctx else ""
        line = (bad_value_line(error) or error.format_message()) + dash_hint(error)
        typer.echo(f"toolcall: error: {line}{hint}", err=True)
        return EXIT_USAGE
    except typer.Exit as done:
        return done.exit_code
    except Terminated as stop:
        with contextlib.suppress(OSError):  # stderr may be the terminal that hung up
            typer.echo("toolcall: terminated", err=True)
        return 128 + stop.signal
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("toolcall: interrupted", err=True)
        return EXIT_INTERRUPTED
    except (OutputClosed, BrokenPipeError):
        raise
    except Exception as error:  # a bug: say so in one line; TOOLCALL_DEBUG=1 shows the traceback
        system = system_failure(error)
        if system is not None:
            return system
        if os.environ.get("TOOLCALL_DEBUG"):
            raise
        typer.echo(
            f"toolcall: internal error: {type(error).__name__}: {error} "
            "(a bug in toolcall; TOOLCALL_DEBUG=1 shows the traceback)",
            err=True,
        )
        return EXIT_FAILURE
    return code if isinstance(code, int) else 0
