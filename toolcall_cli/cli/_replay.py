"""`toolcall replay TRACE`: the recorded questions asked again (every turn of a chat, in order, in
one session), quietly, then a diff of what the model did then and now, per iteration; exit 0
when they match and 5 when they differ, so a replay is a regression check after a model
upgrade or a prompt change. What the replay runs with is app/replaying.py's business: nothing
read from a trace grants a permission.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolcall_cli import strictjson
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.cli._options import PanelledCommand, TraceFile, with_groups
from toolcall_cli.cli.entry import (
    EXIT_DIFFERENT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    app,
    fail,
    warn,
)
from toolcall_cli.termination import Terminated
from toolcall_cli.wording import plural

if TYPE_CHECKING:
    from toolcall_cli.app.build import Assembled
    from toolcall_cli.cli._running import RunTrace
    from toolcall_cli.events import Event
    from toolcall_cli.tools.registry import ToolRegistry
    from toolcall_cli.trace import Trace
    from toolcall_cli.trace.diff import ReplayDiff
    from toolcall_cli.trace.reader import Record

TraceArg = Annotated[
    str,
    typer.Argument(
        metavar="TRACE",
        help="The recorded run: a trace id (or the start of one), a trace file, or -N for the "
        "Nth latest.",
    ),
]
MAX_SHOWN_URL = 200
"""A recorded endpoint or profile longer than this is not shown in the remarks."""
JsonOpt = Annotated[
    bool, typer.Option("--json", help="The comparison as one JSON object, for machines.")
]


@app.command(cls=PanelledCommand, context_settings={"ignore_unknown_options": True})
@with_groups
def replay(
    ctx: typer.Context,
    which: TraceArg,
    *,
    options: SessionOptions,
    trace: TraceFile,
    as_json: JsonOpt = False,
) -> None:
    """Ask a recorded run's questions again and show what changed, iteration by iteration.

    Every question of the trace (each turn of a chat, in order, in one session; each run that
    `--trace FILE` appended, alone) is run again with the flags given; where a flag is not
    given, with what the recording was made with (model, strategy and modes, prompt style,
    sampling and seed, faults, limits, --system-prompt), so a bare `toolcall replay T`
    reproduces the run. `--model scripted` with no --script plays the trace's own replies. The
    diff: calls (names and arguments), parse errors and results
    per iteration, then iterations, stop reason, tokens (shown, never compared) and the answer.
    Exit 0 when the replay matches the recording, 5 when it differs, 2 on a usage error.
    """
    from toolcall_cli.app.build import build_session
    from toolcall_cli.app.replaying import (
        recorded_settings,
        recorded_system_prompt,
        replay_options,
    )
    from toolcall_cli.cli._trace_commands import load_trace
    from toolcall_cli.cli._tracing import start_trace

    recording = load_trace(which, "replay")
    questions = recorded_questions(recording)
    alone = asked_alone(recording)
    given = {name for name in options.flat() if was_given(ctx, name)}
    settings = recorded_settings(recording)
    options = replay_options(options, given, settings, recording.path, recording.header_line)
    own_prompt = recorded_system_prompt(settings, given)
    # Nobody is there to be asked: dangerous tools run with --yes, and are declined without.
    assembled = build_session(options, system_prompt=own_prompt, warn=warn)
    try:
        run_trace = start_trace(trace, "replay", assembled, replay_of=recording.path)
        try:
            replayed, ends = ask_again(assembled, questions, run_trace, alone)
        finally:
            run_trace.close()
    finally:
        assembled.session.close()
    diff = compared(recording, replayed, ends, assembled)
    show(diff, recording, assembled, run_trace.path, as_json)
    raise typer.Exit(0 if diff.same else EXIT_DIFFERENT)


def was_given(ctx: typer.Context, name: str) -> bool:
    """Whether the user gave this flag (rather than its default standing)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


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


def asked_alone(recording: Trace) -> set[int]:
    """The questions (0-based, as recorded_questions counts them) that a command of their own
    asked: each later header starts one (`--trace FILE` given to another run), where the turns
    of a chat share the first."""
    from toolcall_cli.trace.reader import HEADER_KIND

    alone: set[int] = set()
    asked, new_header = 0, False
    for record in recording.records:
        if record["kind"] == HEADER_KIND:
            new_header = asked > 0
        elif record["kind"] == "run_started":
            if new_header:
                alone.add(asked)
            asked, new_header = asked + 1, False
    return alone


def ask_again(
    assembled: Assembled, questions: list[str], run_trace: RunTrace, alone: set[int]
) -> tuple[list[list[Event]], list[str]]:
    """Each question asked in turn in the one session, quietly, every event traced; and what
    the scripted model's script said of lining up with them (if the model is scripted). A
    question asked `alone` is asked with none of the conversation before it, as it was."""
    from toolcall_cli.cli._running import status_line
    from toolcall_cli.events import RunFinished
    from toolcall_cli.models.scripted import scripted_model
    from toolcall_cli.trace import RunProgress, TraceWriteError

    session = assembled.session
    script = scripted_model(session.model)
    replayed: list[list[Event]] = []
    ends: list[str] = []
    with status_line("replay") as say:
        for number, question in enumerate(questions, start=1):
            say(f"replaying question {number} of {len(questions)}")
            if number - 1 in alone:
                session.reset()
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
            except (KeyboardInterrupt, Terminated) as stop:
                run_trace.stopped(stop, progress.interrupted())
                if isinstance(stop, Terminated):
                    raise
                typer.echo("toolcall: interrupted", err=True)
                raise typer.Exit(EXIT_INTERRUPTED) from None
            except TraceWriteError as error:
                fail(str(error), EXIT_FAILURE)
            replayed.append(events)
    return replayed, ends


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
    from toolcall_cli.app.replaying import recorded_settings
    from toolcall_cli.trace import runs

    refused = sum(1 for run in runs(recording) if run[0]["kind"] != "run_started")
    if refused:
        questions = plural(refused, "refused question")
        yield f"{questions} not asked again: the trace does not hold their text"
    if any(
        h.get("settings") != (recording.header or {}).get("settings") for h in headers(recording)
    ):
        yield (
            "the trace holds runs recorded with other settings than its first: all were "
            "replayed with the first's (and the flags given)"
        )
    header = recording.header or {}
    registry = assembled.session.registry
    if header:
        yield from tools_differ(header, set(registry.names()))
    yield from files_changed(header, registry)
    yield from not_taken(recorded_settings(recording), assembled.settings)


def headers(recording: Trace) -> list[Record]:
    """Every header of the trace, the first too: each run that `--trace FILE` appended wrote
    its own."""
    from toolcall_cli.trace.reader import HEADER_KIND

    return [record for record in recording.records if record["kind"] == HEADER_KIND]


def not_taken(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> Iterator[str]:
    """What the recording was allowed or sent to that the replay took from the user instead."""
    allow = recorded.get("allow")
    if allow in ("read", "write", "admin") and allow != now.get("allow"):
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


def tools_differ(header: Mapping[str, Any], now: set[str]) -> Iterator[str]:
    """The tools the recording had and the replay has not, and the other way round."""
    then = {t.get("name") for t in header.get("tools") or [] if isinstance(t, dict)}
    if then == now:
        return
    gone, new = sorted(map(str, then - now)), sorted(now - then)
    parts = ([f"gone: {', '.join(gone)}"] if gone else []) + (
        [f"new: {', '.join(new)}"] if new else []
    )
    yield f"the tools differ from the recording's ({'; '.join(parts)})"


def files_changed(header: Mapping[str, Any], registry: ToolRegistry) -> Iterator[str]:
    """The plugin files whose text is not what the recording's was."""
    from toolcall_cli.trace.writer import plugin_hashes

    recorded_hashes = header.get("plugins") or {}
    current = plugin_hashes(tool.source for tool in registry)
    changed = sorted(
        Path(source).name
        for source, digest in current.items()
        if source in recorded_hashes and recorded_hashes[source] != digest
    )
    if changed:
        yield f"tool files changed since the recording: {', '.join(changed)}"


def show(
    diff: ReplayDiff,
    recording: Trace,
    assembled: Assembled,
    replay_trace: Path | None,
    as_json: bool,
) -> None:
    from toolcall_cli.app.build import session_label
    from toolcall_cli.app.replaying import recorded_settings
    from toolcall_cli.app.variants import strategy_label
    from toolcall_cli.cli._running import pipe_console

    session = assembled.session
    settings = recorded_settings(recording)
    now = {
        "model": session.model.name,
        "strategy": session_label(session.strategy, assembled.options),
    }
    then = {
        "model": str(settings.get("model", "?")),
        "strategy": strategy_label(
            str(settings.get("strategy", "?")),
            settings.get("schema_mode"),
            settings.get("stream_mode"),
        ),
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

    console = pipe_console(whole_lines=True)
    print_replay(diff, recording.path, then, now, replay_trace, console)
