"""`toolcall replay TRACE`: the recorded questions asked again (every turn of a chat, in order, in
one session), quietly, then a diff of what the model did then and now, per iteration; exit 0
when they match and 5 when they differ, so a replay is a regression check after a model
upgrade or a prompt change.

What the replay runs with: the flags given, and where none is given, what the recording was
made with (its header's settings: model, strategy and modes, prompt style, --dag, sampling and
seed, the offline model's faults, the limits, a --system-prompt's text), so a bare `toolcall
replay T` reproduces the run. Nothing read from a trace grants a permission: a shared trace is
anybody's text. What a tool may do (--allow, --yes), which tools and tool servers there are,
where the conversation and the tools' results are sent (the base URL or profile) and the API
key come from the replaying user's own flags, environment and config file, as for any run.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolcall_cli import strictjson
from toolcall_cli.cli.entry import (
    EXIT_DIFFERENT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    app,
    fail,
)
from toolcall_cli.cli.options import (
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
    FailedRoundsOpt,
    FaultRateOpt,
    FaultsOpt,
    HistoryRoundsOpt,
    IsolateOpt,
    LineBytesOpt,
    MaxIterOpt,
    MaxParallelOpt,
    MaxTokensOpt,
    McpOpt,
    ModelOpt,
    NoDefaultToolsOpt,
    NoFinalAnswerOpt,
    NoTraceOpt,
    ProfileOpt,
    PromptStyle,
    PromptStyleOpt,
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
    SchemaMode,
    SchemaModeOpt,
    ScriptOpt,
    SeedOpt,
    SessionOptions,
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
)
from toolcall_cli.config import (
    SAMPLING_KEYS,
    context_window_problem,
    limit_problem,
    retrieval_problem,
    sampling_problem,
)

if TYPE_CHECKING:
    from toolcall_cli.cli.assemble import Assembled
    from toolcall_cli.cli.running import RunTrace
    from toolcall_cli.events import Event
    from toolcall_cli.trace import Trace
    from toolcall_cli.trace.diff import ReplayDiff

RECORDED_CHOICES: dict[str, Callable[[Any], Any]] = {
    "strategy": StrategyName,
    "schema_mode": SchemaMode,
    "stream_mode": StreamMode,
    "prompt_style": PromptStyle,
}
"""Settings a header records as the value of a flag with a closed set of choices. Not `allow`:
a trace never raises what a tool may do."""
RECORDED_LIMITS = (
    "max_iterations",
    "tool_timeout",
    "run_timeout",
    "max_result_chars",
    "history_rounds",
    "max_failed_rounds",
    "max_repeated_rounds",
    "max_calls_per_reply",
    "max_reply_chars",
    "max_response_bytes",
    "max_line_bytes",
    "request_timeout",
)
"""The header's limits that have a flag of the same name (`run_timeout` is `--timeout`)."""
MAX_SHOWN_URL = 200


@app.command(context_settings={"ignore_unknown_options": True})
def replay(
    ctx: typer.Context,
    which: Annotated[
        str,
        typer.Argument(
            metavar="TRACE",
            help="The recorded run: a trace id (or the start of one), a trace file, or -N for "
            "the Nth latest.",
        ),
    ],
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
    yes: UnaskedYesOpt = False,
    dag: DagOpt = False,
    allow: AllowOpt = Allow.write,
    max_parallel: MaxParallelOpt = 4,
    isolate_tools: IsolateOpt = False,
    no_final_answer: NoFinalAnswerOpt = False,
    system_prompt: SystemPromptOpt = None,
    trace: TraceOpt = None,
    no_trace: NoTraceOpt = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="The comparison as one JSON object, for machines.")
    ] = False,
) -> None:
    """Ask a recorded run's questions again and show what changed, iteration by iteration.

    Every question of the trace (each turn of a chat, in order, in one session) is run again
    with the flags given; where a flag is not given, with what the recording was made with
    (model, strategy and modes, prompt style, sampling and seed, faults, limits, --system-prompt),
    so a bare `toolcall replay T` reproduces the run. `--model scripted` with no --script plays
    the trace's own replies. The diff: calls (names and arguments), parse errors and results
    per iteration, then iterations, stop reason, tokens (shown, never compared) and the answer.
    Exit 0 when the replay matches the recording, 5 when it differs, 2 on a usage error.
    """
    from toolcall_cli.cli.assemble import build_session
    from toolcall_cli.cli.tracing import choose_trace, start_trace
    from toolcall_cli.loop import deny_all

    if which.startswith("--"):  # let through only for -N
        fail(f"no such option: {which} (see `toolcall replay --help`)")
    recording = load_recording(which)
    questions = recorded_questions(recording)
    flags = {**ctx.params, "pace": None}
    given = {name for name in flags if was_given(ctx, name)}
    settings = recorded_settings(recording)
    flags = with_recorded(flags, given, settings, recording.path)
    check_recorded(flags, given, recording)
    options = SessionOptions.from_flags(flags, mode="quiet")
    own_prompt = settings.get("system_prompt") if "system_prompt" not in given else None
    assembled = build_session(
        options, system_prompt=own_prompt if isinstance(own_prompt, str) else None
    )
    if not yes:
        assembled.session.approve = deny_all  # nobody is there to be asked
    try:
        target = choose_trace(trace, no_trace, assembled)
        run_trace = start_trace(target, "replay", assembled, replay_of=recording.path)
        try:
            replayed, ends = ask_again(assembled, questions, run_trace)
        finally:
            run_trace.close()
    finally:
        assembled.session.close()
    diff = compared(recording, replayed, ends, assembled)
    show(diff, recording, assembled, options, run_trace.path, as_json)
    raise typer.Exit(0 if diff.same else EXIT_DIFFERENT)


def was_given(ctx: typer.Context, name: str) -> bool:
    """Whether the user gave this flag (rather than its default standing)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def load_recording(which: str) -> Trace:
    from toolcall_cli.trace import TraceError, read_trace
    from toolcall_cli.trace.files import find_trace, trace_dir

    try:
        return read_trace(find_trace(which, trace_dir()))
    except TraceError as error:
        fail(str(error))


def recorded_questions(recording: Trace) -> list[str]:
    """Every question the trace asked, in order; a refused one (its text was never recorded)
    is left out, and the diff says so."""
    from toolcall_cli.trace import runs

    questions = [
        str(run[0].get("question", ""))
        for run in runs(recording)
        if run[0]["kind"] == "run_started"
    ]
    if not questions:
        fail(f"{recording.path} records no question to ask again")
    return questions


def recorded_settings(recording: Trace) -> dict[str, Any]:
    """The header's settings; for a trace written before it had one, what its first run says."""
    if recording.header is not None:
        settings = recording.header.get("settings")
        return dict(settings) if isinstance(settings, dict) else {}
    started = next((r for r in recording.records if r["kind"] == "run_started"), {})
    return {key: started[key] for key in ("model", "strategy") if key in started}


def with_recorded(
    flags: Mapping[str, Any], given: set[str], settings: Mapping[str, Any], path: Path
) -> dict[str, Any]:
    """The flags, with each one the user did not give taken from the recording where it says."""
    chosen = dict(flags)
    for name, value in recorded_flags(settings).items():
        if name not in given:
            chosen[name] = value
    model = chosen.get("model")
    # What the recording said of its own model does not carry over to another one: the
    # offline model's faults.
    if model != "offline" and "faults" not in given:
        chosen["faults"] = flags.get("faults")
    if model == "scripted" and "script" not in given:
        chosen["script"] = path  # the trace's own replies, played back as they were sent
    return chosen


def check_recorded(flags: Mapping[str, Any], given: set[str], recording: Trace) -> None:
    """Each value taken from the recording checked as its flag would be (a trace may have been
    edited): one line naming the trace's header when one cannot be used."""
    for name, problem_of in RECORDED_CHECKS.items():
        value = flags.get(name)
        problem = None if name in given or value is None else problem_of(value)
        if problem:
            flag = "--timeout" if name == "run_timeout" else "--" + name.replace("_", "-")
            fail(
                f"{recording.path} line {recording.header_line}: the recorded {flag} {problem}; "
                f"give {flag} to replay it with another"
            )


def _between(low: float, high: float) -> Callable[[Any], str | None]:
    def problem(value: Any) -> str | None:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        within = number and low <= value <= high
        return None if within else f"must be from {low:g} to {high:g}, not {value!r}"

    return problem


def _faults_problem(names: str) -> str | None:
    from toolcall_cli.offline import UnknownFault, make_faults

    try:
        make_faults([names])
    except UnknownFault as error:
        return f"names an {error}"
    return None


RECORDED_CHECKS: dict[str, Callable[[Any], str | None]] = {
    **{
        name: functools.partial(limit_problem, "timeout" if name == "run_timeout" else name)
        for name in RECORDED_LIMITS
    },
    **{name: functools.partial(sampling_problem, name) for name in SAMPLING_KEYS},
    **{name: functools.partial(retrieval_problem, name) for name in ("retrieve", "retrieve_over")},
    "context_window": context_window_problem,
    "max_parallel": _between(1, 64),
    "fault_rate": _between(0, 1),
    "faults": lambda names: _faults_problem(str(names)),
}
"""How each value taken from a recording is checked: as its flag, or the config file, checks it."""


def recorded_flags(settings: Mapping[str, Any]) -> dict[str, Any]:
    """What the recording was made with, as the flags that would choose it."""
    chosen: dict[str, Any] = {}
    model = settings.get("model")
    if isinstance(model, str) and model:
        chosen["model"] = model
    # Never the endpoint (the base URL or a profile): whoever answers there drives the user's
    # tools and reads their results, and a profile would spend whichever key it names.
    for name, choice in RECORDED_CHOICES.items():
        with contextlib.suppress(ValueError):
            if isinstance(settings.get(name), str):
                chosen[name] = choice(settings[name])
    sampling = settings.get("sampling")
    if isinstance(sampling, dict):
        chosen.update({k: sampling[k] for k in ("temperature", "top_p", "seed", "max_tokens")
                       if k in sampling})  # fmt: skip
    if isinstance(settings.get("dag"), bool):
        chosen["dag"] = settings["dag"]
    if isinstance(settings.get("faults"), list):
        chosen["faults"] = ",".join(map(str, settings["faults"])) or None
    for name in ("fault_rate", "max_parallel"):
        if isinstance(settings.get(name), (int, float)) and not isinstance(settings[name], bool):
            chosen[name] = settings[name]
    chosen.update(recorded_limits(settings.get("limits")))
    chosen.update(recorded_retrieval(settings.get("retrieval")))
    return chosen


def recorded_retrieval(retrieval: Any) -> dict[str, Any]:
    """--retrieve and --retrieve-over as recorded: the same tools are then chosen again. The
    ranker is not carried over: an embed ranker's endpoint and model are not recorded."""
    if not isinstance(retrieval, dict):
        return {}
    return {
        name: retrieval[name]
        for name in ("retrieve", "retrieve_over")
        if isinstance(retrieval.get(name), int) and not isinstance(retrieval[name], bool)
    }


def recorded_limits(limits: Any) -> dict[str, Any]:
    if not isinstance(limits, dict):
        return {}
    chosen = {name: limits[name] for name in RECORDED_LIMITS if limits.get(name) is not None}
    if "max_repeated_rounds" not in limits and isinstance(limits.get("max_iterations"), int):
        # Recorded before repeats had their own limit: they counted only as failed rounds. A
        # limit past the run's iterations replays the run as the engine of the day ran it.
        chosen["max_repeated_rounds"] = limits["max_iterations"] + 1
    if limits.get("last_answer") is False:
        chosen["no_final_answer"] = True
    window = limits.get("context_window")
    if isinstance(window, dict) and window.get("source") == "--context-window":
        chosen["context_window"] = window.get("tokens")
    return chosen


def ask_again(
    assembled: Assembled, questions: list[str], run_trace: RunTrace
) -> tuple[list[list[Event]], list[str]]:
    """Each question asked in turn in the one session, quietly, every event traced; and what
    the scripted model's script said of lining up with them (if the model is scripted)."""
    from toolcall_cli.events import RunFinished
    from toolcall_cli.models.scripted import scripted_model
    from toolcall_cli.trace import RunProgress, TraceWriteError

    session = assembled.session
    script = scripted_model(session.model)
    replayed: list[list[Event]] = []
    ends: list[str] = []
    with progress_line(len(questions)) as asking:
        for number, question in enumerate(questions, start=1):
            asking(number)
            events: list[Event] = []
            progress = RunProgress()
            try:
                for event in session.ask(question):
                    progress.add(event)
                    if isinstance(event, RunFinished) and script is not None:
                        for end in script.ends(final=number == len(questions)):
                            run_trace.script_end(end)
                            ends.append(end.message)
                    run_trace.write(event)
                    events.append(event)
            except KeyboardInterrupt:
                run_trace.cut_short("ctrl-c", "interrupted by Ctrl-C", progress.interrupted())
                typer.echo("toolcall: interrupted", err=True)
                raise typer.Exit(EXIT_INTERRUPTED) from None
            except TraceWriteError as error:
                fail(str(error), EXIT_FAILURE)
            replayed.append(events)
    return replayed, ends


@contextlib.contextmanager
def progress_line(count: int) -> Iterator[Callable[[int], None]]:
    """On a terminal, which question is being asked (stderr, gone when done)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda _: None
        return
    with console.status("replay") as status:
        yield lambda n: status.update(f"replaying question {n} of {count}")


def compared(
    recording: Trace, replayed: list[list[Event]], ends: list[str], assembled: Assembled
) -> ReplayDiff:
    from toolcall_cli.trace import TraceError, event_from_record, runs
    from toolcall_cli.trace.diff import ReplayDiff, compare_runs, summarize_run

    recorded_runs = [run for run in runs(recording) if run[0]["kind"] == "run_started"]
    try:
        recorded = [
            summarize_run(e for r in run if (e := event_from_record(r)) is not None)
            for run in recorded_runs
        ]
    except TraceError as error:
        fail(f"{recording.path}: {error}")
    questions = tuple(
        compare_runs(old, summarize_run(new), number)
        for number, (old, new) in enumerate(zip(recorded, replayed, strict=True), start=1)
    )
    return ReplayDiff(questions, notes=tuple(ends), remarks=tuple(remarks(recording, assembled)))


def remarks(recording: Trace, assembled: Assembled) -> Iterator[str]:
    """What is worth knowing beside the diff: questions not asked again, tools that changed."""
    from toolcall_cli.trace import runs
    from toolcall_cli.trace.writer import plugin_hashes

    refused = sum(1 for run in runs(recording) if run[0]["kind"] != "run_started")
    if refused:
        yield f"{refused} refused question(s) not asked again: the trace does not hold their text"
    yield from not_taken(recorded_settings(recording), assembled.settings)
    header = recording.header or {}
    then = {t.get("name") for t in header.get("tools") or [] if isinstance(t, dict)}
    now = set(assembled.session.registry.names())
    if header and then != now:
        gone, new = sorted(map(str, then - now)), sorted(now - then)
        parts = ([f"gone: {', '.join(gone)}"] if gone else []) + (
            [f"new: {', '.join(new)}"] if new else []
        )
        yield f"the tools differ from the recording's ({'; '.join(parts)})"
    recorded_hashes = header.get("plugins") or {}
    current = plugin_hashes(tool.source for tool in assembled.session.registry)
    changed = sorted(
        Path(source).name
        for source, digest in current.items()
        if source in recorded_hashes and recorded_hashes[source] != digest
    )
    if changed:
        yield f"tool files changed since the recording: {', '.join(changed)}"


def not_taken(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> Iterator[str]:
    """What the recording was allowed or sent to that the replay took from the user instead."""
    allow = recorded.get("allow")
    if allow in {level.value for level in Allow} and allow != now.get("allow"):
        yield (
            f"recorded with --allow {allow}, replayed with --allow {now.get('allow')}: "
            "a trace never grants a permission"
        )
    url, profile = recorded.get("base_url"), recorded.get("profile")
    if isinstance(url, str) and url != now.get("base_url"):
        shown = f" {url}" if url.isprintable() and len(url) <= MAX_SHOWN_URL else ""
        yield (
            f"recorded against the endpoint{shown}, which is not asked: the base URL comes from "
            "your flags and config, never from a trace"
        )
    elif isinstance(profile, str) and profile != now.get("profile"):
        shown = f" {profile}" if profile.isprintable() and len(profile) <= MAX_SHOWN_URL else ""
        yield (
            f"recorded with the profile{shown}, which is not used: the endpoint comes from your "
            "flags and config, never from a trace"
        )


def show(
    diff: ReplayDiff,
    recording: Trace,
    assembled: Assembled,
    options: SessionOptions,
    replay_trace: Path | None,
    as_json: bool,
) -> None:
    from toolcall_cli.cli.assemble import strategy_label
    from toolcall_cli.cli.running import pipe_console

    session = assembled.session
    settings = recorded_settings(recording)
    now = {
        "model": session.model.name,
        "strategy": strategy_label(session.strategy, options),
    }
    then = {
        "model": str(settings.get("model", "?")),
        "strategy": recorded_label(settings),
    }
    if as_json:
        shown = {
            "recording": str(recording.path),
            "replay_trace": str(replay_trace) if replay_trace else None,
            "recorded": then,
            "replayed": now,
            **diff.record(),
        }
        typer.echo(strictjson.dumps(shown, indent=2))
        return
    from toolcall_cli.render.replay import print_replay

    console = pipe_console()
    console.soft_wrap = not console.is_terminal  # piped: whole lines
    print_replay(diff, recording.path, then, now, replay_trace, console)


def recorded_label(settings: Mapping[str, Any]) -> str:
    name = str(settings.get("strategy", "?"))
    if name == "schema" and settings.get("schema_mode"):
        return f"schema {settings['schema_mode']}"
    if name == "stream" and settings.get("stream_mode"):
        return f"stream {settings['stream_mode']}"
    return name
