"""`toolcall kata list | new | check | solution`: practise writing the engine by hand."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolcall_cli.cli._options import PanelledCommand
from toolcall_cli.cli._running import pipe_console
from toolcall_cli.cli.entry import EXIT_FAILURE, app, fail
from toolcall_cli.private_files import read_bounded

if TYPE_CHECKING:
    from toolcall_cli.kata import CheckRun, Header, Kata

kata_app = typer.Typer(
    help="Practise writing a tool-use engine by hand: six katas (request, prompt, parse, schema, "
    "stream, loop), graded on built-in cases, the offline model's faults and real models' "
    "outputs; and a timed mock interview.",
    no_args_is_help=True,
)
app.add_typer(kata_app, name="kata")

NameArg = Annotated[
    str,
    typer.Argument(
        metavar="KATA", help="The kata: request, prompt, parse, schema, stream or loop."
    ),
]


def kata_named(name: str) -> Kata:
    from toolcall_cli.kata import UnknownKata, find_kata

    try:
        return find_kata(name)
    except UnknownKata as error:
        fail(str(error))


@kata_app.command("list", cls=PanelledCommand)
def kata_list() -> None:
    """The katas: what each asks you to write, which layer of the engine and which strategy it
    is, and your best score and time so far (from `kata check` and `kata interview`)."""
    from toolcall_cli.kata import KATAS, best_scores, duration

    best = best_scores()
    width = max(len(kata.name) for kata in KATAS)
    for kata in KATAS:
        typer.echo(f"{kata.name:<{width}}  {kata.layer} · {kata.strategy}")
        typer.echo(f"{'':<{width}}  you write: {kata.writes}")
        typer.echo(f"{'':<{width}}  {kata.about}")
        score = best.get(kata.name)
        mark = (
            f"best: {score.passed}/{score.total} in {duration(score.seconds)} ({score.via})"
            if score
            else "best: not checked yet"
        )
        typer.echo(f"{'':<{width}}  {mark}")
    typer.echo("\nStart one with `toolcall kata new KATA [DIR]`; the timed mock interview with")
    typer.echo("`toolcall kata interview [DIR]`.")


@kata_app.command("new", cls=PanelledCommand)
def kata_new(
    name: NameArg,
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Where to write kata_KATA.py (made if missing).")
    ] = Path("."),
) -> None:
    """Write a starter file: the signature, the rules as docstrings, a stub to replace. Its
    first line records when you started; `kata check` shows the time since."""
    from toolcall_cli.kata import starter_text

    kata = kata_named(name)
    path = directory / kata.file_name
    if path.exists():
        fail(
            f"{path} exists already: check it with `toolcall kata check {path}`, "
            "or give another DIR"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as starter:
            starter.write(starter_text(kata, datetime.now().astimezone()))
    except OSError as error:
        fail(f"cannot write {path}: {error.strerror or error}")
    typer.echo(f"wrote {path}: write {' and '.join(kata.required)} in it, then run")
    typer.echo(f"  toolcall kata check {path}")


KataOpt = Annotated[
    str | None,
    typer.Option(
        "--kata", metavar="KATA", help="Which kata the file is (default: read from its first line)."
    ),
]
TimeLimitOpt = Annotated[
    float,
    typer.Option(
        "--time-limit", min=0.1, max=600, metavar="SECONDS", help="Seconds each case may take."
    ),
]
MemoryOpt = Annotated[
    int,
    typer.Option(
        "--memory",
        min=64,
        max=1 << 20,
        metavar="MIB",
        help="MiB of address space your code may use.",
    ),
]
ConformanceOpt = Annotated[
    Path | None,
    typer.Option(
        "--conformance",
        metavar="DIR",
        help="The folder of the optional corpus of real outputs from public test suites "
        "(default: $TOOLCALL_CONFORMANCE_DIR).",
    ),
]


@kata_app.command("check", cls=PanelledCommand)
def kata_check(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Your kata file.")],
    kata: KataOpt = None,
    time_limit: TimeLimitOpt = 3.0,
    memory: MemoryOpt = 1024,
    conformance: ConformanceOpt = None,
) -> None:
    """Grade FILE: built-in cases, every offline-model fault the kata meets, and the real
    outputs of the optional corpus when present. Your code runs in a sandboxed process of
    its own (in namespaces of its own where Linux allows), judged from outside, with hard
    limits it cannot raise and a time limit per case.

    Exit 0 when every case passes, 1 when any fails (a file that does not import fails them
    all), 2 when FILE cannot be read or its kata cannot be told.
    """
    from toolcall_cli.kata import Limits, conformance_dir, read_header, run_check
    from toolcall_cli.render.kata import print_check

    try:
        text = read_bounded(file).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        fail(f"cannot read {file}: {getattr(error, 'strerror', None) or error}{_kata_hint(file)}")
    header = read_header(text)
    if kata is None and header is None:
        fail(f"cannot tell which kata {file} is: give --kata KATA")
    chosen = kata_named(kata) if kata else header.kata  # type: ignore[union-attr]
    check = run_check(chosen, file, conformance_dir(conformance), Limits(time_limit, memory))
    now = datetime.now().astimezone()
    print_check(check, header, now, pipe_console(whole_lines=True))
    keep_score(check, header, now)
    raise typer.Exit(0 if check.passed else EXIT_FAILURE)


def _kata_hint(file: Path) -> str:
    """A kata's name given where its file goes (`kata check parse`): name the file to give."""
    from toolcall_cli.kata import NAMES, find_kata

    if file.exists() or str(file) not in NAMES:
        return ""
    name = find_kata(str(file)).file_name
    return f" (FILE is your kata file: `toolcall kata new {file}` writes {name})"


def keep_score(check: CheckRun, header: Header | None, now: datetime) -> None:
    """The check's score in the history, timed from the starter's first line when it has one.
    A check that could not run its cases is no score."""
    from toolcall_cli.kata import Score, record_score

    if not check.cases or all(c.outcome == "not run" for c in check.cases):
        return
    started = header.started if header and header.kata == check.kata else None
    seconds = (now - started).total_seconds() if started and started.tzinfo else None
    passed = sum(c.outcome == "pass" for c in check.cases)
    when = now.isoformat(timespec="seconds")
    try:
        record_score(Score(check.kata.name, passed, len(check.cases), seconds, when))
    except OSError as error:
        typer.echo(f"the score could not be saved: {error.strerror or error}", err=True)


@kata_app.command("solution", cls=PanelledCommand)
def kata_solution(
    name: NameArg,
    short: Annotated[
        bool,
        typer.Option(
            "--short",
            help="The whiteboard-sized reference (at most 60 lines): what to write in an "
            "interview. Its docstring says which checks it fails, and why that is fine there.",
        ),
    ] = False,
) -> None:
    """Print the reference solution, written for reading. It passes its own check."""
    from toolcall_cli.kata import short_text, solution_text

    kata = kata_named(name)
    typer.echo(short_text(kata) if short else solution_text(kata), nl=False)


@kata_app.command("interview", cls=PanelledCommand)
def kata_interview(
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", help="Where to write the three kata files (made if missing)."
        ),
    ] = Path("interview"),
    minutes: Annotated[
        float,
        typer.Option(
            "--minutes", min=1, max=480, metavar="MINUTES", help="How long the interview runs."
        ),
    ] = 45.0,
) -> None:
    """A timed mock interview: write the request, then the parser, then the loop (katas
    request, parse and loop), with the clock in the prompt; Enter checks the file you are on.
    Then three of the drill's follow-up questions. Every file is graded as it stands when the
    time is up, and the score is kept (`kata list` shows your best)."""
    from toolcall_cli.cli._drilling import answer_input, locale_lang
    from toolcall_cli.cli._interviewing import Interview, stage_files
    from toolcall_cli.kata import starter_text

    files = stage_files(directory)
    existing = [str(path) for _, path in files if path.exists()]
    if existing:
        fail(f"{', '.join(existing)} exists already: give another DIR for a new interview")
    answers = answer_input()
    now = datetime.now().astimezone()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for kata, path in files:
            with path.open("x", encoding="utf-8") as starter:
                starter.write(starter_text(kata, now))
    except OSError as error:
        fail(f"cannot write in {directory}: {error.strerror or error}")
    Interview(directory, answers, minutes=minutes, lang=locale_lang()).run()
