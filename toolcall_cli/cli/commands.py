"""The commands: run, chat, tools, prompt, compare, parse, faults, doctor, config."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolcall_cli import strictjson
from toolcall_cli.cli.entry import EXIT_PROBLEMS, EXIT_USAGE, app, config_app, fail
from toolcall_cli.cli.options import (
    LIMIT_FIELDS,
    Allow,
    AllowOpt,
    ApiKeyOpt,
    BaseUrlOpt,
    CallsPerReplyOpt,
    ConnectTimeoutOpt,
    ContextWindowOpt,
    DagOpt,
    EmbedModelOpt,
    EmbedUrlOpt,
    ExplainOpt,
    FailedRoundsOpt,
    FaultRateOpt,
    FaultsOpt,
    HistoryRoundsOpt,
    IsolateOpt,
    JsonOpt,
    LangOpt,
    LineBytesOpt,
    MaxIterOpt,
    MaxParallelOpt,
    MaxTokensOpt,
    McpOpt,
    ModelOpt,
    NoDefaultToolsOpt,
    NoFinalAnswerOpt,
    NoTraceOpt,
    PaceOpt,
    ProfileOpt,
    PromptStyle,
    PromptStyleOpt,
    QuietOpt,
    ReadTimeoutOpt,
    RepeatedRoundsOpt,
    ReplyCharsOpt,
    RequestTimeoutOpt,
    ResponseBytesOpt,
    ResultCharsOpt,
    RetrieveOpt,
    RetrieveOverOpt,
    RetrieverOpt,
    RunTimeoutOpt,
    SchemaModeOpt,
    ScriptOpt,
    SeedOpt,
    SessionOptions,
    ShowRequestOpt,
    StepOpt,
    StrategyName,
    StrategyOpt,
    StreamMode,
    StreamModeOpt,
    SystemPromptOpt,
    TemperatureOpt,
    ToolsOpt,
    ToolTimeoutOpt,
    TopPOpt,
    TraceOpt,
    UnaskedYesOpt,
    YesOpt,
    fault_names,
)

if TYPE_CHECKING:
    from toolcall_cli.cli.assemble import Assembled
    from toolcall_cli.cli.running import RunTrace
    from toolcall_cli.loop import Stepper
    from toolcall_cli.render import RenderMode
    from toolcall_cli.render.explain import Explain
    from toolcall_cli.tools.registry import ToolRegistry
    from toolcall_cli.wire import Sampling


# --- commands ---------------------------------------------------------------------------------


@app.command()
def run(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    strategy: StrategyOpt = None,
    schema_mode: SchemaModeOpt = None,
    stream_mode: StreamModeOpt = StreamMode.tags,
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    read_timeout: ReadTimeoutOpt = 120.0,
    script: ScriptOpt = None,
    seed: SeedOpt = None,
    temperature: TemperatureOpt = None,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    prompt_style: PromptStyleOpt = PromptStyle.full,
    faults: FaultsOpt = None,
    fault_rate: FaultRateOpt = 1.0,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    mcp: McpOpt = None,
    max_iterations: MaxIterOpt = None,
    tool_timeout: ToolTimeoutOpt = None,
    run_timeout: RunTimeoutOpt = None,
    max_result_chars: ResultCharsOpt = None,
    history_rounds: HistoryRoundsOpt = None,
    max_failed_rounds: FailedRoundsOpt = None,
    max_repeated_rounds: RepeatedRoundsOpt = None,
    max_calls_per_reply: CallsPerReplyOpt = None,
    max_reply_chars: ReplyCharsOpt = None,
    max_response_bytes: ResponseBytesOpt = None,
    max_line_bytes: LineBytesOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context_window: ContextWindowOpt = None,
    retrieve: RetrieveOpt = None,
    retrieve_over: RetrieveOverOpt = None,
    retriever: RetrieverOpt = None,
    embed_url: EmbedUrlOpt = None,
    embed_model: EmbedModelOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
    yes: YesOpt = False,
    trace: TraceOpt = None,
    no_trace: NoTraceOpt = False,
    system_prompt: SystemPromptOpt = None,
    show_request: ShowRequestOpt = False,
    pace: PaceOpt = None,
    dag: DagOpt = False,
    allow: AllowOpt = Allow.write,
    max_parallel: MaxParallelOpt = 4,
    isolate_tools: IsolateOpt = False,
    no_final_answer: NoFinalAnswerOpt = False,
    step: StepOpt = False,
    explain: ExplainOpt = False,
    lang: LangOpt = None,
) -> None:
    """Answer one question, showing every iteration of the tool-use loop."""
    from toolcall_cli.cli.assemble import build_session, output_mode
    from toolcall_cli.cli.running import render_run, show_trace_path
    from toolcall_cli.cli.tracing import choose_trace, start_trace
    from toolcall_cli.models.scripted import scripted_model
    from toolcall_cli.render.explain import Explain

    if not question.strip():
        fail("the question is empty")
    mode = output_mode(quiet, as_json)
    pauses = step_flag(step)
    assembled = build_session(SessionOptions.from_flags(locals(), mode=mode))
    session = assembled.session
    session.step = pauses
    try:
        target = choose_trace(trace, no_trace, assembled)
        run_trace = start_trace(target, "run", assembled)
        played = scripted_model(session.model)
        code = render_run(
            session.ask(question),
            mode,
            run_trace,
            session.approve,
            show_request,
            played,
            explain=Explain(explain, lang.value if lang is not None else None),
            step=session.step,
        )
    finally:
        session.close()
    if target.default and run_trace.path is not None and code != EXIT_USAGE:
        show_trace_path(run_trace.path, mode)  # (a question refused unasked has nothing to see)
    raise typer.Exit(code)


@app.command()
def chat(
    strategy: StrategyOpt = None,
    schema_mode: SchemaModeOpt = None,
    stream_mode: StreamModeOpt = StreamMode.tags,
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    read_timeout: ReadTimeoutOpt = 120.0,
    script: ScriptOpt = None,
    seed: SeedOpt = None,
    temperature: TemperatureOpt = None,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    prompt_style: PromptStyleOpt = PromptStyle.full,
    faults: FaultsOpt = None,
    fault_rate: FaultRateOpt = 1.0,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    mcp: McpOpt = None,
    max_iterations: MaxIterOpt = None,
    tool_timeout: ToolTimeoutOpt = None,
    run_timeout: RunTimeoutOpt = None,
    max_result_chars: ResultCharsOpt = None,
    history_rounds: HistoryRoundsOpt = None,
    max_failed_rounds: FailedRoundsOpt = None,
    max_repeated_rounds: RepeatedRoundsOpt = None,
    max_calls_per_reply: CallsPerReplyOpt = None,
    max_reply_chars: ReplyCharsOpt = None,
    max_response_bytes: ResponseBytesOpt = None,
    max_line_bytes: LineBytesOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context_window: ContextWindowOpt = None,
    retrieve: RetrieveOpt = None,
    retrieve_over: RetrieveOverOpt = None,
    retriever: RetrieverOpt = None,
    embed_url: EmbedUrlOpt = None,
    embed_model: EmbedModelOpt = None,
    yes: YesOpt = False,
    pace: PaceOpt = None,
    dag: DagOpt = False,
    allow: AllowOpt = Allow.write,
    max_parallel: MaxParallelOpt = 4,
    isolate_tools: IsolateOpt = False,
    no_final_answer: NoFinalAnswerOpt = False,
    history_file: Annotated[
        Path | None, typer.Option("--history-file", help="Where the input history is kept.")
    ] = None,
    trace: TraceOpt = None,
    no_trace: NoTraceOpt = False,
    system_prompt: SystemPromptOpt = None,
    step: StepOpt = False,
    explain: ExplainOpt = False,
    lang: LangOpt = None,
) -> None:
    """A conversation that keeps its memory between questions (/help for commands)."""
    from toolcall_cli.cli.assemble import build_session
    from toolcall_cli.cli.tracing import choose_trace, start_trace
    from toolcall_cli.render.explain import Explain

    mode: RenderMode = "live" if sys.stdout.isatty() else "plain"
    options = SessionOptions.from_flags(locals(), mode=mode)
    pauses = step_flag(step)
    assembled = build_session(options)
    assembled.session.step = pauses
    shown = Explain(explain, lang.value if lang is not None else None)
    try:
        target = choose_trace(trace, no_trace, assembled)
        run_trace = start_trace(target, "chat", assembled)
        try:
            code = chat_session(
                assembled, options, run_trace, history_file, mode, target.default, shown
            )
        finally:
            run_trace.close()
    finally:
        assembled.session.close()
    raise typer.Exit(code)


def chat_session(
    assembled: Assembled,
    options: SessionOptions,
    run_trace: RunTrace,
    history_file: Path | None,
    mode: RenderMode,
    show_path: bool,
    shown: Explain | None = None,
) -> int:
    """The chat until /exit or Ctrl-D; its exit code. Cut short by Ctrl-C outside a question
    or by a bug, its trace ends with an `interrupted` line."""
    from toolcall_cli.cli.assemble import make_model
    from toolcall_cli.cli.running import script_mismatch_code, show_trace_path
    from toolcall_cli.models.base import Model
    from toolcall_cli.private_files import PathProblem
    from toolcall_cli.render.explain import Explain
    from toolcall_cli.repl import Repl, default_history_file
    from toolcall_cli.tools.reload import ToolReloader

    def switch_model(name: str) -> Model:
        return make_model(dataclasses.replace(assembled.choice, name=name), options.pace)

    try:
        # The history file is checked here, so a path that cannot work stops the chat unstarted.
        repl = Repl(
            assembled.session,
            history_file=history_file or default_history_file(),
            make_model=switch_model,
            trace=run_trace.writer,
            explain=shown or Explain(),
            reloader=ToolReloader(assembled.plugins) if assembled.plugins else None,
        )
    except PathProblem as error:
        fail(str(error))
    if show_path and run_trace.path is not None:
        show_trace_path(run_trace.path, mode)
    try:
        code = repl.loop()
        return script_mismatch_code(code) if repl.script_mismatch else code
    except KeyboardInterrupt:
        run_trace.cut_short("ctrl-c", "interrupted by Ctrl-C", None)
        raise
    except Exception as error:
        if not isinstance(error, typer.Exit):
            run_trace.cut_short("crash", f"{type(error).__name__}: {error}", None)
        raise


def print_ranking(question: str, registry: ToolRegistry, top: int) -> None:
    """`toolcall tools --rank QUESTION`: each tool's BM25 score and the words that matched."""
    from toolcall_cli.render.base import one_line, visible
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
            f"{score:7.2f}  {visible(name)}{words}  {visible(one_line(spec.description, 60))}"
        )


def step_flag(step: bool) -> Stepper | None:
    """--step's stepper; one line and exit 2 when stdin is no terminal to answer on."""
    from toolcall_cli.stepping import NotInteractive, stepper

    try:
        return stepper(step)
    except NotInteractive:
        fail(NotInteractive.MESSAGE)


@app.command("tools")
def tools_command(
    name: Annotated[str | None, typer.Argument(help="Show this tool's JSON Schema.")] = None,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    rank: Annotated[
        str | None,
        typer.Option(
            "--rank",
            help="Rank the tools for this question (lexical BM25), best first, with scores: "
            "what --retrieve would send, and why.",
        ),
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="With --rank: how many to show.")] = 10,
    mcp: McpOpt = None,
) -> None:
    """List the loaded tools and their sources (a plugin file, or `mcp:SERVER`), or print one
    tool's JSON Schema."""
    from toolcall_cli.cli.assemble import add_mcp_tools, file_config, limits_with, load_registry

    registry = load_registry(tuple(tools or ()), no_default_tools)
    servers = add_mcp_tools(registry, tuple(mcp or ()), file_config(), limits_with({}).tool_timeout)
    try:
        if rank is not None:
            print_ranking(rank, registry, top)
        else:
            show_tools(registry, name)
    finally:
        if servers is not None:
            servers.close()


def show_tools(registry: ToolRegistry, name: str | None) -> None:
    if name is not None:
        found = registry.get(name)
        if found is None:
            available = ", ".join(registry.names()) or "none"
            fail(f"no tool named {name!r}; loaded tools: {available}")
        typer.echo(strictjson.dumps(found.spec.to_openai()["function"], indent=2))
        return
    from toolcall_cli.cli.running import pipe_console
    from toolcall_cli.cli.tables import print_tool_table

    print_tool_table(list(registry), pipe_console())


@app.command()
def prompt(
    question: Annotated[str, typer.Argument(help="The question the request would carry.")],
    strategy: StrategyOpt = None,
    schema_mode: SchemaModeOpt = None,
    stream_mode: StreamModeOpt = StreamMode.tags,
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    mcp: McpOpt = None,
    dag: DagOpt = False,
    prompt_style: PromptStyleOpt = PromptStyle.full,
    temperature: TemperatureOpt = None,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    system_prompt: SystemPromptOpt = None,
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
    """Print the exact first request the model would receive, as JSON."""
    from toolcall_cli.cli.assemble import (
        add_mcp_tools,
        file_config,
        limits_with,
        load_registry,
        model_choice,
        pick_strategy,
        read_system_prompt,
    )
    from toolcall_cli.messages import user

    if all_strategies and (strategy or schema_mode):
        fail("--all shows every strategy: leave out --strategy and --schema-mode")
    options = SessionOptions(
        strategy=strategy,
        schema_mode=schema_mode,
        stream_mode=stream_mode,
        model=model,
        profile=profile,
        dag=dag,
        prompt_style=prompt_style,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        seed=seed,
    )
    choice, strategy_name, sampling, schema_mode = model_choice(options)
    options = dataclasses.replace(options, schema_mode=schema_mode)
    registry = load_registry(tuple(tools or ()), no_default_tools)
    servers = add_mcp_tools(registry, tuple(mcp or ()), file_config(), limits_with({}).tool_timeout)
    try:
        own_prompt = read_system_prompt(system_prompt)
        if all_strategies:
            print_first_requests(question, options, choice.name, sampling, registry, as_json)
            return
        request = pick_strategy(strategy_name, options, sampling, own_prompt).build_request(
            [user(question)], registry.specs(), choice.name
        )
        typer.echo(strictjson.dumps(request.body, indent=2))
    finally:
        if servers is not None:
            servers.close()


def print_first_requests(
    question: str,
    options: SessionOptions,
    model_name: str,
    sampling: Sampling,
    registry: ToolRegistry,
    as_json: bool,
) -> None:
    from toolcall_cli.cli.first_requests import FirstRequest, print_side_by_side
    from toolcall_cli.cli.running import pipe_console
    from toolcall_cli.cli.variants import all_variants
    from toolcall_cli.messages import user

    requests = [
        FirstRequest(
            variant,
            variant.make_strategy(options, sampling)
            .build_request([user(question)], registry.specs(), model_name)
            .body,
        )
        for variant in all_variants(options.stream_mode)
    ]
    if as_json:
        shown = {
            "question": question,
            "model": model_name,
            "requests": [r.record() for r in requests],
        }
        typer.echo(strictjson.dumps(shown, indent=2))
        return
    print_side_by_side(requests, pipe_console())


@app.command()
def compare(
    question: Annotated[str, typer.Argument(help="The question every strategy answers.")],
    model: ModelOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    read_timeout: ReadTimeoutOpt = 120.0,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="The first run's seed (default: the configured seed, else 0); run k of "
            "--repeat gets seed+k, sent to the server and seeding the offline model.",
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            min=1,
            max=1000,
            help="Run each strategy N times, one seed each, and show rates per strategy.",
        ),
    ] = 1,
    temperature: TemperatureOpt = None,
    top_p: TopPOpt = None,
    prompt_style: PromptStyleOpt = PromptStyle.full,
    stream_mode: StreamModeOpt = StreamMode.tags,
    faults: FaultsOpt = None,
    fault_rate: FaultRateOpt = 1.0,
    tools: ToolsOpt = None,
    no_default_tools: NoDefaultToolsOpt = False,
    max_iterations: MaxIterOpt = None,
    tool_timeout: ToolTimeoutOpt = None,
    run_timeout: RunTimeoutOpt = None,
    context_window: ContextWindowOpt = None,
    retrieve: RetrieveOpt = None,
    retrieve_over: RetrieveOverOpt = None,
    retriever: RetrieverOpt = None,
    embed_url: EmbedUrlOpt = None,
    embed_model: EmbedModelOpt = None,
    yes: UnaskedYesOpt = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Every run and the rates per strategy, as JSON.")
    ] = False,
    trace_dir: Annotated[
        Path | None,
        typer.Option(
            "--trace-dir",
            exists=True,
            file_okay=False,
            dir_okay=True,
            help="Write each run's trace into this directory (one file per strategy and seed) "
            "instead of the trace directory (`toolcall trace list`).",
        ),
    ] = None,
    no_trace: NoTraceOpt = False,
) -> None:
    """Answer one question under every strategy, quietly, and compare them in one table.

    The strategies: regex, schema (tools, json, required) and stream. The table: iterations,
    tool calls, parse errors, errors recovered, the time to the first tool start, wall time,
    tokens, stop reason and the answer. Errors recovered are the parse errors and tool errors of
    a run that went on to answer (stop reason answered). --repeat N gives rates per strategy.
    Each run writes a trace, as `toolcall run` does (--trace-dir, --no-trace).
    Exit 0 when it ran, whatever each strategy did; 2 on a usage error.
    """
    from toolcall_cli.cli.assemble import load_registry, resolve_settings, session_retrieval
    from toolcall_cli.cli.compare import (
        ComparePlan,
        compare_record,
        print_comparison,
        progress_line,
        run_all,
        trace_stamp,
    )
    from toolcall_cli.cli.running import pipe_console
    from toolcall_cli.cli.tracing import choose_trace_dir
    from toolcall_cli.cli.variants import all_variants
    from toolcall_cli.limits import question_too_long
    from toolcall_cli.loop import deny_all

    if not question.strip():
        fail("the question is empty")
    options = SessionOptions(
        model=model,
        profile=profile,
        base_url=base_url,
        api_key=api_key,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        seed=seed,
        temperature=temperature,
        top_p=top_p,
        prompt_style=prompt_style,
        stream_mode=stream_mode,
        faults=fault_names(faults),
        fault_rate=fault_rate,
        tools=tuple(tools or ()),
        no_default_tools=no_default_tools,
        max_iterations=max_iterations,
        tool_timeout=tool_timeout,
        run_timeout=run_timeout,
        context_window=context_window,
        retrieve=retrieve,
        retrieve_over=retrieve_over,
        retriever=retriever,
        embed_url=embed_url,
        embed_model=embed_model,
        yes=yes,
    )
    settings = resolve_settings(options)
    if settings.choice.name == "scripted":
        # A script is one strategy's replies in that strategy's wire format.
        fail("compare runs every strategy, and a script is replies for one: use `toolcall run`")
    refused = question_too_long(question, settings.limits)
    if refused is not None:  # said once, and the code `run` exits with, not a row per strategy
        fail(refused)
    plan = ComparePlan(
        question=question,
        settings=settings,
        registry=load_registry(options.tools, options.no_default_tools),
        retrieval=session_retrieval(options, settings.choice, settings.config),
        variants=all_variants(stream_mode),
        seeds=tuple(settings.choice.seed + k for k in range(repeat)),
        approve=(lambda call, tool: "yes") if yes else deny_all,
        traces=choose_trace_dir(trace_dir, no_trace, settings.config),
        stamp=trace_stamp(),
    )
    with progress_line(plan) as starting:
        runs = run_all(plan, starting)
    if as_json:
        typer.echo(strictjson.dumps(compare_record(plan, runs), indent=2))
    else:
        print_comparison(plan, runs, pipe_console())


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


@app.command(context_settings={"ignore_unknown_options": True})
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

    Exit 0 when every step passes, 4 when problems were found, 2 when the trace cannot be read.
    """
    from toolcall_cli.cli.running import pipe_console
    from toolcall_cli.doctor import as_record, diagnose
    from toolcall_cli.render.doctor import print_diagnosis
    from toolcall_cli.trace import TraceError, read_trace
    from toolcall_cli.trace.files import find_trace, trace_dir

    if trace is not None and trace.startswith("--"):  # let through only for -N
        fail(f"no such option: {trace} (see `toolcall doctor --help`)")
    try:
        diagnosis = diagnose(read_trace(find_trace(trace, trace_dir())))
    except TraceError as error:
        fail(str(error))
    if as_json:
        typer.echo(strictjson.dumps(as_record(diagnosis), indent=2))
    else:
        console = pipe_console()
        # Piped: whole lines, not cut to the width of a terminal that is not there.
        console.soft_wrap = not console.is_terminal
        print_diagnosis(diagnosis, console)
    raise typer.Exit(EXIT_PROBLEMS if diagnosis.problem_count else 0)


@config_app.command("path")
def config_path_command() -> None:
    """Print where the config file is (it need not exist)."""
    from toolcall_cli.config import config_path

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
    from toolcall_cli.cli.assemble import limits_with
    from toolcall_cli.config import (
        ConfigError,
        config_path,
        load_config,
        mask,
        resolve,
        resolve_limits,
    )
    from toolcall_cli.keys import display_url

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
        ("schema_mode", resolved.schema_mode),
        ("base_url", display_url(resolved.base_url) if resolved.base_url else None),
        ("api_key", mask(resolved.api_key)),
        *((key, value) for key, value in dataclasses.asdict(resolved.sampling).items()),
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
    from toolcall_cli.trace.files import trace_dir

    names = sorted({*BUILTIN_PROFILES, *config.profiles})
    typer.echo(f"profiles: {', '.join(names)}")
    traced = f"on, the newest {config.trace_keep:,} kept" if config.trace else "off"
    typer.echo(f"traces: {traced} ({trace_dir()})")
