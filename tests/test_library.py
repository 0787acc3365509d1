"""The library API from plain Python: what docs/library.md shows runs and prints what it says."""

from __future__ import annotations

import contextlib
import io
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

import toolcall_cli as toolcall
from toolcall_cli.events import ApprovalAsked, FinalAnswer, RunFinished, StepPaused, ToolFinished

DOC = Path(__file__).resolve().parent.parent / "docs" / "library.md"


def doc_examples() -> list[tuple[str, str]]:
    """Each python block of the page, with the text block that follows it (its output)."""
    blocks = re.findall(r"```(python|text)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    pairs = []
    for (kind, code), (next_kind, shown) in itertools.pairwise(blocks):
        if kind == "python" and next_kind == "text":
            pairs.append((code, shown))
    return pairs


def test_the_page_has_examples_with_their_output() -> None:
    assert len(doc_examples()) == 2


@pytest.mark.parametrize("number", range(2))
def test_each_example_prints_what_the_page_shows(number: int) -> None:
    code, shown = doc_examples()[number]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"library.md example {number}", "exec"), {"__name__": "example"})
    assert printed.getvalue() == shown


def weather(city: str) -> dict[str, Any]:
    """The weather in a city now."""
    return {"city": city, "temperature_c": 21, "sky": "clear"}


def test_the_given_tools_are_the_only_ones_offered() -> None:
    events = list(toolcall.ask("What's 23 * 19?", tools=[weather]))
    assert not any(isinstance(e, ToolFinished) and e.call.name == "calculate" for e in events)
    assert isinstance(events[-1], RunFinished)


def test_without_tools_the_bundled_ones_run() -> None:
    events = list(toolcall.ask("What's 23 * 19?"))
    assert [e.call.name for e in events if isinstance(e, ToolFinished)] == ["calculate"]
    assert any(isinstance(e, FinalAnswer) and "437" in e.text for e in events)


def test_a_dangerous_tool_with_nobody_to_ask_is_declined() -> None:
    @toolcall.tool(dangerous=True)
    def dangerous(city: str) -> dict[str, Any]:
        """The weather in a city now."""
        return weather(city)

    events = list(toolcall.ask("What's the weather in Paris?", tools=[dangerous]))
    asked = [e for e in events if isinstance(e, ApprovalAsked)]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert asked and finished
    assert not finished[0].result.ok and finished[0].result.error_kind == "declined"


class Steps:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def answer(self, event: ApprovalAsked | StepPaused) -> None:
        assert isinstance(event, StepPaused)
        self.seen.append(event.before)
        event.answer("go")


def test_step_pauses_are_answered_by_the_caller() -> None:
    steps = Steps()
    events = list(toolcall.ask("What's 23 * 19?", answers=steps, step=True))
    assert steps.seen[:3] == ["request", "tool", "request"]
    assert isinstance(events[-1], RunFinished) and events[-1].stop_reason == "answered"


def test_a_bad_option_is_the_command_lines_error() -> None:
    with pytest.raises(TypeError, match="no session option named strategyy"):
        list(toolcall.ask("hi", strategyy="regex"))
    with pytest.raises(toolcall.AppError):
        list(toolcall.ask("hi", strategy="nope"))
