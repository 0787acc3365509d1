"""The commands: run, chat, tools, prompt, compare, parse, faults, doctor, config."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolcall_cli import strictjson
from toolcall_cli.app.options import (
    LIMIT_FIELDS,
    Endpoint,
    SessionOptions,
    StrategyName,
    StrategyOptions,
    ToolOptions,
)
from toolcall_cli.cli._options import (
    Only,
    Output,
    PanelledCommand,
    Stepping,
    TraceFile,
    Without,
    choices_metavar,
    with_groups,
)
from toolcall_cli.cli.entry import (
    EXIT_PROBLEMS,
    EXIT_USAGE,
    app,
    config_app,
    fail,
    warn,
)
from toolcall_cli.private_files import READ_LIMIT, read_bounded
from toolcall_cli.termination import Terminated

if TYPE_CHECKING:
    from toolcall_cli.app.build import Assembled
    from toolcall_cli.cli._running import RunTrace
    from toolcall_cli.config import FileConfig, Resolved
    from toolcall_cli.render import RenderMode
    from toolcall_cli.render.explain import Explain
    from toolcall_cli.stepping import TerminalStepper
    from toolcall_cli.tools.registry import ToolRegistry


# --- commands ---------------------------------------------------------------------------------


@app.command(cls=PanelledCommand)
@with_groups
def run(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="The question to answer.")],
    *,
    options: SessionOptions,
    output: Output,
    trace: TraceFile,
    stepping: Stepping,
) -> None:
    """Answer one question, showing every iteration of the tool-use loop."""
    from toolcall_cli.cli._running import render_run
    from toolcall_cli.cli._tracing import start_trace
    from toolcall_cli.models.scripted import scripted_model

    if not question.strip():
        fail("the question is empty")
    mode = output_mode(output.quiet, output.as_json)
    assembled = watched_session(options, mode, step_flag(stepping))
    session = assembled.session
    try:
        run_trace = start_trace(trace, "run", assembled)
        code = render_run(
            session.ask(question),
            mode,
            run_trace,
            session.answers,
            output.show_request,
            scripted_model(session.model),
            explain=explained(stepping),
        )
    finally:
        session.close()
    if code != EXIT_USAGE:  # a question refused unasked has nothing to see
        run_trace.show_path(mode)
    raise typer.Exit(code)


def output_mode(quiet: bool, as_json: bool) -> RenderMode:
    if quiet and as_json:
        fail("--quiet and --json cannot be used together")
    if as_json:
        return "json"
    if quiet:
        return "quiet"
    return "live" if sys.stdout.isatty() else "plain"


def watched_session(
    options: SessionOptions, mode: RenderMode, pauses: TerminalStepper | None
) -> Assembled:
    """The session of a run or a chat someone may be watching: what the run asks (approval,
    --step's pauses) is answered on the terminal, and the local models' streams are paced for
    the live view."""
    from toolcall_cli.app.build import build_session
    from toolcall_cli.approval import terminal_answers

    paced = options.paced(0.02 if mode == "live" else 0.0)
    assembled = build_session(paced, answers=terminal_answers(pauses), warn=warn)
    assembled.session.stepping = pauses is not None
    return assembled


def explained(stepping: Stepping) -> Explain:
    from toolcall_cli.render.explain import Explain

    return Explain(stepping.explain, stepping.lang)


def step_flag(stepping: Stepping) -> TerminalStepper | None:
    """--step's stepper, speaking --lang's language as --explain does; one line and exit 2
    when stdin is no terminal to answer on."""
    from toolcall_cli.stepping import NotInteractive, stepper

    try:
        return stepper(stepping.step, stepping.lang)
    except NotInteractive:
        fail(NotInteractive.MESSAGE)


@app.command(cls=PanelledCommand)
@with_groups
def chat(
    *,
    options: SessionOptions,
    history_file: Annotated[
        Path | None,
        typer.Option("--history-file", metavar="FILE", help="Where the input history is kept."),
    ] = None,
    trace: TraceFile,
    stepping: Stepping,
) -> None:
    """A conversation that keeps its memory between questions (/help for commands)."""
    from toolcall_cli.cli._tracing import start_trace

    mode: RenderMode = "live" if sys.stdout.isatty() else "plain"
    assembled = watched_session(options, mode, step_flag(stepping))
    try:
        run_trace = start_trace(trace, "chat", assembled)
        try:
            code = chat_session(assembled, run_trace, history_file, mode, explained(stepping))
        finally:
            run_trace.close()
    finally:
        assembled.session.close()
    raise typer.Exit(code)


def chat_session(
    assembled: Assembled,
    run_trace: RunTrace,
    history_file: Path | None,
    mode: RenderMode,
    shown: Explain,
) -> int:
    """The chat until /exit or Ctrl-D; its exit code. Cut short by Ctrl-C outside a question
    or by a bug, its trace ends with an `interrupted` line."""
    from toolcall_cli.cli._running import script_mismatch_code
    from toolcall_cli.private_files import PathProblem
    from toolcall_cli.repl import Repl, default_history_file
    from toolcall_cli.tools.reload import ToolReloader

    try:
        # The history file is checked here, so a path that cannot work stops the chat unstarted.
        repl = Repl(
            assembled.session,
            history_file=history_file or default_history_file(),
            use_model=assembled.use_model,
            trace=run_trace.writer,
            explain=shown,
            reloader=ToolReloader(assembled.plugins) if assembled.plugins else None,
        )
    except PathProblem as error:
        fail(str(error))
    run_trace.show_path(mode)
    try:
        code = repl.loop()
        return script_mismatch_code(code) if repl.script_mismatch else code
    except (KeyboardInterrupt, Terminated) as stop:
        run_trace.stopped(stop, None)
        raise
    except Exception as error:
        if not isinstance(error, typer.Exit):
            run_trace.crashed(error, None)
        raise


@app.command("tools", cls=PanelledCommand)
@with_groups
def tools_command(
    name: Annotated[
        str | None, typer.Argument(metavar="TOOL", help="Show this tool's JSON Schema.")
    ] = None,
    *,
    sources: Annotated[ToolOptions, Without("allow", "max_parallel", "isolate_tools", "yes")],
    rank: Annotated[
        str | None,
        typer.Option(
            "--rank",
            metavar="QUESTION",
            help="Rank the tools for this question (lexical BM25), best first, with scores: "
            "what --retrieve would send, and why.",
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=1, metavar="N", help="With --rank: how many to show.")
    ] = 10,
) -> None:
    """List the loaded tools and their sources (a plugin file, or `mcp:SERVER`), or print one
    tool's JSON Schema."""
    from toolcall_cli.app.build import add_mcp_tools, load_plugins
    from toolcall_cli.app.settings import file_config

    registry = load_plugins(sources.tools, sources.no_default_tools, warn).registry
    servers = add_mcp_tools(registry, sources.mcp, file_config(), warn)
    try:
        if rank is not None:
            print_ranking(rank, registry, top)
        else:
            show_tools(registry, name)
    finally:
        if servers is not None:
            servers.close()


def print_ranking(question: str, registry: ToolRegistry, top: int) -> None:
    """`toolcall tools --rank QUESTION`: each tool's BM25 score and the words that matched."""
    from toolcall_cli.history import preview
    from toolcall_cli.render.base import visible
    from toolcall_cli.tools.retrieval import query_terms, spec_terms
    from toolcall_cli.tools.retrieval import rank as rank_tools  # `rank` is the flag here

    if not question.strip():
        fail("--rank needs a question")
    specs = registry.specs()
    asked = query_terms([(question, 1.0)])
    typer.echo(f"query terms: {' '.join(visible(t) for t in asked) or '(none)'}")
    for name, score in rank_tools(question, specs, top):
        spec = next(s for s in specs if s.name == name)
        matched = sorted(set(spec_terms(spec)) & set(asked))
        words = f"  [{' '.join(visible(w) for w in matched)}]" if matched else ""
        typer.echo(
            f"{score:7.2f}  {visible(name)}{words}  {visible(preview(spec.description, 60))}"
        )


def show_tools(registry: ToolRegistry, name: str | None) -> None:
    if name is not None:
        found = registry.get(name)
        if found is None:
            available = ", ".join(registry.names()) or "none"
            fail(f"no tool named {name!r}; loaded tools: {available}")
        typer.echo(strictjson.dumps(found.spec.to_openai()["function"], indent=2))
        return
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.cli._tables import print_tool_table

    print_tool_table(list(registry), pipe_console())


@app.command(cls=PanelledCommand)
@with_groups
def prompt(
    question: Annotated[
        str, typer.Argument(metavar="QUESTION", help="The question the request would carry.")
    ],
    *,
    options: SessionOptions,
    all_strategies: Annotated[
        bool,
        typer.Option(
            "--all",
            help="The first request of every strategy side by side (regex, schema in each "
            "--schema-mode, stream in --stream-mode), with the characters and estimated tokens "
            "of each one's system prompt, tools JSON and response_format.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --all: the requests and their sizes as JSON.")
    ] = False,
) -> None:
    """Print the exact first request the model would receive, as JSON: the request `toolcall
    run` sends with the same flags (tools retrieved, system prompt, sampling and all)."""
    from toolcall_cli.app.build import build_session, first_request

    if all_strategies and (options.strategy.strategy or options.strategy.schema_mode):
        fail("--all shows every strategy: leave out --strategy and --schema-mode")
    if all_strategies:
        from toolcall_cli.cli._first_requests import print_first_requests

        print_first_requests(question, options, as_json)
        return
    session = build_session(options, warn=warn).session
    try:
        typer.echo(strictjson.dumps(first_request(session, question), indent=2))
    finally:
        session.close()


RepeatOpt = Annotated[
    int,
    typer.Option(
        "--repeat",
        min=1,
        max=1000,
        metavar="N",
        help="Run each strategy N times, one seed each, and show rates per strategy.",
    ),
]
CompareJsonOpt = Annotated[
    bool, typer.Option("--json", help="Every run and the rates per strategy, as JSON.")
]
TraceDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--trace-dir",
        exists=True,
        file_okay=False,
        dir_okay=True,
        metavar="DIR",
        help="Write each run's trace into this directory (one file per strategy and seed) "
        "instead of compare's own folder in the trace directory (`toolcall trace list --all`).",
    ),
]


@app.command(cls=PanelledCommand)
@with_groups
def compare(
    question: Annotated[
        str, typer.Argument(metavar="QUESTION", help="The question every strategy answers.")
    ],
    *,
    # It runs every strategy: no choosing one.
    options: Annotated[SessionOptions, Without("strategy", "schema_mode")],
    repeat: RepeatOpt = 1,
    as_json: CompareJsonOpt = False,
    trace_dir: TraceDirOpt = None,
    trace: Annotated[TraceFile, Without("trace")],
) -> None:
    """Answer one question under every strategy, quietly, and compare them in one table.

    The strategies: regex, schema (tools, json, required) and stream. The table: iterations,
    tool calls, parse errors, errors recovered, the time to the first tool start, wall time,
    tokens, stop reason and the answer. Errors recovered are the parse errors and tool errors of
    a run that went on to answer (stop reason answered). --repeat N gives rates per strategy.
    Each run writes a trace, as `toolcall run` does (--trace-dir, --no-trace).
    Exit 0 when it ran, whatever each strategy did; 2 on a usage error.
    """
    from toolcall_cli.cli._compare import compare_all

    if not question.strip():
        fail("the question is empty")
    compare_all(question, options, repeat, as_json, trace_dir, trace.no_trace)


ParseFileArg = Annotated[
    Path | None,
    typer.Argument(metavar="FILE", help="A file holding the raw model output; stdin when absent."),
]
ParseStrategyOpt = Annotated[
    StrategyName,
    typer.Option(
        "--strategy",
        "-s",
        metavar=choices_metavar(StrategyName),
        help="regex: tagged text at once; stream: in chunks; schema: a native assistant "
        "message (or chat.completion) as JSON.",
    ),
]
ChunkOpt = Annotated[
    int | None,
    typer.Option("--chunk", min=1, metavar="N", help="stream: feed N characters at a time."),
]
ChunkSeedOpt = Annotated[
    int | None,
    typer.Option("--seed", metavar="N", help="stream: feed chunks of seeded random sizes."),
]


@app.command(cls=PanelledCommand)
def parse(
    file: ParseFileArg = None,
    strategy: ParseStrategyOpt = "regex",
    chunk: ChunkOpt = None,
    seed: ChunkSeedOpt = None,
    sse: Annotated[bool, typer.Option("--sse", help="The input is an OpenAI SSE stream.")] = False,
) -> None:
    """Show what the parser makes of a model's raw output, as one JSON object.

    The input, a FILE or stdin alike, must be UTF-8: a byte that is not is a usage error
    naming its byte offset (nothing is guessed or replaced).
    """
    from toolcall_cli.parse_command import SseInputError, parse_message, parse_output, parse_sse

    if strategy != "stream" and (chunk or seed is not None):
        fail("--chunk and --seed feed the input in pieces: use them with --strategy stream")
    text = read_input(file)
    if sse or strategy == "schema":
        try:
            result = parse_sse(text) if sse else parse_message(text)
        except SseInputError as error:
            fail(str(error))
    else:
        if strategy == "stream" and chunk is None and seed is None:
            chunk = 1
        result = parse_output(text, chunk=chunk, seed=seed)
    typer.echo(strictjson.dumps(result, indent=2))


def read_input(file: Path | None) -> str:
    """The raw output as text, by one rule for a file and for stdin: strict UTF-8, and no
    newline translation. A decoder that replaced bad bytes, or turned a \\r into \\n, would hand
    the parser text the model never sent."""
    name = str(file) if file else "stdin"
    try:
        data = read_bounded(file) if file else stdin_bytes()
    except OSError as error:
        fail(f"cannot read {name}: {error.strerror or error}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        fail(
            f"{name} is not valid UTF-8: a bad byte (0x{data[error.start]:02x}) "
            f"at byte offset {error.start}"
        )
    # Kept byte for byte: a \r is data (inside a string it is an argument's character), and
    # the parsers take \r\n between the parts of a reply as they take \n.
    return text


def end_of_input() -> str:
    """The keys that end input typed at a terminal into a plain read of stdin (prompt-toolkit's
    prompts take Ctrl-D everywhere)."""
    return "Ctrl-Z, then Enter" if sys.platform == "win32" else "Ctrl-D"


def stdin_bytes() -> bytes:
    if sys.stdin is None:
        fail("stdin is closed: give a FILE, or pipe the model's output in")
    if sys.stdin.isatty():  # `toolcall parse` typed alone waited for input without a word
        typer.echo(
            f"toolcall: reading the model's output from stdin; end it with {end_of_input()}",
            err=True,
        )
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        data: bytes = buffer.read(READ_LIMIT + 1)
        if len(data) > READ_LIMIT:
            fail(f"stdin holds more than {READ_LIMIT >> 20} MiB: is it the model's output?")
        return data
    # A text stream without bytes beneath (some embedders): undo its decoding, bad bytes kept.
    return sys.stdin.read().encode("utf-8", "surrogateescape")


@app.command("faults", cls=PanelledCommand)
def faults_command() -> None:
    """List the kinds of misbehaviour the offline model can inject (for --faults)."""
    from toolcall_cli.offline import FAULT_KINDS

    width = max(len(name) for name in FAULT_KINDS)
    for name, description in FAULT_KINDS.items():
        typer.echo(f"{name:<{width}}  {description}")


@app.command(cls=PanelledCommand, context_settings={"ignore_unknown_options": True})
def doctor(
    trace: Annotated[
        str | None,
        typer.Argument(
            metavar="ID|FILE|-N",
            help="A trace id (or the start of one), a trace file, or -N for the Nth latest "
            "(default: the latest trace).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for machines.")] = False,
) -> None:
    """Walk the troubleshooting checklist over a recorded run: a tool skipped (硬答), invalid
    calls, results not fed back by their call id, how the loop ended; then the likely cause.

    Exit 0 when every step passes (a run stopped by Ctrl-C or a signal is noted, not a
    problem), 4 when problems were found, 2 when the trace cannot be read.
    """
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.cli._trace_commands import load_trace
    from toolcall_cli.doctor import as_record, diagnose
    from toolcall_cli.render.doctor import print_diagnosis
    from toolcall_cli.trace import TraceError

    recording = load_trace(trace, "doctor")
    try:
        diagnosis = diagnose(recording)
    except TraceError as error:
        fail(str(error))
    if as_json:
        typer.echo(strictjson.dumps(as_record(diagnosis), indent=2))
    else:
        print_diagnosis(diagnosis, pipe_console(whole_lines=True))
    raise typer.Exit(EXIT_PROBLEMS if diagnosis.problem_count else 0)


@config_app.command("path", cls=PanelledCommand)
def config_path_command() -> None:
    """Print where the config file is (it need not exist)."""
    from toolcall_cli.config import config_path

    typer.echo(str(config_path()))


@config_app.command("show", cls=PanelledCommand)
@with_groups
def config_show(
    *,
    endpoint: Annotated[Endpoint, Without("connect_timeout", "read_timeout", "context_window")],
    choice: Annotated[StrategyOptions, Only("strategy")],
) -> None:
    """Show the settings a run would use and where each came from. Keys are masked."""
    from toolcall_cli.app.errors import usage_errors
    from toolcall_cli.app.settings import resolved_settings
    from toolcall_cli.config import ConfigError, config_path, load_config, mask, resolve_limits
    from toolcall_cli.keys import display_url

    path = config_path()
    with usage_errors(ConfigError):  # said as any command says an AppError (entry.py)
        config = load_config(path)  # a file TOOLCALL_CONFIG names that is missing: shown so
        _, limit_sources = resolve_limits({}, config)
    options = SessionOptions(strategy=choice, endpoint=endpoint)
    # Looking must not fail where running would: a profile with no default model shows it unset.
    resolved = resolved_settings(options, config, need_model=False)
    grounding = grounding_line(config)
    typer.echo(f"config file: {path}{'' if path.exists() else ' (not present)'}")
    rows = [
        ("profile", resolved.profile),
        ("model", resolved.model or "(not set: a run needs --model NAME)"),
        ("strategy", resolved.strategy),
        ("schema_mode", resolved.schema_mode),
        ("base_url", display_url(resolved.base_url) if resolved.base_url else None),
        ("api_key", mask(resolved.api_key)),
        *((key, value) for key, value in dataclasses.asdict(resolved.sampling).items()),
    ]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        source = resolved.sources.get(key, "-")
        typer.echo(f"{key:<{width}} {value if value is not None else '(not set)'}  [{source}]")
    if resolved.key_note:
        typer.echo(f"{'':<{width}} (no key sent: {resolved.key_note})")
    if resolved.base_url:
        typer.echo(f"{'':<{width}} ({small_model_note(resolved)})")
    typer.echo(f"{'grounding':<{width}} {grounding}")
    show_limits(config.limits, limit_sources)
    show_profiles_and_traces(config)


def grounding_line(config: FileConfig) -> str:
    """The grounding mode and where it came from: `warn  [default]`."""
    from toolcall_cli.app.settings import grounding_of

    mode = grounding_of(None, config)
    source = "config" if "grounding" in config.defaults else "default"
    return f"{mode}  [{source}]"


def small_model_note(resolved: Resolved) -> str:
    """What a run on a llama.cpp or Ollama server takes for the settings left unset above, from
    the run's own defaults, so this line cannot drift from what the run does."""
    from toolcall_cli.app._measured import SMALL_MODEL_SERVERS
    from toolcall_cli.app.build import small_model_takes

    servers = SMALL_MODEL_SERVERS.values()
    taken = [(server, small_model_takes(resolved, server)) for server in servers]
    said = [f"{server.named}'s run takes: {', '.join(what)}" for server, what in taken if what]
    if not said:
        return "a small model's defaults change nothing here: each is chosen above"
    return "where unset, " + "; ".join(said)


def show_limits(configured: dict[str, int | float], sources: dict[str, str]) -> None:
    from toolcall_cli.app.settings import limits_with

    typer.echo("limits:")
    limits = limits_with(configured)
    width = max(map(len, LIMIT_FIELDS))
    for key, name in LIMIT_FIELDS.items():
        value = getattr(limits, name)
        shown = "(none)" if value is None else f"{value:g}" if isinstance(value, float) else value
        typer.echo(f"  {key:<{width}} {shown}  [{sources[key]}]")


def show_profiles_and_traces(config: FileConfig) -> None:
    from toolcall_cli.config import BUILTIN_PROFILES
    from toolcall_cli.trace.files import trace_dir

    names = sorted({*BUILTIN_PROFILES, *config.profiles})
    typer.echo(f"profiles: {', '.join(names)}")
    traced = f"on, the newest {config.trace_keep:,} kept" if config.trace else "off"
    typer.echo(f"traces: {traced} ({trace_dir()})")
