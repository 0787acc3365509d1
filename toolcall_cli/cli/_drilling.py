"""The drill itself: the interviewer's follow-up questions, one by one. The user answers, a real
run shows the matching fault or limit, and the user marks their answer against the points."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Protocol

import typer

from toolcall_cli.cli.entry import app, fail
from toolcall_cli.drill import TOPICS, Demo, Lang, Topic, label

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession


YES = frozenset({"y", "yes", "是", "对", "有"})


Prompt = str | Callable[[], str]
"""A prompt, or how to write it now (the interview's clock): a terminal redraws it each second."""


class AnswerInput(Protocol):
    """Where the user's lines come from: one line per call, None when the input has ended (or,
    given `ends_in` seconds, when they pass first)."""

    def line(self, prompt: Prompt, *, ends_in: float | None = None) -> str | None: ...


class TerminalInput:
    """A terminal: prompt-toolkit's line editing; Ctrl-D ends the input."""

    def __init__(self, session: PromptSession[str]) -> None:
        self._session = session

    def line(self, prompt: Prompt, *, ends_in: float | None = None) -> str | None:
        def end_in_time() -> None:
            # The interview's time runs out while the candidate types: the prompt must end
            # then, not at the next Enter, or the clock it shows stops and the time is not up.
            if ends_in is not None:
                from prompt_toolkit.application import get_app

                app = get_app()
                later = asyncio.get_running_loop().call_later
                later(max(ends_in, 0), lambda: app.is_running and app.exit(exception=EOFError))

        try:
            return self._session.prompt(
                prompt, refresh_interval=1 if callable(prompt) else 0, pre_run=end_in_time
            )
        except EOFError:
            return None


class PipedInput:
    """Lines piped in (a file, a test): the same answers and marks, one a line, each echoed
    after its prompt so the output reads as a transcript."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def line(self, prompt: Prompt, *, ends_in: float | None = None) -> str | None:
        read = self._stream.readline()
        if not read:
            return None
        text = read.rstrip("\r\n")
        typer.echo(f"{prompt() if callable(prompt) else prompt}{text}")
        return text


@dataclass(frozen=True)
class Marked:
    topic: Topic
    covered: int
    """How many of the topic's points the user says their answer covered."""


def locale_lang() -> Lang:
    """The language the locale asks for: the first of LC_ALL, LC_MESSAGES, LANG that is set."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def read_answer(answers: AnswerInput, lang: Lang) -> list[str]:
    """The answer's lines, up to an empty line or the input's end; none when skipped."""
    typer.echo(label("answer", lang))
    lines: list[str] = []
    while (line := answers.line("> " if not lines else ". ")) is not None and line.strip():
        lines.append(line)
    if not lines:
        typer.echo(label("skipped", lang))
    return lines


def demo_args(demo: Demo, lang: Lang) -> list[str]:
    # Always the offline model, whatever the config names: the demonstration needs its faults.
    return [
        demo.command,
        demo.question.in_lang(lang),
        *demo.flags,
        "--model",
        "offline",
        "--no-trace",
    ]


def run_demo(demo: Demo, lang: Lang) -> None:
    """The demonstration as the user could type it, run by the same command (so the same
    session and renderer) as `toolcall run` or `toolcall compare`."""
    args = demo_args(demo, lang)
    typer.echo(f"\n{label('demo', lang)}: $ toolcall {shlex.join(args)}")
    typer.echo(f"{label('watch', lang)}: {demo.watch.in_lang(lang)}")
    # Its exit code (3 at a limit) belongs to the demonstration, not to the drill.
    with contextlib.suppress(typer.Exit):
        app(args=args, prog_name="toolcall", standalone_mode=False)
    sys.stdout.flush()


def mark_points(topic: Topic, answered: bool, answers: AnswerInput, lang: Lang) -> int:
    """The points listed and, for an answer given, marked by the user; how many were covered.
    The input ending leaves the rest unmarked, counted as not covered."""
    typer.echo(f"\n{label('points', lang)}")
    covered = 0
    asking = answered
    for number, point in enumerate(topic.points, 1):
        typer.echo(f"  {number}. {point.in_lang(lang)}")
        if not asking:
            continue
        mark = answers.line(f"     {label('mark', lang)}")
        if mark is None:
            asking = False
        elif mark.strip().lower() in YES:
            covered += 1
    return covered


def drill_topic(topic: Topic, number: int, answers: AnswerInput, lang: Lang) -> Marked:
    typer.echo(f"\n== {number}/{len(TOPICS)} {topic.name} ==")
    typer.echo(topic.question.in_lang(lang))
    answer = read_answer(answers, lang)
    for demo in topic.demos:
        run_demo(demo, lang)
    covered = mark_points(topic, bool(answer), answers, lang)
    typer.echo(f"{label('topic_score', lang)}: {covered}/{len(topic.points)}")
    return Marked(topic, covered)


def run_drill(topics: Sequence[Topic], answers: AnswerInput, lang: Lang) -> list[Marked]:
    """Each topic in turn, then the score over all of them."""
    marked = [drill_topic(topic, TOPICS.index(topic) + 1, answers, lang) for topic in topics]
    if len(marked) > 1:
        typer.echo(f"\n{label('total', lang)}:")
        for one in marked:
            typer.echo(f"  {one.topic.name:<14} {one.covered}/{len(one.topic.points)}")
    covered = sum(one.covered for one in marked)
    possible = sum(len(one.topic.points) for one in marked)
    typer.echo(f"{label('total', lang)}: {covered}/{possible} ({covered * 100 // possible}%)")
    return marked


def answer_input() -> AnswerInput:
    """prompt-toolkit at a terminal; otherwise stdin's lines, so a drill can be piped."""
    stdin = sys.stdin
    if stdin is None or stdin.closed:
        fail("stdin is closed: run the drill at a terminal, or pipe the answers in, one a line")
    if stdin.isatty() and sys.stdout.isatty():
        from prompt_toolkit import PromptSession

        return TerminalInput(PromptSession())
    return PipedInput(stdin)
