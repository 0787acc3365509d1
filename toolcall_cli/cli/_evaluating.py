"""`toolcall eval`: the command's flags made into a plan (models, strategies, seeds, the eval's
folder), a progress bar while it runs, then the table, the grid, --json or --html, and the exit
code --fail-under asks for. The running and the grading are evaluate/'s."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolcall_cli import strictjson
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.cli._eval_flags import EvalFlags
from toolcall_cli.cli._options import PanelledCommand, Without, with_groups
from toolcall_cli.cli.entry import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    app,
    fail,
    first_stop_only,
    warn,
)
from toolcall_cli.termination import Terminated
from toolcall_cli.wording import plural

if TYPE_CHECKING:
    from rich.console import Console

    from toolcall_cli.app.variants import Variant
    from toolcall_cli.evaluate.cases import Case
    from toolcall_cli.evaluate.runner import Done, EvalPlan, EvalRun, Strategy, Target


@app.command("eval", cls=PanelledCommand)
@with_groups
def eval_command(
    cases: Annotated[
        Path,
        typer.Argument(
            metavar="FILE", help="The case file: JSONL, TOML, or BFCL's questions (--format)."
        ),
    ],
    *,
    flags: EvalFlags,
    options: Annotated[
        SessionOptions, Without("strategy", "schema_mode", "model", "profile", "base_url")
    ],
) -> None:
    """Run many cases under every model and strategy asked for, grade them, and report.

    Each case: a question, and what counts as right (the calls, the answer, or no call). The
    table: right, wrong (which way), no answer, mean iterations, tokens and wall time, per
    model and strategy; then a grid of every case. Every run writes a trace in the eval's
    folder (toolcall trace show FILE, doctor FILE, replay FILE). Exit 0 when it ran; 1 when
    --fail-under is not reached, or a model failed every run; 2 on a usage error.
    """
    raise typer.Exit(evaluate(cases, flags, options))


def listed(values: Sequence[str] | None) -> tuple[str, ...]:
    """`--model a,b --model c` as (a, b, c)."""
    return tuple(
        part.strip() for value in values or () for part in value.split(",") if part.strip()
    )


def evaluate(cases_file: Path, flags: EvalFlags, options: SessionOptions) -> int:
    from toolcall_cli.evaluate.cases import read_cases
    from toolcall_cli.evaluate.runner import run_eval

    cases = read_cases(cases_file, flags.case_format)
    if flags.html is not None:
        check_html_target(flags.html)
    plan = make_plan(cases_file, flags, options, cases)
    # The first Ctrl-C or signal stops the eval; one more while it stops must not cut short
    # the ending of the runs' traces, nor the line saying what is kept.
    with first_stop_only():
        try:
            with progress_bar(plan) as done:
                runs = run_eval(plan, done, warn)
        except (KeyboardInterrupt, Terminated) as stop:
            # typer makes a Ctrl-C a silent exit 130, and main() says a signal in a word:
            # after an hour of runs, the user is told once what stopped it, what is kept and
            # how to go on.
            with contextlib.suppress(OSError):  # stderr may be the terminal that hung up
                typer.echo(stopped_line(stop, plan), err=True)
            return 128 + stop.signal if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    return report(flags, plan, runs)


def stopped_line(stop: BaseException, plan: EvalPlan) -> str:
    """What stopped the eval, what is kept, and how to go on: one line, whichever the signal."""
    if isinstance(stop, Terminated):
        why = f"terminated ({stop.signal.name})"
    else:
        why = "interrupted (Ctrl-C)"
    return (
        f"toolcall: {why}: {len(plan.done)} of {plan.total} runs done, kept in {plan.folder}; "
        "the same command with --resume goes on from there"
    )


# --- the plan ------------------------------------------------------------------------------------


def targets(flags: EvalFlags, options: SessionOptions) -> list[Target]:
    """A model per profile × base URL × model name given (each a list, or none)."""
    from toolcall_cli.app.settings import resolve_settings
    from toolcall_cli.evaluate.runner import Target

    made = []
    for profile, base_url, name in itertools.product(
        listed(flags.profiles) or (None,),
        listed(flags.base_urls) or (None,),
        listed(flags.models) or (None,),
    ):
        chosen = options.replace(model=name, profile=profile, base_url=base_url)
        settings = resolve_settings(chosen)
        if settings.choice.name == "scripted":
            fail("eval runs many cases, and a script is replies for one run: use `toolcall run`")
        made.append((settings, profile or base_url))
    names = [settings.choice.name for settings, _ in made]
    return [
        Target(name if names.count(name) == 1 or not where else f"{name}@{where}", settings)
        for (settings, where), name in zip(made, names, strict=True)
    ]


def strategies(text: str, options: SessionOptions) -> list[Strategy]:
    from toolcall_cli.app.variants import Variant, all_variants
    from toolcall_cli.evaluate.runner import Strategy

    stream_mode = options.strategy.stream_mode
    named: dict[str, Variant | None] = {
        "default": None,
        "regex": Variant("regex"),
        "schema": Variant("schema", schema_mode="tools"),
        "stream": Variant("stream", stream_mode=stream_mode),
    }
    for variant in (*all_variants("tags"), Variant("stream", stream_mode="native")):
        named[variant.label.replace(" ", "-")] = variant
    chosen: list[Variant | None] = []
    for word in listed([text.replace(" ", "-")]):
        if word == "all":
            chosen += all_variants(stream_mode)
        elif word in named:
            chosen.append(named[word])
        else:
            fail(f"--strategy: unknown {word!r} (one of: all, {', '.join(named)})")
    return [Strategy(variant) for variant in dict.fromkeys(chosen)]


def eval_folder(cases_file: Path, flags: EvalFlags) -> tuple[Path, bool]:
    """The eval's folder, and whether it is one being resumed."""
    from toolcall_cli.evaluate.runner import latest_folder, safe_name, stamp
    from toolcall_cli.trace.files import state_dir

    root = state_dir() / "evals"
    if flags.resume and flags.out is None:
        found = latest_folder(root, cases_file)
        if found is None:
            fail(f"--resume: no eval of {cases_file} to resume in {root} (--out names one)")
        return found, True
    if flags.out is not None:
        if flags.resume and not flags.out.is_dir():
            # A typo in the folder would start the whole eval again, hours of runs, under it.
            fail(f"--resume: no eval to resume in {flags.out}: no such folder")
        check_out_folder(flags.out)
        return flags.out, flags.resume
    name = f"{stamp()}-{safe_name(cases_file.stem)}"
    folder, number = root / name, 2
    while folder.exists():  # two evals of one case file begun in the same second
        folder, number = root / f"{name}-{number}", number + 1
    return folder, False


def make_plan(
    cases_file: Path,
    flags: EvalFlags,
    options: SessionOptions,
    cases: list[Case],
) -> EvalPlan:
    from toolcall_cli.evaluate.runner import EvalPlan, read_results, write_meta

    models = targets(flags, options)
    folder, resuming = eval_folder(cases_file, flags)
    done = read_results(folder, warn) if resuming else {}
    if not resuming and (folder / "results.jsonl").exists():
        fail(f"{folder} holds an eval already: --resume goes on with it, or --out another folder")
    base_seed = models[0].settings.choice.seed
    plan = EvalPlan(
        cases=cases,
        targets=models,
        strategies=strategies(flags.strategies, options),
        seeds=tuple(base_seed + k for k in range(flags.repeat)),
        folder=folder,
        calls_only=flags.calls_only or flags.case_format == "bfcl",
        jobs=flags.jobs,
        done=done,
    )
    write_meta(folder, {"cases": str(cases_file.resolve()), "format": flags.case_format})
    return plan


# --- while it runs -------------------------------------------------------------------------------


@contextlib.contextmanager
def progress_bar(plan: EvalPlan) -> Iterator[Done]:
    """On a terminal (stderr): runs done of all, the failures so far, and the time left."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda run: None
        return
    columns = (
        TextColumn("eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        already = len(plan.done)
        task = progress.add_task("eval", total=plan.total, completed=already, failed=0)
        failed = 0

        def done(run: EvalRun) -> None:
            nonlocal failed
            failed += run.verdict.outcome in ("wrong", "no answer")
            progress.update(task, advance=1, failed=failed)

        yield done


# --- the report ----------------------------------------------------------------------------------


def report(flags: EvalFlags, plan: EvalPlan, runs: Sequence[EvalRun]) -> int:
    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.evaluate.report import eval_record, overall_score

    meta = {
        "folder": str(plan.folder),
        "calls_only": plan.calls_only,
        "seeds": list(plan.seeds),
        "models": [target.label for target in plan.targets],
        "strategies": [strategy.label for strategy in plan.strategies],
    }
    if flags.as_json:
        typer.echo(strictjson.dumps(eval_record(plan.cases, runs, meta), indent=2))
    else:
        print_report(plan, runs, pipe_console())
    if flags.html is not None:  # after the report: a page that cannot be written loses no more
        write_html(flags.html, plan, runs)
    unreached = [f"{model}: {why}" for model, why in models_never_reached(runs).items()]
    for line in unreached:
        typer.echo(f"toolcall: error: every run failed at the model, {line}", err=True)
    score = overall_score(runs)
    if flags.fail_under is not None and score < flags.fail_under:
        warn_line = f"score {score:.1%} is under --fail-under {flags.fail_under:g}"
        typer.echo(f"toolcall: {warn_line}", err=True)
        return EXIT_FAILURE
    return EXIT_FAILURE if unreached else 0


def models_never_reached(runs: Sequence[EvalRun]) -> dict[str, str]:
    """Each model whose every run ended as a model failure (a server down, a wrong URL or
    name), with the first failure: its grades measure nothing, and a 0 would pass a CI job
    run against a server that was never there."""
    failures: dict[str, str] = {}
    answered = set()
    for run in runs:
        if run.verdict.kind == "model_failed":
            failures.setdefault(run.key.model, run.verdict.detail)
        else:
            answered.add(run.key.model)
    return {model: why for model, why in failures.items() if model not in answered}


def print_report(plan: EvalPlan, runs: Sequence[EvalRun], console: Console) -> None:
    from rich.text import Text

    from toolcall_cli.evaluate.report import (
        failure_line,
        failures,
        grid_table,
        overall_score,
        rows,
        summary_table,
    )

    if not console.is_terminal:
        console.width = max(console.width, 140)
    mode = " (--calls-only: the first reply's calls)" if plan.calls_only else ""
    title = f"{len(plan.cases)} cases, {plural(len(plan.seeds), 'seed')}{mode}"
    console.print(summary_table(rows(runs), title))
    console.print()
    console.print(grid_table(plan.cases, runs))
    failed = failures(runs)
    if failed:
        console.print()
        for run in failed:
            console.print(failure_line(run))
    console.print()
    console.print(Text(f"right: {overall_score(runs):.1%} of graded runs", style="bold"))
    console.print(Text(f"results and traces: {plan.folder}", style="dim"))


def check_out_folder(path: Path) -> None:
    """The folder --out names is made if missing, but not the folders above it: a typo must
    fail, not leave a tree of folders behind."""
    if path.exists() and not path.is_dir():
        fail(f"--out {path}: is not a folder")
    if not path.exists() and not path.parent.is_dir():
        fail(f"--out {path}: no folder {path.parent} to make it in")


def check_html_target(path: Path) -> None:
    """A page that could never be written is a usage error before the eval runs, not exit 1
    (the --fail-under code) after it, with the runs' report lost."""
    if path.is_dir():
        fail(f"--html {path}: is a folder; name a file")
    if not path.parent.is_dir():
        fail(f"--html {path}: no folder {path.parent} to write it in")


def write_html(path: Path, plan: EvalPlan, runs: Sequence[EvalRun]) -> None:
    from toolcall_cli.evaluate.page import eval_page

    try:
        path.write_text(eval_page(plan.cases, runs, plan.calls_only), encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {path}: {error.strerror or error}", EXIT_FAILURE)
    typer.echo(f"toolcall: wrote {path}", err=True)
