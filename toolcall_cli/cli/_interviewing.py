"""`toolcall kata interview`: a timed mock interview of the whole whiteboard answer - the request,
then parsing the reply, then the loop - with the clock always in view, three of the drill's
follow-up questions at the end, and the score kept in the state directory.

The clock and the input are passed in, so that a test runs 45 minutes in a moment."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import typer

from toolcall_cli.cli._drilling import AnswerInput, mark_points, read_answer
from toolcall_cli.drill import TOPICS, Lang, Topic
from toolcall_cli.kata import (
    CheckRun,
    Kata,
    Limits,
    Score,
    append_history,
    conformance_dir,
    duration,
    find_kata,
    record_score,
    run_check,
)

STAGES = ("request", "parse", "loop")
"""The whiteboard answer in the order an interview asks for it."""
FOLLOW_UPS = 3
NEXT = frozenset({"next", "n"})
END = frozenset({"end", "done", "q", "quit"})
CHECK = frozenset({"", "check", "c"})

Checker = Callable[[Kata, Path], CheckRun]
T = TypeVar("T")


def checked(kata: Kata, file: Path) -> CheckRun:
    return run_check(kata, file, conformance_dir(), Limits())


def stage_files(directory: Path) -> list[tuple[Kata, Path]]:
    """The interview's katas in order, each with its file in `directory`."""
    return [(kata, directory / kata.file_name) for kata in map(find_kata, STAGES)]


def left_text(seconds: float) -> str:
    """`44:59`, never below `00:00`."""
    whole = max(int(seconds), 0)
    return f"{whole // 60:02}:{whole % 60:02}"


@dataclass
class Interview:
    directory: Path
    answers: AnswerInput
    clock: Callable[[], float] = time.monotonic
    minutes: float = 45.0
    check: Checker = checked
    rng: random.Random = field(default_factory=random.Random)
    lang: Lang = "en"
    started: float = 0.0
    ended: bool = False
    """The time ran out, or the candidate ended it: no more stages."""

    @property
    def left(self) -> float:
        return self.started + self.minutes * 60 - self.clock()

    def stage(self, number: int, kata: Kata, file: Path) -> None:
        """Until the stage's file passes, the candidate moves on, or the time is up."""
        typer.echo(f"\n== {number}/{len(STAGES)} {kata.name} · {left_text(self.left)} left ==")
        typer.echo(f"write {kata.writes} in {file}")
        while not self.ended:
            if self.left <= 0:
                typer.echo("time is up")
                self.ended = True
                return
            line = self.answers.line(
                lambda: f"[{left_text(self.left)} left] {kata.name} · Enter: check · next · end > ",
                ends_in=self.left,
            )
            if self.left <= 0:
                continue  # the time ran out at the prompt: nothing typed after it counts
            command = "end" if line is None else line.strip().lower()
            if command in END:
                self.ended = True
            elif command in NEXT:
                return
            elif command in CHECK:
                run = self.check(kata, file)
                typer.echo(f"  {summary(run)}")
                if run.passed:
                    return
            else:
                typer.echo("  Enter checks your file; `next` moves on; `end` finishes")

    def follow_ups(self) -> list[tuple[Topic, int]]:
        """Three of the drill's questions, each answered and marked against its points."""
        typer.echo(f"\n== follow-up questions ({FOLLOW_UPS}) ==")
        marked = []
        for number, topic in enumerate(self.rng.sample(list(TOPICS), FOLLOW_UPS), 1):
            typer.echo(f"\n{number}. {topic.question.in_lang(self.lang)}")
            answer = read_answer(self.answers, self.lang)
            marked.append((topic, mark_points(topic, bool(answer), self.answers, self.lang)))
        return marked

    def run(self) -> list[Score]:
        self.started = self.clock()
        minutes = f"{self.minutes:g} minute{'' if self.minutes == 1 else 's'}"
        typer.echo(
            f"Mock interview: {minutes} for request → parse → loop, then "
            f"{FOLLOW_UPS} follow-up questions. Your files are in {self.directory}."
        )
        for number, (kata, file) in enumerate(stage_files(self.directory), 1):
            if not self.ended:
                self.stage(number, kata, file)
        used = min(self.clock() - self.started, self.minutes * 60)
        typer.echo(f"\n== graded as your files stand, after {duration(used)} ==")
        scores = [self.grade(kata, file, used) for kata, file in stage_files(self.directory)]
        keep(record_score, scores)  # now: a Ctrl-C in the follow-ups must not lose the grades
        marked = self.follow_ups()
        report(scores, marked, used)
        keep(append_history, [interview_record(scores, marked, used)])
        return scores

    def grade(self, kata: Kata, file: Path, used: float) -> Score:
        run = self.check(kata, file)
        passed = sum(c.outcome == "pass" for c in run.cases)
        typer.echo(f"{kata.name:<8} {summary(run)}")
        when = datetime.now().astimezone().isoformat(timespec="seconds")
        return Score(kata.name, passed, len(run.cases), used, when, "interview")


def summary(run: CheckRun) -> str:
    """`✓ 24/24 cases pass`, or the count and the first failure, or why it could not run."""
    passed = sum(c.outcome == "pass" for c in run.cases)
    if run.passed:
        return f"✓ {passed}/{len(run.cases)} cases pass"
    failed = next((c for c in run.cases if c.outcome not in ("pass", "not run")), None)
    first = f"; first failure: {failed.category} · {failed.name}" if failed else ""
    problem = f" ({run.problem})" if run.problem else ""
    return f"✗ {passed}/{len(run.cases)} cases pass{first}{problem}"


def report(scores: Sequence[Score], marked: Sequence[tuple[Topic, int]], used: float) -> None:
    typer.echo("\n== score ==")
    for score in scores:
        typer.echo(f"{score.kata:<8} {score.passed}/{score.total}")
    covered = sum(points for _, points in marked)
    possible = sum(len(topic.points) for topic, _ in marked)
    typer.echo(f"follow-ups {covered}/{possible} points")
    typer.echo(f"time {duration(used)}")


def interview_record(
    scores: Sequence[Score], marked: Sequence[tuple[Topic, int]], used: float
) -> dict[str, Any]:
    """The interview as the history keeps it, beside each stage's score (`kata list` reads)."""
    return {
        "kind": "interview",
        "when": scores[0].when if scores else "",
        "seconds": used,
        "stages": {s.kata: [s.passed, s.total] for s in scores},
        "follow_ups": {topic.name: [points, len(topic.points)] for topic, points in marked},
    }


def keep(write: Callable[[T], object], records: Sequence[T]) -> None:
    try:
        for record in records:
            write(record)
    except OSError as error:
        typer.echo(f"the score could not be saved: {error.strerror or error}", err=True)
