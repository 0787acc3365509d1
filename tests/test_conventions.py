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


def choice_flags() -> Iterator[tuple[tuple[str, ...], str, list[str]]]:
    """Each flag of choices on each command: the words that reach it (a stand-in for each
    argument it needs), the flag, and its choices."""
    from toolcall_cli.cli._bad_values import choices_of

    for words, command in command_paths():
        params = getattr(command, "params", [])
        needed = tuple("x" for p in params if p.param_type_name == "argument" and p.required)
        for param in params:
            choices = choices_of(param)
            if choices and param.param_type_name == "option":
                yield (*words, *needed), param.opts[0], choices


CHOICE_FLAGS = list(choice_flags())


def test_the_flags_of_choices_are_found() -> None:
    flags = {(words[0], flag) for words, flag, _ in CHOICE_FLAGS}
    assert {("run", "--strategy"), ("eject", "--strategy"), ("drill", "--lang")} <= flags
    assert {("run", "--allow"), ("run", "--retriever"), ("chat", "--schema-mode")} <= flags


@pytest.mark.parametrize(
    ("words", "flag", "choices"), CHOICE_FLAGS, ids=[f"{w[0]} {f}" for w, f, _ in CHOICE_FLAGS]
)
def test_a_bad_choice_is_one_line_listing_the_good_ones(
    tmp_path: Path, words: tuple[str, ...], flag: str, choices: list[str]
) -> None:
    done = toolcall(*words, flag, "nope", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Value error" not in done.stderr
    assert f"{flag} must be one of {', '.join(choices)}, not 'nope'" in done.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["serve", "--port", "99999"], "--port must be at most 65535, not '99999'"),
        (["run", "hi", "--max-parallel", "0"], "--max-parallel must be at least 1, not '0'"),
        (["run", "hi", "--seed", "x"], "--seed must be a whole number, not 'x'"),
        (["run", "hi", "--top-p", "x"], "--top-p must be a number, not 'x'"),
        (
            ["kata", "new", "nope"],
            "no kata named 'nope'; the katas: request, prompt, parse, schema, stream, loop",
        ),
    ],
)
def test_a_bad_number_says_what_the_flag_takes(tmp_path: Path, args: list[str], line: str) -> None:
    done = toolcall(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert line in done.stderr and "Input should" not in done.stderr


@pytest.mark.parametrize(
    ("config", "env", "line"),
    [
        ('[defaults]\nstrategy = "nope"\n', {}, "choose one of regex, schema, stream"),
        ('[defaults]\nschema_mode = "nope"\n', {}, "choose one of tools, json, required"),
        ('[retrieval]\nretriever = "nope"\n', {}, "must be one of lexical, embed, not 'nope'"),
        ("", {"TOOLCALL_STRATEGY": "nope"}, "choose one of regex, schema, stream"),
        ("", {"TOOLCALL_RETRIEVER": "nope"}, "must be one of lexical, embed, not 'nope'"),
    ],
)
def test_a_bad_choice_in_the_config_or_environment_lists_the_good_ones(
    tmp_path: Path, config: str, env: dict[str, str], line: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    done = toolcall("run", "hi", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path), **env})
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and line in done.stderr


README_SECTIONS = re.compile(r"^## (.+)$", re.MULTILINE)
NAMED_PLACES = re.compile(r"the README's ([A-Z][\w ]*)|(docs/[\w-]+\.md)")


@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words) or "toolcall")
def test_every_place_a_help_sends_the_reader_to_exists(
    tmp_path: Path, words: tuple[str, ...]
) -> None:
    """`trace --help` sent the reader to "the README's Traces", a section the README lost."""
    root = Path(__file__).resolve().parent.parent
    sections = README_SECTIONS.findall((root / "README.md").read_text(encoding="utf-8"))
    shown = " ".join(toolcall(*words, "--help", cwd=tmp_path).stdout.split())
    for section, page in NAMED_PLACES.findall(shown):
        assert (root / page).is_file() if page else any(s.startswith(section) for s in sections)


def test_a_question_that_starts_with_a_dash_is_told_how_to_ask_it(tmp_path: Path) -> None:
    """`toolcall run "-5+3"` said only "No such option: -5"; `--` before it is the way."""
    refused = toolcall("run", "-5+3", cwd=tmp_path)
    assert refused.returncode == 2
    told = "No such option: -5; a QUESTION that starts with '-' goes after --: "
    assert told in refused.stderr and "run -- QUESTION (see" in refused.stderr
    assert toolcall("run", "-q", "--", "-5+3", cwd=tmp_path).stdout == "-5+3 = -2\n"
    mistyped = toolcall("run", "--quite", "hi", cwd=tmp_path)  # a flag, not a question
    assert "goes after --" not in mistyped.stderr
