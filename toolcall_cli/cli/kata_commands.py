"""`toolcall kata list | new | check | solution`: practise writing the engine by hand."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolcall_cli.cli.entry import EXIT_FAILURE, app, fail
from toolcall_cli.cli.running import pipe_console

if TYPE_CHECKING:
    from toolcall_cli.kata import Kata

kata_app = typer.Typer(
    help="Practise writing a tool-use engine by hand: four katas (parse, schema, stream, loop), "
    "graded on built-in cases, the offline model's faults and real models' outputs.",
    no_args_is_help=True,
)
app.add_typer(kata_app, name="kata")

NameArg = Annotated[str, typer.Argument(help="The kata: parse, schema, stream or loop.")]


def kata_named(name: str) -> Kata:
    from toolcall_cli.kata import UnknownKata, find_kata

    try:
        return find_kata(name)
    except UnknownKata as error:
        fail(str(error))


@kata_app.command("list")
def kata_list() -> None:
    """The katas: what each asks you to write, and which layer of the engine it is."""
    from toolcall_cli.kata import KATAS

    width = max(len(kata.name) for kata in KATAS)
    for kata in KATAS:
        typer.echo(f"{kata.name:<{width}}  {kata.layer} · {kata.strategy}")
        typer.echo(f"{'':<{width}}  you write: {kata.writes}")
        typer.echo(f"{'':<{width}}  {kata.about}")
    typer.echo("\nStart one with `toolcall kata new NAME [DIR]`.")


@kata_app.command("new")
def kata_new(
    name: NameArg,
    directory: Annotated[
        Path, typer.Argument(help="Where to write kata_NAME.py (made if missing).")
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


@kata_app.command("check")
def kata_check(
    file: Annotated[Path, typer.Argument(help="Your kata file.")],
    kata: Annotated[
        str | None,
        typer.Option("--kata", help="Which kata the file is (default: read from its first line)."),
    ] = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.1, max=600, help="Seconds each case may take.")
    ] = 3.0,
    memory: Annotated[
        int,
        typer.Option(
            "--memory", min=64, max=1 << 20, help="MiB of address space your code may use."
        ),
    ] = 1024,
    conformance: Annotated[
        Path | None,
        typer.Option(
            "--conformance",
            help="The folder of the optional corpus of real outputs from public test suites "
            "(default: $TOOLCALL_CONFORMANCE_DIR).",
        ),
    ] = None,
) -> None:
    """Grade FILE: built-in cases, every offline-model fault the kata meets, and the real
    outputs of the optional corpus when present. Your code runs in a sandboxed process of
    its own (in namespaces of its own where Linux allows), judged from outside, with hard
    limits it cannot raise and a time limit per case.

    Exit 0 when every case passes, 1 when any fails, 2 when FILE cannot be checked.
    """
    from toolcall_cli.kata import Limits, conformance_dir, read_header, run_check
    from toolcall_cli.render.kata import print_check

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        fail(f"cannot read {file}: {getattr(error, 'strerror', None) or error}")
    header = read_header(text)
    if kata is None and header is None:
        fail(f"cannot tell which kata {file} is: give --kata NAME")
    chosen = kata_named(kata) if kata else header.kata  # type: ignore[union-attr]
    check = run_check(chosen, file, conformance_dir(conformance), Limits(time_limit, memory))
    console = pipe_console()
    console.soft_wrap = not console.is_terminal  # piped: whole lines
    print_check(check, header, datetime.now().astimezone(), console)
    raise typer.Exit(0 if check.passed else EXIT_FAILURE)


@kata_app.command("solution")
def kata_solution(name: NameArg) -> None:
    """Print the reference solution, written for reading. It passes its own check."""
    from toolcall_cli.kata import solution_text

    typer.echo(solution_text(kata_named(name)), nl=False)
