"""`toolcall replay`'s diff: per question, each iteration's calls, parse errors and results, then
the iterations, stop reason, tokens and answer, `=` where the replay did what the recording did
and `≠` with the lines each had where it did not. Trace text is never read as rich markup."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from pathlib import Path

from rich.console import Console
from rich.text import Text

from toolcall_cli.history import preview
from toolcall_cli.render.base import visible
from toolcall_cli.trace.diff import Compared, QuestionDiff, ReplayDiff
from toolcall_cli.wording import plural

SAME, DIFFERENT, SHOWN = "=", "≠", "·"
LINE_CHARS = 160
"""How much of one call, result or answer a line shows: differences further in are still
counted, and `--json` gives them whole."""
LABEL_WIDTH = 13


def print_replay(
    diff: ReplayDiff,
    recording: Path,
    then: Mapping[str, str],
    now: Mapping[str, str],
    replay_trace: Path | None,
    console: Console,
) -> None:
    questions = plural(len(diff.questions), "question")
    console.print(Text.assemble(("toolcall replay", "bold"), f"  {recording}  ({questions})"))
    console.print(Text(f"  recorded  {then['model']} · {then['strategy']}", style="dim"))
    where = f" · trace {replay_trace}" if replay_trace else ""
    console.print(Text(f"  replayed  {now['model']} · {now['strategy']}{where}", style="dim"))
    for remark in diff.remarks:
        console.print(Text(f"  note: {remark}", style="yellow"))
    for question in diff.questions:
        console.print()
        print_question(question, console)
    console.print()
    for note in diff.notes:
        console.print(Text(f"{DIFFERENT} {visible(note)}", style="red"))
    console.print(verdict(diff))


def print_question(question: QuestionDiff, console: Console) -> None:
    console.print(
        Text.assemble(
            (f"Question {question.number}", "bold"),
            f"  {visible(preview(question.question, 200))}",
        )
    )
    iteration: int | None = None
    for item in question.items:
        if item.iteration is not None and item.iteration != iteration:
            iteration = item.iteration
            heading = Text(f"  iteration {iteration}", style="bold")
            if not all(item.reached):
                only = "the recording" if item.reached[0] else "the replay"
                heading.append(f"  (only {only} got this far)", style="yellow")
            console.print(heading)
        indent = "    " if item.iteration is not None else "  "
        for line in compared_lines(item, indent):
            console.print(line)


def compared_lines(item: Compared, indent: str) -> Iterator[Text]:
    """One line where the two agree (or where only the recorded side is worth showing); where
    they do not, the recorded lines marked `-` and the replayed ones `+`, as a diff."""
    label = f"{item.what:<{LABEL_WIDTH}}"
    if not item.counted:
        shown = f"{item.recorded[0]} → {item.replayed[0]}" if not item.same else item.recorded[0]
        yield Text(f"{indent}{SHOWN} {label} {shown}  (not compared)", style="dim")
        return
    if item.same:
        first, *rest = item.recorded or (nothing(item, 0),)
        yield Text.assemble((f"{indent}{SAME} ", "green"), f"{label} {cut(first)}")
        pad = " " * (len(indent) + 2 + LABEL_WIDTH + 1)
        for line in rest:
            yield Text(f"{pad}{cut(line)}")
        return
    yield Text.assemble((f"{indent}{DIFFERENT} ", "red bold"), label.rstrip())
    recorded = item.recorded or (nothing(item, 0),)
    replayed = item.replayed or (nothing(item, 1),)
    for mark, line in diff_lines(recorded, replayed):
        style = {"-": "red", "+": "green"}.get(mark, "")
        yield Text(f"{indent}    {mark} {cut(line)}", style=style)


def nothing(item: Compared, side: int) -> str:
    """What an empty side shows: it had none, or it never got to that iteration."""
    return "(none)" if item.reached[side] else "(not reached)"


def diff_lines(recorded: tuple[str, ...], replayed: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """The two sides as a diff: ` ` both had it, `-` only the recording, `+` only the replay."""
    matcher = difflib.SequenceMatcher(a=recorded, b=replayed, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            yield from ((" ", line) for line in recorded[a1:a2])
            continue
        yield from (("-", line) for line in recorded[a1:a2])
        yield from (("+", line) for line in replayed[b1:b2])


def cut(line: str) -> str:
    return visible(preview(line, LINE_CHARS))


def verdict(diff: ReplayDiff) -> Text:
    if diff.same:
        return Text("= the replay matches the recording (tokens aside)", style="green bold")
    several = len(diff.questions) > 1
    where = [
        f"question {question.number} {place(item)}" if several else place(item)
        for question in diff.questions
        for item in question.differences
    ] + (["the script"] if diff.notes else [])
    shown = ", ".join(where[:6]) + (f", … ({len(where) - 6} more)" if len(where) > 6 else "")
    places = plural(diff.differences, "place")
    return Text(
        f"{DIFFERENT} the replay differs from the recording in {places}: {shown}", "red bold"
    )


def place(item: Compared) -> str:
    return f"iteration {item.iteration} {item.what}" if item.iteration else item.what
