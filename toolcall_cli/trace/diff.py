"""What `toolcall replay` compares: each run's calls, parse errors and results per iteration, its
iteration count, stop reason and final answer, read from the events of the recording and of
the replay alike. Tokens are shown beside them and never compared: a real model's count moves
with any change to the prompt, and a replay is a check of what the model did, not of its bill.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.events import (
    Event,
    FinalAnswer,
    IterationStarted,
    ModelFailed,
    ParseError,
    RunFinished,
    RunStarted,
    ToolCallParsed,
    ToolFinished,
)
from toolcall_cli.messages import ToolCall, ToolResult
from toolcall_cli.trace.reader import tokens_of

What = Literal["calls", "parse errors", "results", "iterations", "stop", "tokens", "answer"]


@dataclass(frozen=True)
class IterationSummary:
    """What one iteration did, each item one line of text as the diff shows it."""

    calls: tuple[str, ...] = ()
    parse_errors: tuple[str, ...] = ()
    results: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunSummary:
    """One run (one question) as the diff compares it."""

    question: str
    model: str = ""
    strategy: str = ""
    iterations: tuple[IterationSummary, ...] = ()
    iteration_count: int = 0
    stop_reason: str = "unfinished"
    tokens: int = 0
    answer: str = "(no answer)"


@dataclass
class _RunReader:
    """Gathers a run's summary from its events, in the order they come."""

    question: str = ""
    model: str = ""
    strategy: str = ""
    iterations: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    current: int = 0
    order: dict[str, int] = field(default_factory=dict)
    """Each call id's place among the run's calls: results are listed in the order the calls
    were made, whatever order the tools finished in."""
    results: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    finished: RunFinished | None = None
    answer: str | None = None

    def add(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.question, self.model, self.strategy = event.question, event.model, event.strategy
        elif isinstance(event, IterationStarted):
            self.current = event.iteration
            self._iteration()
        elif isinstance(event, ToolCallParsed):
            self.order.setdefault(event.call.id, len(self.order))
            self._iteration()["calls"].append(call_line(event.call))
        elif isinstance(event, ParseError):
            self._iteration()["parse_errors"].append(event.message)
        elif isinstance(event, ToolFinished):
            place = self.order.get(event.call.id, len(self.order))
            self.results.setdefault(self.current, []).append((place, result_line(event.result)))
        elif isinstance(event, FinalAnswer):
            self.answer = ("(best effort) " if event.best_effort else "") + event.text
        elif isinstance(event, ModelFailed):
            self.answer = f"(model failed: {event.message})"
        elif isinstance(event, RunFinished):
            self.finished = event

    def _iteration(self) -> dict[str, list[str]]:
        return self.iterations.setdefault(self.current, {"calls": [], "parse_errors": []})

    def summary(self) -> RunSummary:
        numbers = sorted(set(self.iterations) | set(self.results))
        last = max(numbers, default=0)
        iterations = tuple(self._summary_of(n) for n in range(1, last + 1))
        end = self.finished
        return RunSummary(
            question=self.question,
            model=self.model,
            strategy=self.strategy,
            iterations=iterations,
            iteration_count=end.iterations if end else last,
            stop_reason=end.stop_reason if end else "unfinished",
            tokens=tokens_of(end.usage) if end else 0,
            answer=self.answer if self.answer is not None else "(no answer)",
        )

    def _summary_of(self, number: int) -> IterationSummary:
        lines = self.iterations.get(number, {"calls": [], "parse_errors": []})
        results = [line for _, line in sorted(self.results.get(number, []))]
        return IterationSummary(
            calls=tuple(lines["calls"]),
            parse_errors=tuple(lines["parse_errors"]),
            results=tuple(results),
        )


def summarize_run(events: Iterable[Event]) -> RunSummary:
    reader = _RunReader()
    for event in events:
        reader.add(event)
    return reader.summary()


def call_line(call: ToolCall) -> str:
    """`get_weather {"city": "北京"}`: the name and arguments, keys sorted so that two calls
    with the same arguments read the same whatever order the model wrote them in."""
    return f"{call.name} {canonical(call.arguments)}"


def result_line(result: ToolResult) -> str:
    """`get_weather ok: {...}` or `get_weather error (unknown_tool): ...`, the content whole."""
    outcome = "ok" if result.ok else f"error ({result.error_kind or 'error'})"
    return f"{result.name or '(no tool)'} {outcome}: {result.content}"


def canonical(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True)
class Compared:
    """One thing compared: what the recording had, and what the replay had."""

    what: What
    recorded: tuple[str, ...]
    replayed: tuple[str, ...]
    iteration: int | None = None
    """The iteration it belongs to; None for the run as a whole."""
    counted: bool = True
    """False for tokens: shown, never a difference."""
    reached: tuple[bool, bool] = (True, True)
    """Whether the recording and the replay got to this iteration at all."""

    @property
    def same(self) -> bool:
        """Both had the same, or both had nothing: a side that never got to the iteration did
        not do what the other did there, even where that was nothing."""
        return self.recorded == self.replayed and self.reached[0] == self.reached[1]

    @property
    def differs(self) -> bool:
        return self.counted and not self.same

    def record(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "iteration": self.iteration,
            "recorded": list(self.recorded),
            "replayed": list(self.replayed),
            "same": self.same,
            "compared": self.counted,
            "reached": {"recorded": self.reached[0], "replayed": self.reached[1]},
        }


@dataclass(frozen=True)
class QuestionDiff:
    number: int
    question: str
    items: tuple[Compared, ...]

    @property
    def differences(self) -> list[Compared]:
        return [item for item in self.items if item.differs]


def compare_runs(recorded: RunSummary, replayed: RunSummary, number: int) -> QuestionDiff:
    """The two runs of one question side by side, iteration by iteration, then as wholes."""
    items: list[Compared] = []
    count = max(len(recorded.iterations), len(replayed.iterations))
    for index in range(count):
        old = _nth(recorded.iterations, index)
        new = _nth(replayed.iterations, index)
        reached = (index < len(recorded.iterations), index < len(replayed.iterations))
        compared = functools.partial(Compared, iteration=index + 1, reached=reached)
        items.append(compared("calls", old.calls, new.calls))
        if old.parse_errors or new.parse_errors:
            items.append(compared("parse errors", old.parse_errors, new.parse_errors))
        if old.results or new.results:
            items.append(compared("results", old.results, new.results))
    items += [
        Compared("iterations", (str(recorded.iteration_count),), (str(replayed.iteration_count),)),
        Compared("stop", (recorded.stop_reason,), (replayed.stop_reason,)),
        Compared("tokens", (f"{recorded.tokens:,}",), (f"{replayed.tokens:,}",), counted=False),
        Compared("answer", (recorded.answer,), (replayed.answer,)),
    ]
    return QuestionDiff(number, recorded.question, tuple(items))


def _nth(iterations: Sequence[IterationSummary], index: int) -> IterationSummary:
    return iterations[index] if index < len(iterations) else IterationSummary()


@dataclass(frozen=True)
class ReplayDiff:
    """The replay of every question of a trace against its recording."""

    questions: tuple[QuestionDiff, ...]
    notes: tuple[str, ...] = ()
    """What else differs and is counted as a difference (a script that did not line up)."""
    remarks: tuple[str, ...] = ()
    """What is worth knowing and is not a difference (a question that could not be replayed,
    a tool file changed since the recording)."""

    @property
    def differences(self) -> int:
        return sum(len(question.differences) for question in self.questions) + len(self.notes)

    @property
    def same(self) -> bool:
        return self.differences == 0

    def record(self) -> dict[str, Any]:
        return {
            "same": self.same,
            "differences": self.differences,
            "notes": list(self.notes),
            "remarks": list(self.remarks),
            "questions": [
                {
                    "question": question.question,
                    "same": not question.differences,
                    "items": [item.record() for item in question.items],
                }
                for question in self.questions
            ],
        }
