"""`toolcall trace list` and `toolcall trace show`: the recorded runs, newest first, and one of
them drawn again through the same renderers a live run uses."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolcall_cli import strictjson
from toolcall_cli.cli._options import PanelledCommand
from toolcall_cli.cli.entry import fail, trace_app

if TYPE_CHECKING:
    from rich.console import Console

    from toolcall_cli.events import Event
    from toolcall_cli.trace import Trace
    from toolcall_cli.trace.reader import TraceSummary


LimitOpt = Annotated[
    int,
    typer.Option("--limit", "-n", min=0, metavar="N", help="Show the newest N traces (0: all)."),
]
AllOpt = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Also the runs compare and replay made, which are kept apart from yours (their "
        "command says which).",
    ),
]
ListJsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="One JSON object per trace, one a line, newest first: id, path, when, command, "
        "question, questions, model, strategy, mode, iterations, stop_reason, tokens.",
    ),
]


@trace_app.command("list", cls=PanelledCommand)
def trace_list(limit: LimitOpt = 20, every: AllOpt = False, as_json: ListJsonOpt = False) -> None:
    """Your recorded runs in the trace directory, newest first: when, question, model,
    strategy, iterations, how the run stopped, and tokens. The runs compare and replay make
    are kept apart (--all lists them too)."""
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.trace import TraceError
    from toolcall_cli.trace.files import kept_apart_files, listed_traces, trace_dir
    from toolcall_cli.trace.reader import summarize

    directory = trace_dir()
    paths = listed_traces(directory, kept_apart=every)
    shown = paths[:limit] if limit else paths
    summaries: list[TraceSummary] = []
    for path in shown:
        try:
            summaries.append(summarize(path))
        except TraceError as error:
            typer.echo(f"toolcall: warning: {error}", err=True)
    if as_json:
        for summary in summaries:
            typer.echo(strictjson.dumps(summary.as_dict()))
        return
    if not summaries:
        typer.echo(f"No traces yet in {directory}.")
        return
    apart = 0 if every else len(kept_apart_files(directory))
    print_trace_table(summaries, directory, pipe_console(), Listing(len(paths), apart, every))


@dataclass(frozen=True)
class Listing:
    """What a trace list leaves out: how many traces there are in all (beyond those shown), and
    how many runs kept apart it does not list."""

    total: int
    kept_apart: int
    every: bool


def print_trace_table(
    summaries: Sequence[TraceSummary], directory: Path, console: Console, listing: Listing
) -> None:
    from rich.table import Table

    cells = row_cells_by_command if listing.every else row_cells
    if not console.is_terminal:
        # Piped: one line per trace, nothing cut to the width of a terminal that is not there.
        for summary in summaries:
            console.print("  ".join(cells(summary)), markup=False, soft_wrap=True)
        return
    table = Table(
        title=listing_title(len(summaries), listing, directory),
        title_justify="left",
        box=None,
        padding=(0, 1, 0, 0),
        header_style="bold",
    )
    headings = ("id", "when", "model", "strategy", "iter", "stop", "tokens")
    for heading in ("id", "command", *headings[1:]) if listing.every else headings:
        numbers = heading in ("iter", "tokens")
        table.add_column(heading, no_wrap=True, justify="right" if numbers else "left")
    # The one column that gives way in a narrow terminal: it wraps, the others never do.
    table.add_column("question", ratio=1)
    for summary in summaries:
        style = None if summary.stop_reason == "answered" else "yellow"
        table.add_row(*cells(summary), style=style)
    console.print(table)
    if listing.kept_apart:
        note = f"and {listing.kept_apart} runs of compare and replay, kept apart from yours: "
        console.print(note + "`toolcall trace list --all`", style="dim", markup=False)


def listing_title(shown: int, listing: Listing, directory: Path) -> str:
    """`3 traces in DIR`, or `20 of 57 traces in DIR` when -n left some out."""
    counted = f"{shown} of {listing.total}" if shown < listing.total else str(shown)
    return f"{counted} traces in {directory}"


def row_cells_by_command(summary: TraceSummary) -> list[str]:
    """A trace's row with the command that made it after its id (`trace list --all`)."""
    id_, *rest = row_cells(summary)
    return [id_, summary.command or "?", *rest]


def row_cells(summary: TraceSummary) -> list[str]:
    """id, when, model, strategy, iterations, stop, tokens, question: one trace's row."""
    from toolcall_cli.render.recorded import local_time

    question = " ".join(summary.question.split())
    if summary.questions > 1:
        question += f" (+{summary.questions - 1} more)"
    return [
        summary.id,
        local_time(summary.when),
        summary.model,
        summary.strategy_label,
        str(summary.iterations),
        summary.stop_reason,
        f"{summary.tokens:,}",
        question,
    ]


@trace_app.command("show", cls=PanelledCommand, context_settings={"ignore_unknown_options": True})
def trace_show(
    which: Annotated[
        str | None,
        typer.Argument(
            metavar="ID|FILE|-N",
            help="A trace id (or the start of one), a trace file, or -N for the Nth latest "
            "(default: the latest).",
        ),
    ] = None,
    plain: Annotated[bool, typer.Option("--plain", help="Plain lines, as in a pipe.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="The trace's records, one JSON object per line.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Write the view as an HTML page to this file."),
    ] = None,
    svg: Annotated[
        Path | None,
        typer.Option("--svg", metavar="FILE", help="Write the view as an SVG image to this file."),
    ] = None,
) -> None:
    """Draw a recorded run again, as the live view drew it (or --plain, or --json)."""
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.render.recorded import show_live

    if plain and as_json:
        fail("--plain and --json cannot be used together")
    trace = load_trace(which, "trace show")
    if as_json:
        for record in [*([trace.header] if trace.header else []), *trace.records]:
            typer.echo(strictjson.dumps(record))
        return
    events = recorded_events(trace)
    if html or svg:
        export_view(trace, events, html, svg)
        return
    if plain:
        show_plain(trace, events)
    else:
        show_live(trace, events, pipe_console())


def load_trace(which: str | None, command: str) -> Trace:
    """The trace `which` names (an id, a file, -N), read; one clear line and exit 2 when it
    cannot be. The commands that take one let unknown options through, for -N: `command`'s
    help is named for any other."""
    from toolcall_cli.trace import TraceError, read_trace
    from toolcall_cli.trace.files import find_trace, trace_dir

    if which is not None and which.startswith("--"):
        fail(f"no such option: {which} (see `toolcall {command} --help`)")
    try:
        trace = read_trace(find_trace(which, trace_dir()))
    except TraceError as error:
        fail(str(error))
    if trace.header is None and not trace.records:
        # An empty file, or one unfinished line of anything: `trace show` drew it as an empty
        # trace of version 0 and exited 0, where doctor said this.
        fail(f"{trace.path} holds no trace records")
    return trace


def recorded_events(trace: Trace) -> list[Event]:
    from toolcall_cli.trace import TraceError
    from toolcall_cli.trace.records import replayed_events

    try:
        return list(replayed_events(trace))
    except TraceError as error:
        fail(f"{trace.path}: {error}")


def show_plain(trace: Trace, events: Iterable[Event]) -> None:
    from toolcall_cli.render import make_renderer
    from toolcall_cli.render.recorded import title_line

    typer.echo(title_line(trace))
    renderer = make_renderer("plain", sys.stdout)
    try:
        for event in events:
            renderer.handle(event)
    finally:
        renderer.close()


def export_view(trace: Trace, events: Sequence[Event], html: Path | None, svg: Path | None) -> None:
    """The live view drawn into a recording console, saved as a page that can be shared."""
    from toolcall_cli.render.recorded import recording_console, show_live

    console = recording_console()
    show_live(trace, events, console)
    title = f"toolcall trace {trace.path.stem}"
    if html is not None:
        saved(html, lambda: console.save_html(str(html), clear=False))
    if svg is not None:
        saved(svg, lambda: console.save_svg(str(svg), title=title, clear=False))


def saved(path: Path, save: Callable[[], None]) -> None:
    try:
        save()
    except OSError as error:
        fail(f"cannot write {path}: {error.strerror or error}")
    typer.echo(f"toolcall: wrote {path}", err=True)
