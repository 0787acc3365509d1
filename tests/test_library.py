"""The library API from plain Python: what docs/library.md shows runs and prints what it says."""

from __future__ import annotations

import contextlib
import inspect
import io
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

import toolcall_cli as toolcall
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.events import (
    ApprovalAsked,
    FinalAnswer,
    RunFinished,
    RunStarted,
    StepPaused,
    ToolFinished,
)

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


PLUGIN = '''from toolcall_cli import tool


@tool
def get_weather(city: str) -> dict:
    """The weather of the plugin, not of the function given."""
    return {"city": city, "from": "plugin"}
'''


def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city now."""
    return weather(city)


def plugin_directory(place: Path) -> Path:
    """A tools.d holding a get_weather of its own (as a project running ask() may have)."""
    directory = place / "tools.d"
    directory.mkdir()
    (directory / "weather.py").write_text(PLUGIN, encoding="utf-8")
    return directory


def test_given_tools_are_the_only_ones_even_beside_a_tools_d(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page: "Given `tools`, only those are offered". A ./tools.d of the working directory
    loaded too, and its get_weather beside the function's was a ValueError traceback."""
    plugin_directory(tmp_path)
    monkeypatch.chdir(tmp_path)
    events = list(toolcall.ask("What's the weather in Paris?", tools=[get_weather]))
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert started.tools == ("get_weather",)
    results = [e.result.content for e in events if isinstance(e, ToolFinished)]
    assert results and all('"sky": "clear"' in text for text in results)


def test_tools_dir_is_the_tools_flag(tmp_path: Path) -> None:
    """`--tools DIR` is `tools_dir=` (the page's example was a TypeError: no such option)."""
    directory = plugin_directory(tmp_path)
    events = list(toolcall.ask("What's the weather in Paris?", tools=[], tools_dir=directory))
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert started.tools == ("get_weather",)
    results = [e.result.content for e in events if isinstance(e, ToolFinished)]
    assert results and all('"from": "plugin"' in text for text in results)
    with pytest.raises(toolcall.AppError, match=r"two tools are named 'get_weather'.*weather\.py"):
        list(toolcall.ask("hi", tools=[get_weather], tools_dir=[str(directory)]))
    with pytest.raises(toolcall.AppError, match="no such directory"):
        list(toolcall.ask("hi", tools_dir=tmp_path / "nowhere"))


RENAMED = {"--tools": "tools_dir", "--timeout": "run_timeout", "--step": "step"}
"""The flags of `run` whose option of ask() the page names otherwise."""
NOT_OPTIONS = {
    "--quiet",
    "--json",
    "--show-request",
    "--explain",
    "--lang",
    "--trace",
    "--no-trace",
}
"""The flags of `run` the page says are the command's own: what it prints and records."""


def run_flags() -> list[str]:
    import typer.main

    from toolcall_cli.cli.entry import app

    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    longs = [[o for o in p.opts if o.startswith("--")] for p in run.params]
    return [names[0] for names in longs if names and names[0] != "--help"]


def test_every_flag_of_run_is_an_option_of_ask_as_the_page_says() -> None:
    """By its name with underscores, or as the page names it otherwise, or, for what the
    command prints and records, none; each exception is on the page."""
    page = DOC.read_text(encoding="utf-8")
    accepted = set(SessionOptions().flat()) | set(inspect.signature(toolcall.ask).parameters)
    flags = run_flags()
    assert len(flags) > 40 and {*RENAMED, *NOT_OPTIONS} <= set(flags)
    for flag in flags:
        if flag in NOT_OPTIONS:
            assert f"`{flag}`" in page
            assert flag[2:].replace("-", "_") not in accepted, flag
        elif flag in RENAMED:
            assert f"`{flag}" in page and f"`{RENAMED[flag]}=" in page, flag
            assert RENAMED[flag] in accepted, flag
        else:
            assert flag[2:].replace("-", "_") in accepted, flag
