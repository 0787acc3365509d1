"""Isolated tools (a worker process per call) through `run()`: a hung tool is killed at its
timeout and its process is gone; an os._exit is an error result and the run goes on;
--isolate-tools moves every plugin tool into a worker."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolcall_cli.events import Event, FinalAnswer, ToolFinished
from toolcall_cli.loop import Limits, run
from toolcall_cli.models.scripted import Reply, ScriptedModel
from toolcall_cli.rounds import ToolPolicy
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import load_tools
from toolcall_cli.tools.registry import ToolRegistry

# The hanging tools' timeout: long enough for a fresh interpreter to start and open its FIFO on
# a busy machine, short enough for a quick test. A bound, not a timing assertion.
PLUGIN = '''
import enum
import os
import subprocess
import sys
import time
from typing import Optional

from toolcall_cli import tool


@tool(isolate=True, timeout=1.5)
def hang(fifo: str) -> str:
    """Holds the FIFO open, then never returns."""
    os.write(os.open(fifo, os.O_WRONLY), b"alive")
    time.sleep(3600)
    return "unreachable"


@tool(isolate=True, timeout=1.5)
def hang_with_child(fifo: str) -> str:
    """Starts a child that holds the FIFO open too and never ends, then never returns."""
    writer = os.open(fifo, os.O_WRONLY)
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], pass_fds=(writer,))
    os.write(writer, b"alive")
    time.sleep(3600)
    return "unreachable"


@tool(isolate=True)
def quit_hard(code: int) -> str:
    """Ends its process without a word."""
    os._exit(code)


@tool
def where() -> int:
    """The pid of the process it runs in."""
    return os.getpid()


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@tool
def shade(color: Color, more: Optional[list[Color]] = None) -> str:
    """Names the colours it was given, as the members it declares."""
    return " ".join(c.name for c in [color, *(more or [])])
'''


def plugin_registry(tmp_path: Path) -> ToolRegistry:
    """PLUGIN's tools, loaded from a file as tools.d loads them (a worker imports it by path)."""
    folder = tmp_path / "tools.d"
    folder.mkdir()
    (folder / "plugin.py").write_text(PLUGIN, encoding="utf-8")
    loaded = load_tools([folder])
    assert not loaded.problems
    return loaded.registry


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def play(
    replies: list[Reply], registry: ToolRegistry, policy: ToolPolicy | None = None
) -> list[Event]:
    model = ScriptedModel(replies)
    return list(
        run(
            "q",
            model=model,
            strategy=get_strategy("regex"),
            registry=registry,
            history=[],
            limits=Limits(max_iterations=3, tool_timeout=10),
            policy=policy,
        )
    )


def results(events: list[Event]) -> list[Any]:
    return [e.result for e in events if isinstance(e, ToolFinished)]


def answer(events: list[Event]) -> str:
    (final,) = [e for e in events if isinstance(e, FinalAnswer)]
    return final.text


class Held:
    """A FIFO a tool holds open for writing. Once the tool has written to it, EOF on our end
    means the tool's process, and every process that inherited the FIFO, has ended, wherever it
    ran (a pid the tool could tell us would be its own namespace's, not ours)."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "held.fifo"
        os.mkfifo(self.path)
        self._reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self.heard = b""

    def started(self, within: float = 10.0) -> bool:
        """The tool has written to it (a bound, not a timing assertion)."""
        give_up = time.monotonic() + within
        while not self.heard:
            if time.monotonic() > give_up:
                return False
            with contextlib.suppress(BlockingIOError):
                self.heard += os.read(self._reader, 64)
            time.sleep(0.02)
        return True

    def released(self, within: float = 5.0) -> bool:
        """Every writer has ended, having written "alive" first. A bound, not a timing
        assertion: a killed process may take a moment to be gone."""
        give_up = time.monotonic() + within
        try:
            while True:
                try:
                    read = os.read(self._reader, 64)
                except BlockingIOError:  # a writer is still there
                    if time.monotonic() > give_up:
                        return False
                    time.sleep(0.02)
                    continue
                if not read:
                    assert self.heard == b"alive", f"the tool never started: {self.heard!r}"
                    return True
                self.heard += read
        finally:
            os.close(self._reader)


def test_a_hung_isolated_tool_is_killed_at_its_timeout_and_its_process_is_gone(
    tmp_path: Path,
) -> None:
    held = Held(tmp_path)
    events = play([call("hang", fifo=str(held.path)), "it hung"], plugin_registry(tmp_path))
    (result,) = results(events)
    assert result.error_kind == "timeout"
    assert "`hang` timed out after 1.5 s; its process was killed" in result.content
    assert held.released()
    assert answer(events) == "it hung"


def test_a_killed_isolated_tool_takes_the_processes_it_started_with_it(tmp_path: Path) -> None:
    """Killing only the worker would leave its children running for ever, unseen."""
    held = Held(tmp_path)
    events = play(
        [call("hang_with_child", fifo=str(held.path)), "it hung"], plugin_registry(tmp_path)
    )
    assert results(events)[0].error_kind == "timeout"
    assert held.released()


def test_an_isolated_tool_that_calls_os_exit_is_an_error_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    events = play([call("quit_hard", code=3), "it crashed"], plugin_registry(tmp_path))
    (result,) = results(events)
    assert not result.ok and result.error_kind == "tool_error"
    assert "the tool's process ended (exit code 3) before it returned a result" in result.content
    assert answer(events) == "it crashed"  # the model got the error, and answered


def test_isolate_tools_runs_a_plugin_tool_in_another_process(tmp_path: Path) -> None:
    registry = plugin_registry(tmp_path)
    (alone,) = results(play([call("where"), "ok"], registry, ToolPolicy(isolate_all=True)))
    (inside,) = results(play([call("where"), "ok"], registry, ToolPolicy(isolate_all=False)))
    assert int(inside.content) == os.getpid()
    assert int(alone.content) != os.getpid()


@pytest.mark.parametrize("isolate_all", [False, True], ids=["thread", "process"])
def test_an_enum_parameter_gets_the_member_it_declares(tmp_path: Path, isolate_all: bool) -> None:
    registry = plugin_registry(tmp_path)
    replies: list[Reply] = [call("shade", color="red", more=["blue"]), "ok"]
    (result,) = results(play(replies, registry, ToolPolicy(isolate_all=isolate_all)))
    assert result.content == "RED BLUE"


LONG_HANG = PLUGIN.replace(
    "@tool(isolate=True, timeout=1.5)\ndef hang(", "@tool(isolate=True, timeout=600)\ndef hang("
)


def test_the_runs_time_limit_kills_a_running_isolated_tool(tmp_path: Path) -> None:
    folder = tmp_path / "tools.d"
    folder.mkdir()
    (folder / "plugin.py").write_text(LONG_HANG, encoding="utf-8")
    registry = load_tools([folder]).registry
    held = Held(tmp_path)
    events = list(
        run(
            "q",
            model=ScriptedModel([call("hang", fifo=str(held.path))]),
            strategy=get_strategy("regex"),
            registry=registry,
            history=[],
            limits=Limits(run_timeout=3, tool_timeout=600),
        )
    )
    (result,) = results(events)
    assert result.error_kind == "cancelled" and "time limit" in result.content
    assert held.released()


class InterruptedWhileWriting:
    """A model that writes a call, then keeps writing until the user presses Ctrl-C (once the
    call's tool is running)."""

    name = "interrupted"

    def __init__(self, reply: str, held: Held) -> None:
        self._inner = ScriptedModel([reply])
        self._held = held

    def stream(self, request: Any) -> Iterator[dict[str, Any]]:
        yield from self._inner.stream(request)
        assert self._held.started()  # the tool started while the reply was still open
        raise KeyboardInterrupt


def test_ctrl_c_while_the_model_writes_kills_the_isolated_tool_it_started(tmp_path: Path) -> None:
    """The worker runs in its own session, out of the terminal's reach: Ctrl-C must not leave
    it running (nor must a closed pipe, which ends the loop the same way)."""
    folder = tmp_path / "tools.d"
    folder.mkdir()
    (folder / "plugin.py").write_text(LONG_HANG, encoding="utf-8")
    registry = load_tools([folder]).registry
    held = Held(tmp_path)
    model = InterruptedWhileWriting(call("hang", fifo=str(held.path)), held)
    events = run(
        "q",
        model=model,
        strategy=get_strategy("stream"),
        registry=registry,
        history=[],
        limits=Limits(tool_timeout=600),
    )
    with pytest.raises(KeyboardInterrupt):
        list(events)
    assert held.released()
