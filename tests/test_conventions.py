"""The command line's conventions, on every command: `-h` is `--help`, each value's placeholder
is a word in capitals that names the thing, and a bad choice is one line listing the good ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from in_process import toolcall

from toolcall_cli.cli import app
from toolcall_cli.cli._options import PanelledCommand


def command_paths() -> Iterator[tuple[tuple[str, ...], object]]:
    """Every command and group of `toolcall`, by the words that reach it."""

    def walk(words: tuple[str, ...], command: object) -> Iterator[tuple[tuple[str, ...], object]]:
        yield words, command
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk((*words, name), sub)

    yield from walk((), typer.main.get_command(app))


COMMANDS = [words for words, _ in command_paths()]
LEAVES = [words for words, command in command_paths() if not hasattr(command, "commands")]


@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words) or "toolcall")
def test_dash_h_is_help_on_every_command(tmp_path: Path, words: tuple[str, ...]) -> None:
    long = toolcall(*words, "--help", cwd=tmp_path)
    short = toolcall(*words, "-h", cwd=tmp_path)
    assert long.returncode == short.returncode == 0, short.stderr
    assert short.stdout == long.stdout and short.stdout.startswith("Usage: ")
    assert "-h, --help" in short.stdout


# typer's own placeholders: `{question}` on the usage line, `<str>`, `<list[Path]>`,
# `<float range>`, `<regex|schema>` beside an option.
TYPER_PLACEHOLDER = re.compile(r"\{[a-z_]+\}|<[a-zA-Z_\[\]| ]+>")


@pytest.mark.parametrize("words", LEAVES, ids=" ".join)
def test_every_placeholder_is_in_capitals_and_names_the_thing(
    tmp_path: Path, words: tuple[str, ...]
) -> None:
    shown = toolcall(*words, "--help", cwd=tmp_path).stdout
    assert not TYPER_PLACEHOLDER.findall(shown)
    usage = shown.splitlines()[0]
    # What follows [OPTIONS] is the arguments, each in capitals ([X] when it may be left out).
    assert re.fullmatch(r"Usage: .*toolcall [a-z ]+\[OPTIONS\]( \[?[A-Z|\-]+\]?)*", usage), usage


def placeholders() -> Iterator[tuple[str, str]]:
    """Each option or argument that takes a value, with the placeholder its help shows."""
    for words, command in command_paths():
        for param in getattr(command, "params", []):
            if getattr(param, "is_flag", False):
                continue
            yield " ".join(words) + " " + param.name, param.metavar


@pytest.mark.parametrize(("where", "metavar"), list(placeholders()))
def test_each_value_has_its_own_placeholder(where: str, metavar: str | None) -> None:
    # Capitals that name the thing (SECONDS, DIR, KIND[,KIND...], 'COMMAND ARGS', ID|FILE|-N),
    # or the choices themselves, [regex|schema|stream].
    assert metavar is not None, where
    named = re.fullmatch(r"'?[A-Z][A-Z_]*(\[,[A-Z]+\.\.\.\]|\|[A-Z]+|\|-N| [A-Z]+)*'?", metavar)
    choices = re.fullmatch(r"\[[a-z]+(\|[a-z]+)+\]", metavar)
    assert named or choices, f"{where}: {metavar}"


def test_every_command_is_a_panelled_command() -> None:
    # The class that writes arguments as their placeholders on the usage line and in --help.
    leaves = [command for _, command in command_paths() if not hasattr(command, "commands")]
    assert leaves and all(isinstance(command, PanelledCommand) for command in leaves)
