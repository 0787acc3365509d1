"""The `toolcall` command: parse flags, assemble a session, pick a renderer. No loop logic here."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from toolcall_cli import strictjson

try:  # typer >= 0.26 vendors click and raises its own copies of click's exceptions
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - older typer uses the click package
    from click import exceptions as click_exceptions  # type: ignore[import-not-found, no-redef, unused-ignore]

from toolcall_cli.approval import approver, attach
from toolcall_cli.config import ConfigError, config_path, load_config, mask, resolve
from toolcall_cli.events import Event, LimitReached, ModelFailed, Notice, RunFinished
from toolcall_cli.loop import Approver, Limits
from toolcall_cli.models import LOCAL_MODELS, ModelChoice, ModelConfigError, get_model
from toolcall_cli.models.base import Model
from toolcall_cli.models.paced import PacedModel
from toolcall_cli.render import RenderMode, make_renderer
from toolcall_cli.session import Session
from toolcall_cli.strategies import UnknownStrategy, get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.loader import load_tools, tool_dirs
from toolcall_cli.tools.registry import ToolRegistry

EXIT_ANSWERED = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_LIMIT = 3
EXIT_INTERRUPTED = 130

EXIT_BY_STOP = {
    "answered": EXIT_ANSWERED,
    "input_rejected": EXIT_USAGE,
    "limit": EXIT_LIMIT,
    "model_failed": EXIT_FAILURE,
    "interrupted": EXIT_INTERRUPTED,
}

app = typer.Typer(
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
MaxIterOpt = Annotated[
    int, typer.Option("--max-iterations", min=1, help="Stop after this many model requests.")
]
ToolTimeoutOpt = Annotated[
    float, typer.Option("--tool-timeout", min=0.01, help="Default per-tool timeout in seconds.")
]
RunTimeoutOpt = Annotated[
    float | None, typer.Option("--timeout", min=0.1, help="Seconds for the whole run.")
]
ResultCharsOpt = Annotated[
    int,
    typer.Option(
        "--max-result-chars", min=100, help="Cut longer tool results before feeding back."
    ),
]
FailedRoundsOpt = Annotated[
    int,
    typer.Option(
        "--max-failed-rounds",
        min=1,
        help="Rounds in a row without progress before the model must answer without tools.",
    ),
]
HistoryRoundsOpt = Annotated[
    int | None,
    typer.Option(
        "--history-rounds", min=0, help="Tool rounds sent in full; older ones are summarised."
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


DEFAULT_LIMITS = Limits()
"""Where the flags' defaults come from, so the loop's defaults are written once."""


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
    max_iterations: int = DEFAULT_LIMITS.max_iterations
    tool_timeout: float = DEFAULT_LIMITS.tool_timeout
    yes: bool = False
    run_timeout: float | None = None
    max_result_chars: int = DEFAULT_LIMITS.max_result_chars
    history_rounds: int | None = DEFAULT_LIMITS.history_rounds
    max_failed_rounds: int = DEFAULT_LIMITS.max_failed_rounds
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

    def limits(self) -> Limits:
        return Limits(
            max_iterations=self.max_iterations,
            tool_timeout=self.tool_timeout,
            run_timeout=self.run_timeout,
            max_result_chars=self.max_result_chars,
            history_rounds=self.history_rounds,
            max_failed_rounds=self.max_failed_rounds,
        )


def load_registry(extra: tuple[Path, ...], no_default_tools: bool) -> ToolRegistry:
    dirs = tool_dirs(list(extra), include_bundled=not no_default_tools, cwd=Path.cwd())
    loaded = load_tools(dirs, explicit=list(extra))
    for problem in loaded.problems:
        warn(problem)
    return loaded.registry


def model_choice(options: SessionOptions) -> tuple[ModelChoice, str]:
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
            config=load_config(config_path()),
        )
    except ConfigError as error:
        fail(str(error))
    if options.base_url and resolved.model in LOCAL_MODELS:
        fail("--base-url needs --model NAME: the model's name at that endpoint")
    choice = ModelChoice(
        name=resolved.model,
        seed=options.seed,
        script=options.script,
        base_url=resolved.base_url,
        api_key=resolved.api_key,
        connect_timeout=options.connect_timeout,
        read_timeout=options.read_timeout,
        faults=options.faults,
        fault_rate=options.fault_rate,
    )
    return choice, resolved.strategy


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
    choice, strategy_name = model_choice(options)
    try:
        model = make_model(choice, options.pace)
    except ModelConfigError as error:
        fail(str(error))
    session = Session(
        model=model,
        strategy=pick_strategy(strategy_name, options),
        registry=load_registry(options.tools, options.no_default_tools),
        limits=options.limits(),
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


def render_run(
    events: Iterator[Event],
    mode: RenderMode,
    trace: Path | None = None,
    approve: Approver | None = None,
    show_request: bool = False,
) -> int:
    """Render a run's events and return the exit code its end calls for."""
    from toolcall_cli.trace import TraceWriter

    renderer = make_renderer(mode, show_request=show_request)
    if approve is not None:
        attach(approve, renderer)
    writer = TraceWriter.open(trace) if trace else None
    code = EXIT_FAILURE
    try:
        for event in events:
            renderer.handle(event)
            if writer:
                writer.write(event)
            if mode != "live":
                report_stop(event)
            if isinstance(event, RunFinished):
                code = EXIT_BY_STOP[event.stop_reason]
    except KeyboardInterrupt:
        if writer:
            writer.interrupted()
        code = EXIT_INTERRUPTED
    finally:
        # Also on an unexpected error, so the terminal is never left with a live region.
        renderer.close()
        if writer:
            writer.close()
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
    max_iterations: MaxIterOpt = DEFAULT_LIMITS.max_iterations,
    tool_timeout: ToolTimeoutOpt = DEFAULT_LIMITS.tool_timeout,
    run_timeout: RunTimeoutOpt = DEFAULT_LIMITS.run_timeout,
    max_result_chars: ResultCharsOpt = DEFAULT_LIMITS.max_result_chars,
    history_rounds: HistoryRoundsOpt = DEFAULT_LIMITS.history_rounds,
    max_failed_rounds: FailedRoundsOpt = DEFAULT_LIMITS.max_failed_rounds,
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
    max_iterations: MaxIterOpt = DEFAULT_LIMITS.max_iterations,
    tool_timeout: ToolTimeoutOpt = DEFAULT_LIMITS.tool_timeout,
    run_timeout: RunTimeoutOpt = DEFAULT_LIMITS.run_timeout,
    max_result_chars: ResultCharsOpt = DEFAULT_LIMITS.max_result_chars,
    history_rounds: HistoryRoundsOpt = DEFAULT_LIMITS.history_rounds,
    max_failed_rounds: FailedRoundsOpt = DEFAULT_LIMITS.max_failed_rounds,
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

    repl = Repl(
        session, history_file=history_file or default_history_file(), make_model=switch_model
    )
    try:
        code = repl.loop()
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

    print_tool_table(list(registry))


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
    """Show what the parser makes of a model's raw output, as one JSON object."""
    from toolcall_cli.parsing import SseInputError, parse_message, parse_output, parse_sse

    if strategy is not StrategyName.stream and (chunk or seed is not None):
        fail("--chunk and --seed feed the input in pieces: use them with --strategy stream")
    try:
        text = file.read_text(encoding="utf-8") if file else sys.stdin.read()
    except (OSError, UnicodeDecodeError) as error:
        fail(f"cannot read {file}: {error}")
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
    from toolcall_cli.config import BUILTIN_PROFILES

    names = sorted({*BUILTIN_PROFILES, *config.profiles})
    typer.echo(f"profiles: {', '.join(names)}")


def main() -> None:
    """Entry point: usage errors become one line and exit code 2, never a traceback."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that cannot show some characters (PYTHONIOENCODING=ascii) gets
        # replacement marks instead of a crash.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        code = app(standalone_mode=False)
    except click_exceptions.UsageError as error:
        if "NoArgsIsHelp" in type(error).__name__:  # `toolcall` alone: its help, not an error
            typer.echo(error.ctx.get_help() if error.ctx else error.format_message())
            code = 0
        else:
            hint = f" (see `{error.ctx.command_path} --help`)" if error.ctx else ""
            typer.echo(f"toolcall: error: {error.format_message()}{hint}", err=True)
            code = EXIT_USAGE
    except typer.Exit as done:
        code = done.exit_code
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("toolcall: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`toolcall run ... | head -1`): not an error worth a traceback.
        # Point stdout at devnull so the interpreter's final flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_ANSWERED
    except Exception as error:  # a bug: say so in one line; TOOLCALL_DEBUG=1 shows the traceback
        if os.environ.get("TOOLCALL_DEBUG"):
            raise
        typer.echo(
            f"toolcall: internal error: {type(error).__name__}: {error} "
            "(a bug in toolcall; TOOLCALL_DEBUG=1 shows the traceback)",
            err=True,
        )
        code = EXIT_FAILURE
    sys.exit(code if isinstance(code, int) else 0)
