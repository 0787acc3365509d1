"""The `toolcall` command: parse flags, assemble a session, pick a renderer. No loop logic here."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from toolcall_cli import strictjson

try:  # typer >= 0.26 vendors click and raises its own copies of click's exceptions
    from typer._click import exceptions as click_exceptions
    from typer._click.core import Context as ClickContext
except ImportError:  # pragma: no cover - older typer uses the click package
    from click import Context as ClickContext  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]
    from click import exceptions as click_exceptions  # type: ignore[import-not-found, no-redef, unused-ignore]

from toolcall_cli.approval import approver, attach
from toolcall_cli.config import (
    LIMIT_SETTINGS,
    ConfigError,
    FileConfig,
    config_path,
    load_config,
    mask,
    resolve,
    resolve_limits,
)
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
from toolcall_cli.loop import Approver, Limits
from toolcall_cli.models import (
    LOCAL_MODELS,
    ModelChoice,
    ModelConfigError,
    check_base_url,
    get_model,
)
from toolcall_cli.models.base import Model
from toolcall_cli.models.paced import PacedModel
from toolcall_cli.private_files import PathProblem
from toolcall_cli.render import RenderMode, make_renderer
from toolcall_cli.session import Session
from toolcall_cli.strategies import UnknownStrategy, get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.loader import load_tools, tool_dirs
from toolcall_cli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from rich.console import Console

    from toolcall_cli.trace import TraceWriter

EXIT_ANSWERED = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_LIMIT = 3
EXIT_INTERRUPTED = 130
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

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as error:
            raise OutputClosed from error


app = typer.Typer(
    cls=ToolcallGroup,
    name="toolcall",
    help="Watch LLM tool use (function calling) work, step by step.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
config_app = typer.Typer(
    help="Where the config file is, and what it resolves to.", no_args_is_help=True
)


def show_version(value: bool) -> None:
    if value:
        from toolcall_cli import __version__

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


app.add_typer(config_app, name="config")


class StrategyName(str, Enum):
    regex = "regex"
    schema = "schema"
    stream = "stream"


class SchemaMode(str, Enum):
    tools = "tools"
    json = "json"


class StreamMode(str, Enum):
    tags = "tags"
    native = "native"


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    typer.echo(f"toolcall: error: {message}", err=True)
    raise typer.Exit(code)


def warn(message: str) -> None:
    typer.echo(f"toolcall: warning: {message}", err=True)


# --- shared options ---------------------------------------------------------------------------

StrategyOpt = Annotated[
    StrategyName | None,
    typer.Option(
        "--strategy", "-s", help="How tools go on the wire: regex (default), schema, stream."
    ),
]
SchemaModeOpt = Annotated[
    SchemaMode,
    typer.Option("--schema-mode", help="schema: native `tools`, or `json` structured output."),
]
StreamModeOpt = Annotated[
    StreamMode,
    typer.Option("--stream-mode", help="stream: tagged text, or native tool_calls deltas."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="offline (default), scripted, or a model name at --base-url."
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option("--profile", "-p", help="A named endpoint: openai, deepseek, qwen, ollama, ..."),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url", help="An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"
    ),
]
ApiKeyOpt = Annotated[
    str | None, typer.Option("--api-key", help="API key (better: the profile's key variable).")
]
ConnectTimeoutOpt = Annotated[
    float, typer.Option("--connect-timeout", min=0.1, help="Seconds to wait for a connection.")
]
ReadTimeoutOpt = Annotated[
    float, typer.Option("--read-timeout", min=0.1, help="Seconds to wait for the model to answer.")
]
ScriptOpt = Annotated[
    Path | None, typer.Option("--script", help="Replies for --model scripted (JSON list or JSONL).")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for the offline model.")]
FaultsOpt = Annotated[
    str | None,
    typer.Option(
        "--faults", help="Make the offline model misbehave: KIND[,KIND...] (toolcall faults)."
    ),
]
FaultRateOpt = Annotated[
    float,
    typer.Option(
        "--fault-rate", min=0.0, max=1.0, help="Chance a fault fires where it can (0..1)."
    ),
]
ToolsOpt = Annotated[
    list[Path] | None, typer.Option("--tools", help="Another tools.d directory (repeatable).")
]
NoDefaultToolsOpt = Annotated[
    bool, typer.Option("--no-default-tools", help="Leave the bundled tools out.")
]
DEFAULT_LIMITS = Limits()
"""Where the limit flags' defaults come from, so the loop's defaults are written once. The flags
themselves default to None, so that a flag not given lets the config file's [limits] speak."""


def limit_minimum(key: str) -> float:
    return LIMIT_SETTINGS[key].minimum


MaxIterOpt = Annotated[
    int | None,
    typer.Option(
        "--max-iterations",
        min=int(limit_minimum("max_iterations")),
        help=f"Stop after this many model requests (default {DEFAULT_LIMITS.max_iterations}).",
    ),
]
ToolTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--tool-timeout",
        min=limit_minimum("tool_timeout"),
        help=f"Default per-tool timeout in seconds (default {DEFAULT_LIMITS.tool_timeout:g}).",
    ),
]
RunTimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=limit_minimum("timeout"), help="Seconds for the whole run."),
]
ResultCharsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-result-chars",
        min=int(limit_minimum("max_result_chars")),
        help="Cut longer tool results before feeding back "
        f"(default {DEFAULT_LIMITS.max_result_chars:,}).",
    ),
]
FailedRoundsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-failed-rounds",
        min=int(limit_minimum("max_failed_rounds")),
        help="Rounds in a row without progress before the model must answer without tools "
        f"(default {DEFAULT_LIMITS.max_failed_rounds}).",
    ),
]
HistoryRoundsOpt = Annotated[
    int | None,
    typer.Option(
        "--history-rounds",
        min=int(limit_minimum("history_rounds")),
        help="Tool rounds sent in full; older ones are summarised "
        f"(default {DEFAULT_LIMITS.history_rounds}).",
    ),
]
ReplyCharsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-reply-chars",
        min=int(limit_minimum("max_reply_chars")),
        help="Stop a reply (text, reasoning and call arguments) longer than this "
        f"(default {DEFAULT_LIMITS.max_reply_chars:,}).",
    ),
]
ResponseBytesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-response-bytes",
        min=int(limit_minimum("max_response_bytes")),
        help="Stop an HTTP answer larger than this after decompression "
        f"(default {DEFAULT_LIMITS.max_response_bytes:,}).",
    ),
]
LineBytesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-line-bytes",
        min=int(limit_minimum("max_line_bytes")),
        help=f"Stop a streamed line longer than this (default {DEFAULT_LIMITS.max_line_bytes:,}).",
    ),
]
RequestTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        min=limit_minimum("request_timeout"),
        help="Seconds one model request may take in all, however the server trickles "
        f"(default {DEFAULT_LIMITS.request_timeout:g}).",
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the final answer.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON event per line.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Run dangerous tools without asking.")]
PaceOpt = Annotated[
    float | None,
    typer.Option(
        "--pace",
        min=0.0,
        help="Seconds between streamed chunks of the offline/scripted model "
        "(default: 0.02 in the live view, else 0).",
    ),
]
ShowRequestOpt = Annotated[
    bool, typer.Option("--show-request", help="Show each request body as sent (live view).")
]
TraceOpt = Annotated[
    Path | None, typer.Option("--trace", help="Also write every event as JSON lines to this file.")
]


LIMIT_FIELDS = {key: "run_timeout" if key == "timeout" else key for key in LIMIT_SETTINGS}
"""Each `[limits]` key's field in Limits and SessionOptions (`--timeout` is run_timeout)."""


@dataclass(frozen=True)
class SessionOptions:
    strategy: StrategyName | None = None
    schema_mode: SchemaMode = SchemaMode.tools
    stream_mode: StreamMode = StreamMode.tags
    model: str | None = None
    profile: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    script: Path | None = None
    seed: int = 0
    tools: tuple[Path, ...] = ()
    no_default_tools: bool = False
    yes: bool = False
    # Limits: None means the flag was not given (the config file or Limits decides).
    max_iterations: int | None = None
    tool_timeout: float | None = None
    run_timeout: float | None = None
    max_result_chars: int | None = None
    history_rounds: int | None = None
    max_failed_rounds: int | None = None
    max_reply_chars: int | None = None
    max_response_bytes: int | None = None
    max_line_bytes: int | None = None
    request_timeout: float | None = None
    pace: float = 0.0
    faults: tuple[str, ...] = ()
    fault_rate: float = 1.0

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], *, mode: str) -> SessionOptions:
        """The session options among a command's flags (its `locals()`), normalised."""
        names = {f.name for f in dataclasses.fields(cls)}
        chosen = {key: value for key, value in flags.items() if key in names}
        chosen["tools"] = tuple(flags.get("tools") or ())
        chosen["faults"] = fault_names(flags.get("faults"))
        chosen["pace"] = pace_for(flags.get("pace"), mode)
        return cls(**chosen)

    def limit_flags(self) -> dict[str, Any]:
        """The limit flags by `[limits]` key; None where not given."""
        return {key: getattr(self, name) for key, name in LIMIT_FIELDS.items()}


def file_config() -> FileConfig:
    try:
        return load_config(config_path())
    except ConfigError as error:
        fail(str(error))


def session_limits(options: SessionOptions, config: FileConfig) -> Limits:
    """Flags > the config file's [limits] > Limits' defaults."""
    try:
        chosen, _ = resolve_limits(options.limit_flags(), config)
    except ConfigError as error:
        fail(str(error))
    return limits_with(chosen)


def limits_with(chosen: Mapping[str, int | float]) -> Limits:
    """Limits with the given `[limits]` keys' values; the rest keep their defaults."""
    fields: dict[str, Any] = {LIMIT_FIELDS[key]: value for key, value in chosen.items()}
    return dataclasses.replace(DEFAULT_LIMITS, **fields)


def pipe_console() -> Console:
    """A rich Console for stdout whose broken pipe reaches main() like any other command's
    (rich's own handling exits 1 on the spot)."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return PipeConsole(highlight=False)


def load_registry(extra: tuple[Path, ...], no_default_tools: bool) -> ToolRegistry:
    dirs = tool_dirs(list(extra), include_bundled=not no_default_tools, cwd=Path.cwd())
    loaded = load_tools(dirs, explicit=list(extra))
    for problem in loaded.problems:
        warn(problem)
    return loaded.registry


def model_choice(
    options: SessionOptions, config: FileConfig | None = None, limits: Limits = DEFAULT_LIMITS
) -> tuple[ModelChoice, str]:
    """The model to build and the strategy name, after flags > environment > config > defaults."""
    try:
        resolved = resolve(
            flags={
                "model": options.model,
                "profile": options.profile,
                "base_url": options.base_url,
                "api_key": options.api_key,
                "strategy": options.strategy.value if options.strategy else None,
            },
            config=config if config is not None else file_config(),
        )
    except ConfigError as error:
        fail(str(error))
    if options.script and resolved.model != "scripted":
        fail(f"--script is for --model scripted (the model is {resolved.model})")
    if resolved.base_url and resolved.model in LOCAL_MODELS:
        check_endpoint_has_a_model(resolved.sources)
    elif resolved.base_url:
        try:
            where = base_url_setting(resolved.sources.get("base_url", ""))
            check_base_url(resolved.base_url, where)
        except ModelConfigError as error:
            fail(str(error))
    choice = ModelChoice(
        name=resolved.model,
        seed=options.seed,
        script=options.script,
        base_url=resolved.base_url,
        api_key=resolved.api_key,
        connect_timeout=options.connect_timeout,
        read_timeout=options.read_timeout,
        max_response_bytes=limits.max_response_bytes,
        max_line_bytes=limits.max_line_bytes,
        request_timeout=limits.request_timeout,
        key_note=resolved.key_note,
        faults=options.faults,
        fault_rate=options.fault_rate,
    )
    return choice, resolved.strategy


def base_url_setting(source: str) -> str:
    """How a user would name the setting the base URL came from."""
    if source.startswith("env "):
        return "$" + source.removeprefix("env ")
    if source.startswith("profile "):
        return f"profile {source.removeprefix('profile ')!r}'s base_url"
    return "base_url in the config file" if source == "config" else "--base-url"


def check_endpoint_has_a_model(sources: Mapping[str, str]) -> None:
    """An endpoint the user named, with a local model: the model name was forgotten. (A
    profile's URL or $OPENAI_BASE_URL with an offline run is not a mistake: both are commonly
    set while the demo model is used.)"""
    if sources.get("base_url") == "flag":
        fail("--base-url needs --model NAME: the model's name at that endpoint")
    if sources.get("base_url") == "config" and sources.get("model") == "default":
        fail(
            'the config file\'s [defaults] base_url needs --model NAME (or model = "NAME" in '
            "[defaults]): the model's name at that endpoint"
        )


def pick_strategy(name: str, options: SessionOptions) -> Strategy:
    try:
        return get_strategy(
            name, schema_mode=options.schema_mode.value, stream_mode=options.stream_mode.value
        )
    except UnknownStrategy as error:
        fail(str(error))


def make_model(choice: ModelChoice, pace: float) -> Model:
    """The model a choice names; local models' streams are paced for the live view."""
    model = get_model(choice)
    if pace > 0 and choice.name in LOCAL_MODELS:
        return PacedModel(model, pace)
    return model


def build_session(options: SessionOptions) -> tuple[Session, ModelChoice]:
    """The session, and the model choice it was built from (chat's /model starts from it)."""
    config = file_config()
    limits = session_limits(options, config)
    choice, strategy_name = model_choice(options, config, limits)
    try:
        model = make_model(choice, options.pace)
    except ModelConfigError as error:
        fail(str(error))
    session = Session(
        model=model,
        strategy=pick_strategy(strategy_name, options),
        registry=load_registry(options.tools, options.no_default_tools),
        limits=limits,
        approve=approver(options.yes),
    )
    return session, choice


def pace_for(pace: float | None, mode: str) -> float:
    """Streamed replies of the local models are spaced out only where someone is watching
    (the pause applies to streaming requests only)."""
    if pace is not None:
        return pace
    return 0.02 if mode == "live" else 0.0


def fault_names(faults: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (faults or "").split(",") if name.strip())


def output_mode(quiet: bool, as_json: bool) -> RenderMode:
    if quiet and as_json:
        fail("--quiet and --json cannot be used together")
    if as_json:
        return "json"
    if quiet:
        return "quiet"
    return "live" if sys.stdout.isatty() else "plain"


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


def render_run(
    events: Iterator[Event],
    mode: RenderMode,
    trace: Path | None = None,
    approve: Approver | None = None,
    show_request: bool = False,
) -> int:
    """Render a run's events, trace them, and return the exit code the run's end calls for."""
    run_trace = open_trace(trace)
    renderer = make_renderer(mode, show_request=show_request)
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


# --- commands ---------------------------------------------------------------------------------


@app.command()
def run(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    strategy: StrategyOpt = None,
    schema_mode: SchemaModeOpt = SchemaMode.tools,
    stream_mode: StreamModeOpt = StreamMode.tags,
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    read_timeout: ReadTimeoutOpt = 120.0,
    script: ScriptOpt = None,
    seed: SeedOpt = 0,
    faults: FaultsOpt = None,
    fault_rate: FaultRateOpt = 1.0,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    max_iterations: MaxIterOpt = None,
    tool_timeout: ToolTimeoutOpt = None,
    run_timeout: RunTimeoutOpt = None,
    max_result_chars: ResultCharsOpt = None,
    history_rounds: HistoryRoundsOpt = None,
    max_failed_rounds: FailedRoundsOpt = None,
    max_reply_chars: ReplyCharsOpt = None,
    max_response_bytes: ResponseBytesOpt = None,
    max_line_bytes: LineBytesOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
    yes: YesOpt = False,
    trace: TraceOpt = None,
    show_request: ShowRequestOpt = False,
    pace: PaceOpt = None,
) -> None:
    """Answer one question, showing every iteration of the tool-use loop."""
    if not question.strip():
        fail("the question is empty")
    mode = output_mode(quiet, as_json)
    session, _ = build_session(SessionOptions.from_flags(locals(), mode=mode))
    try:
        code = render_run(session.ask(question), mode, trace, session.approve, show_request)
    finally:
        session.close()
    raise typer.Exit(code)


@app.command()
def chat(
    strategy: StrategyOpt = None,
    schema_mode: SchemaModeOpt = SchemaMode.tools,
    stream_mode: StreamModeOpt = StreamMode.tags,
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    read_timeout: ReadTimeoutOpt = 120.0,
    script: ScriptOpt = None,
    seed: SeedOpt = 0,
    faults: FaultsOpt = None,
    fault_rate: FaultRateOpt = 1.0,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    max_iterations: MaxIterOpt = None,
    tool_timeout: ToolTimeoutOpt = None,
    run_timeout: RunTimeoutOpt = None,
    max_result_chars: ResultCharsOpt = None,
    history_rounds: HistoryRoundsOpt = None,
    max_failed_rounds: FailedRoundsOpt = None,
    max_reply_chars: ReplyCharsOpt = None,
    max_response_bytes: ResponseBytesOpt = None,
    max_line_bytes: LineBytesOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    yes: YesOpt = False,
    pace: PaceOpt = None,
    history_file: Annotated[
        Path | None, typer.Option("--history-file", help="Where the input history is kept.")
    ] = None,
) -> None:
    """A conversation that keeps its memory between questions (/help for commands)."""
    from toolcall_cli.repl import Repl, default_history_file

    mode = "live" if sys.stdout.isatty() else "plain"
    options = SessionOptions.from_flags(locals(), mode=mode)
    session, choice = build_session(options)

    def switch_model(name: str) -> Model:
        return make_model(dataclasses.replace(choice, name=name), options.pace)

    try:
        # The history file is checked here, so a path that cannot work stops the chat unstarted.
        repl = Repl(
            session, history_file=history_file or default_history_file(), make_model=switch_model
        )
        code = repl.loop()
    except PathProblem as error:
        fail(str(error))
    finally:
        session.close()
    raise typer.Exit(code)


@app.command("tools")
def tools_command(
    name: Annotated[str | None, typer.Argument(help="Show this tool's JSON Schema.")] = None,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
) -> None:
    """List the loaded tools and their source files, or print one tool's JSON Schema."""
    registry = load_registry(tuple(tools or ()), no_default_tools)
    if name is not None:
        found = registry.get(name)
        if found is None:
            available = ", ".join(registry.names()) or "none"
            fail(f"no tool named {name!r}; loaded tools: {available}")
        typer.echo(strictjson.dumps(found.spec.to_openai()["function"], indent=2))
        return
    from toolcall_cli.render.tables import print_tool_table

    print_tool_table(list(registry), pipe_console())


@app.command()
def prompt(
    question: Annotated[str, typer.Argument(help="The question the request would carry.")],
    strategy: StrategyOpt = None,
    schema_mode: SchemaModeOpt = SchemaMode.tools,
    stream_mode: StreamModeOpt = StreamMode.tags,
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
) -> None:
    """Print the exact first request the model would receive, as JSON."""
    from toolcall_cli.messages import user

    options = SessionOptions(strategy, schema_mode, stream_mode, model, profile)
    choice, strategy_name = model_choice(options)
    registry = load_registry(tuple(tools or ()), no_default_tools)
    request = pick_strategy(strategy_name, options).build_request(
        [user(question)], registry.specs(), choice.name
    )
    typer.echo(strictjson.dumps(request.body, indent=2))


@app.command()
def parse(
    file: Annotated[
        Path | None, typer.Argument(help="A file holding the raw model output; stdin when absent.")
    ] = None,
    strategy: Annotated[
        StrategyName,
        typer.Option(
            "--strategy",
            "-s",
            help="regex: tagged text at once; stream: in chunks; schema: a native assistant "
            "message (or chat.completion) as JSON.",
        ),
    ] = StrategyName.regex,
    chunk: Annotated[
        int | None, typer.Option("--chunk", min=1, help="stream: feed N characters at a time.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="stream: feed chunks of seeded random sizes.")
    ] = None,
    sse: Annotated[bool, typer.Option("--sse", help="The input is an OpenAI SSE stream.")] = False,
) -> None:
    """Show what the parser makes of a model's raw output, as one JSON object.

    The input, a FILE or stdin alike, must be UTF-8: a byte that is not is a usage error
    naming its byte offset (nothing is guessed or replaced).
    """
    from toolcall_cli.parsing import SseInputError, parse_message, parse_output, parse_sse

    if strategy is not StrategyName.stream and (chunk or seed is not None):
        fail("--chunk and --seed feed the input in pieces: use them with --strategy stream")
    text = read_input(file)
    if sse or strategy is StrategyName.schema:
        try:
            result = parse_sse(text) if sse else parse_message(text)
        except SseInputError as error:
            fail(str(error))
    else:
        if strategy is StrategyName.stream and chunk is None and seed is None:
            chunk = 1
        result = parse_output(text, chunk=chunk, seed=seed)
    typer.echo(strictjson.dumps(result, indent=2))


def read_input(file: Path | None) -> str:
    """The raw output as text, by one rule for a file and for stdin: strict UTF-8. A decoder
    that replaced bad bytes would hand the parser text the model never sent."""
    name = str(file) if file else "stdin"
    try:
        data = file.read_bytes() if file else stdin_bytes()
    except OSError as error:
        fail(f"cannot read {name}: {error.strerror or error}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        fail(
            f"{name} is not valid UTF-8: a bad byte (0x{data[error.start]:02x}) "
            f"at byte offset {error.start}"
        )
    # As text-mode reading did before: \r\n and a lone \r end a line as \n does.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def stdin_bytes() -> bytes:
    if sys.stdin is None:
        fail("stdin is closed: give a FILE, or pipe the model's output in")
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        data: bytes = buffer.read()
        return data
    # A text stream without bytes beneath (some embedders): undo its decoding, bad bytes kept.
    return sys.stdin.read().encode("utf-8", "surrogateescape")


@app.command("faults")
def faults_command() -> None:
    """List the kinds of misbehaviour the offline model can inject (for --faults)."""
    from toolcall_cli.offline import FAULT_KINDS

    width = max(len(name) for name in FAULT_KINDS)
    for name, description in FAULT_KINDS.items():
        typer.echo(f"{name:<{width}}  {description}")


@config_app.command("path")
def config_path_command() -> None:
    """Print where the config file is (it need not exist)."""
    typer.echo(str(config_path()))


@config_app.command("show")
def config_show(
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    strategy: StrategyOpt = None,
) -> None:
    """Show the settings a run would use and where each came from. Keys are masked."""
    from toolcall_cli.models.openai_compat import display_url

    path = config_path()
    try:
        config = load_config(path)
        _, limit_sources = resolve_limits({}, config)
        resolved = resolve(
            flags={
                "model": model,
                "profile": profile,
                "base_url": base_url,
                "api_key": api_key,
                "strategy": strategy.value if strategy else None,
            },
            config=config,
        )
    except ConfigError as error:
        fail(str(error))
    typer.echo(f"config file: {path}{'' if path.exists() else ' (not present)'}")
    rows = [
        ("profile", resolved.profile),
        ("model", resolved.model),
        ("strategy", resolved.strategy),
        ("base_url", display_url(resolved.base_url) if resolved.base_url else None),
        ("api_key", mask(resolved.api_key)),
    ]
    for key, value in rows:
        source = resolved.sources.get(key, "-")
        typer.echo(f"{key:<9} {value if value is not None else '(not set)'}  [{source}]")
    if resolved.key_note:
        typer.echo(f"          (no key sent: {resolved.key_note})")
    typer.echo("limits:")
    limits = limits_with(config.limits)
    width = max(map(len, LIMIT_FIELDS))
    for key, name in LIMIT_FIELDS.items():
        value = getattr(limits, name)
        shown = "(none)" if value is None else f"{value:g}" if isinstance(value, float) else value
        typer.echo(f"  {key:<{width}} {shown}  [{limit_sources[key]}]")
    from toolcall_cli.config import BUILTIN_PROFILES

    names = sorted({*BUILTIN_PROFILES, *config.profiles})
    typer.echo(f"profiles: {', '.join(names)}")


def silence_output() -> None:
    """Point stdout and stderr at devnull, so what is still buffered for a pipe nobody reads
    cannot fail again in the interpreter's final flush ("Exception ignored ...")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        # A stream without a descriptor has nothing to flush to a pipe.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)


def main() -> None:
    """Entry point: usage errors become one line and exit code 2, never a traceback."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that cannot show some characters (PYTHONIOENCODING=ascii) gets
        # replacement marks instead of a crash.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
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


def run_app() -> int:
    """The app's exit code, with every way out of it turned into one."""
    try:
        code = app(standalone_mode=False)
    except click_exceptions.UsageError as error:
        if "NoArgsIsHelp" in type(error).__name__:  # `toolcall` alone: its help, not an error
            typer.echo(error.ctx.get_help() if error.ctx else error.format_message())
            return 0
        hint = f" (see `{error.ctx.command_path} --help`)" if error.ctx else ""
        typer.echo(f"toolcall: error: {error.format_message()}{hint}", err=True)
        return EXIT_USAGE
    except typer.Exit as done:
        return done.exit_code
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("toolcall: interrupted", err=True)
        return EXIT_INTERRUPTED
    except (OutputClosed, BrokenPipeError):
        raise
    except Exception as error:  # a bug: say so in one line; TOOLCALL_DEBUG=1 shows the traceback
        if os.environ.get("TOOLCALL_DEBUG"):
            raise
        typer.echo(
            f"toolcall: internal error: {type(error).__name__}: {error} "
            "(a bug in toolcall; TOOLCALL_DEBUG=1 shows the traceback)",
            err=True,
        )
        return EXIT_FAILURE
    return code if isinstance(code, int) else 0
