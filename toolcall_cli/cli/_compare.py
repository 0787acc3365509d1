"""`toolcall compare`: one question under every strategy, each run quietly (no live view) and
traced, then one table of what each did, read from its events; with `--repeat N`, rates per
strategy over the seeds S, S+1, ... S+N-1."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from toolcall_cli import strictjson
from toolcall_cli.app.build import Toolbox, load_toolbox, variant_session
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.app.settings import Settings, resolve_settings, session_retrieval
from toolcall_cli.app.variants import Variant, all_variants
from toolcall_cli.cli._running import RunTrace, pipe_console, status_line
from toolcall_cli.cli._tracing import TraceDir, choose_trace_dir, open_trace
from toolcall_cli.cli.entry import EXIT_FAILURE, fail, warn
from toolcall_cli.evaluate.figures import RunFigures, RunTally, StrategyRates, rates
from toolcall_cli.history import preview
from toolcall_cli.limits import question_refused
from toolcall_cli.render.base import visible
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.termination import Terminated
from toolcall_cli.trace import RunProgress, TraceWriteError

RECOVERED_MEANS = (
    "recovered: parse and tool errors in a run that went on to answer "
    "(a best-effort answer at the limit is not one)"
)

PIPE_WIDTH = 160
"""The table's width where stdout is no terminal."""
ANSWER_ROOM = 24
"""Narrower than this, the answers go under the table instead of in a column."""


@dataclass(frozen=True)
class ComparePlan:
    """What `compare` runs: the question under each variant, once per seed."""

    question: str
    settings: Settings
    toolbox: Toolbox
    """The tools, loaded once for every run (plugins and MCP servers)."""
    retrieval: Retrieval | None
    """How each request's tools are chosen (--retrieve), as in `toolcall run`."""
    variants: tuple[Variant, ...]
    seeds: tuple[int, ...]
    traces: TraceDir | None = None
    """Where each run's trace goes; None: nowhere."""
    stamp: str = ""
    """When the comparison started, shared by the names of its traces in a --trace-dir."""
    given_up: list[str] = field(default_factory=list)
    """One line per MCP server a run gave up on: the runs after it went without its tools."""

    @property
    def runs(self) -> int:
        return len(self.variants) * len(self.seeds)


def compare_all(
    question: str,
    options: SessionOptions,
    repeat: int,
    as_json: bool,
    trace_dir: Path | None,
    no_trace: bool,
) -> None:
    """`toolcall compare`: every strategy answers, once per seed; then the table (or JSON)."""
    settings = resolve_settings(options)
    if settings.choice.name == "scripted":
        # A script is one strategy's replies in that strategy's wire format.
        fail("compare runs every strategy, and a script is replies for one: use `toolcall run`")
    refused = question_refused(question, settings.limits)
    if refused is not None:  # said once, and the code `run` exits with, not a row per strategy
        fail(refused)
    toolbox = load_toolbox(settings, warn)
    try:
        plan = ComparePlan(
            question=question,
            settings=settings,
            toolbox=toolbox,
            retrieval=session_retrieval(settings),
            variants=all_variants(settings.options.strategy.stream_mode),
            seeds=tuple(settings.choice.seed + k for k in range(repeat)),
            traces=choose_trace_dir(trace_dir, no_trace, settings.config),
            stamp=trace_stamp(),
        )
        with status_line("compare") as say:
            runs = run_all(plan, say)
    finally:
        toolbox.close()
    if as_json:
        typer.echo(strictjson.dumps(compare_record(plan, runs), indent=2))
    else:
        print_comparison(plan, runs, pipe_console())
    for line in plan.given_up:
        warn(line)


def trace_path(plan: ComparePlan, variant: Variant, seed: int) -> Path | None:
    """Where one run's trace goes; None: it gets none. In compare's folder of the trace
    directory it is named and pruned as every run's trace is; in a --trace-dir, named by
    strategy and seed."""
    where = plan.traces
    if where is None:
        return None
    if not where.default:
        name = f"{plan.stamp}-compare-{variant.label.replace(' ', '-')}-seed{seed}.jsonl"
        return where.directory / name
    from toolcall_cli.trace.files import new_trace_path, prune

    try:
        path = new_trace_path(where.directory)
    except OSError as error:  # the directory went away since the comparison began
        warn(f"no trace written: {where.directory}: {error.strerror or error}")
        return None
    prune(where.directory, where.keep, spare=path)
    return path


def trace_stamp() -> str:
    """`20250102-030405-1a2b3c`: UTC time, then 6 random hex digits, so two comparisons in the
    same second never append to each other's traces."""
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def run_all(plan: ComparePlan, say: Callable[[str], None] = lambda _: None) -> list[RunFigures]:
    """Every variant under every seed, seed by seed; `say` is told which run begins, for a
    status line."""
    done: list[RunFigures] = []
    for seed in plan.seeds:
        for variant in plan.variants:
            say(f"{variant.label}, seed {seed} ({len(done) + 1}/{plan.runs})")
            before = servers_given_up(plan.toolbox)
            done.append(run_one(plan, variant, seed))
            # The servers are started once for every run, and one given up on is not started
            # again: the rows after it compare strategies on fewer tools.
            plan.given_up.extend(
                f"MCP server {name!r} was given up on in the {variant.label} run (seed {seed}); "
                "the runs after it went without its tools, so their rows do not compare"
                for name in servers_given_up(plan.toolbox) - before
            )
    return done


def servers_given_up(toolbox: Toolbox) -> set[str]:
    return set(toolbox.servers.given_up()) if toolbox.servers is not None else set()


def run_one(plan: ComparePlan, variant: Variant, seed: int) -> RunFigures:
    """One run, traced as `toolcall run` traces (a header, then every event; a run cut short
    ends with its final event and an `interrupted` line)."""
    assembled = variant_session(
        plan.settings,
        plan.toolbox,
        variant,
        seed=seed,
        retrieval=plan.retrieval,
    )
    session = assembled.session
    path = trace_path(plan, variant, seed)
    run_trace = RunTrace()
    if path is not None and plan.traces is not None:
        run_trace = open_trace(path, "compare", assembled, default=plan.traces.default)
    tally = RunTally(variant.label, seed, str(run_trace.path) if run_trace.path else None)
    progress = RunProgress()
    try:
        for event in session.ask(plan.question):
            run_trace.write(event)
            tally.add(event)
            progress.add(event)
    except (KeyboardInterrupt, Terminated) as stop:
        run_trace.stopped(stop, progress.interrupted())
        raise
    except TraceWriteError as error:
        fail(str(error), EXIT_FAILURE)
    except Exception as error:
        last = None if progress.finished else progress.interrupted()
        run_trace.crashed(error, last)
        raise
    finally:
        run_trace.close()
        session.close()
    return tally.figures()


def by_strategy(plan: ComparePlan, runs: Sequence[RunFigures]) -> list[StrategyRates]:
    return [rates(v.label, [r for r in runs if r.label == v.label]) for v in plan.variants]


def compare_record(plan: ComparePlan, runs: Sequence[RunFigures]) -> dict[str, Any]:
    """`compare --json`: every run, and the rates per strategy."""
    return {
        "question": plan.question,
        "model": plan.settings.choice.name,
        "seeds": list(plan.seeds),
        "trace_dir": str(plan.traces.directory) if plan.traces else None,
        "strategies": [
            {**variant.record(), **rated.record()}
            for variant, rated in zip(plan.variants, by_strategy(plan, runs), strict=True)
        ],
        "runs": [run.record() for run in runs],
    }


def print_comparison(plan: ComparePlan, runs: Sequence[RunFigures], console: Console) -> None:
    """One table: a row per run with one seed, a row of rates per strategy with several."""
    if not console.is_terminal:
        # No terminal, no width to cut to: the answers get room enough to read.
        console.width = max(console.width, PIPE_WIDTH)
    if len(plan.seeds) == 1:
        table, below = runs_with_answers(runs, console)
    else:
        table, below = rates_table(by_strategy(plan, runs)), []
    table.title = Text(heading(plan))
    console.print(table)
    for line in below:
        console.print(line)
    console.print()
    console.print(Text(RECOVERED_MEANS, style="dim"))
    written = sum(1 for run in runs if run.trace)
    if plan.traces is not None and written:
        where = plan.traces
        listed = " (toolcall trace list --all)" if where.default else ""
        console.print(Text(f"traces: {written} in {where.directory}{listed}", style="dim"))


def runs_with_answers(runs: Sequence[RunFigures], console: Console) -> tuple[Table, list[Text]]:
    """The answers as the table's last column, cut where the line ends; where the figures leave
    too little room for that, one line each under the table, cut the same way."""
    figures = runs_table(runs)
    room = console.width - Measurement.get(console, console.options, figures).maximum - 2
    if room < ANSWER_ROOM:
        lines = [Text.assemble((f"{run.label}: ", "bold cyan"), answer_cell(run)) for run in runs]
        return figures, lines
    longest = max(answer_cell(run).cell_len for run in runs)
    return runs_table(runs, answer_width=min(room, max(longest, len("answer")))), []


def heading(plan: ComparePlan) -> str:
    seeds = plan.seeds
    seed = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"
    return visible(f"{preview(plan.question, 60)}  ({plan.settings.choice.name}, {seed})")


def figure_table(first: str, columns: Sequence[str]) -> Table:
    """A line under the head, no frame, two spaces between columns: the width is for figures."""
    table = Table(
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 0, 0, 1),
    )
    table.add_column(first, style="bold cyan", no_wrap=True)
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    return table


def runs_table(runs: Sequence[RunFigures], answer_width: int | None = None) -> Table:
    table = figure_table(
        "strategy",
        ("iter", "calls", "parse\nerrors", "recovered", "first\ntool", "wall", "tokens", "stop"),
    )
    if answer_width is not None:
        table.add_column("answer", width=answer_width, no_wrap=True)
    for run in runs:
        answer = [answer_cell(run)] if answer_width is not None else []
        table.add_row(
            run.label,
            str(run.iterations),
            str(run.calls),
            str(run.parse_errors),
            recovered_cell(run.errors_recovered, run.errors),
            seconds(run.first_tool_start),
            seconds(run.wall_time),
            token_cell(run.tokens, run.tokens_estimated),
            run.stop_reason,
            *answer,
        )
    return table


def rates_table(rated: Sequence[StrategyRates]) -> Table:
    table = figure_table(
        "strategy",
        (
            "answered",
            "mean\niter",
            "mean\ncalls",
            "parse\nerrors",
            "recovered",
            "mean\nfirst tool",
            "mean\nwall",
            "mean\ntokens",
        ),
    )
    table.add_column("stops")
    for row in rated:
        table.add_row(
            row.label,
            f"{row.answered}/{row.runs} ({row.answered_rate:.0%})",
            f"{row.mean_iterations:.1f}",
            f"{row.mean_calls:.1f}",
            str(row.parse_errors),
            recovered_cell(row.errors_recovered, row.errors),
            seconds(row.mean_first_tool_start),
            seconds(row.mean_wall_time),
            token_cell(round(row.mean_tokens), row.tokens_estimated),
            ", ".join(f"{reason} {n}" for reason, n in row.stop_reasons.items()),
        )
    return table


def recovered_cell(recovered: int, errors: int) -> str:
    """`2/3`: two of three errors recovered; `-` when there was none to recover."""
    return f"{recovered}/{errors}" if errors else "-"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def token_cell(tokens: int, estimated: bool) -> str:
    """`~` marks an estimate (the model reported no usage)."""
    return f"{'~' if estimated else ''}{tokens:,}"


def answer_cell(run: RunFigures) -> Text:
    """One line, cut with `…` where the table ends: the column gives way before any figure."""
    if run.failure is not None:
        text, style = f"model failed: {run.failure}", "red"
    elif run.answer is None:
        text, style = "(no answer)", "dim"
    else:
        text, style = ("" if run.answered else "best effort: ") + run.answer, ""
    return Text(visible(preview(text, 500)), style=style, no_wrap=True, overflow="ellipsis")
