"""The live view and the chat REPL in a real terminal (tmux): what a person would see."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """One tmux session on a private socket, 120x40."""

    def __init__(self, tmp: Path) -> None:
        self.socket = f"toolcall-test-{os.getpid()}-{time.monotonic_ns()}"
        self.tmp = tmp

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        return done.stdout

    def start(self, command: str, width: int = 120) -> None:
        env = {
            "HOME": str(self.tmp),
            "XDG_CONFIG_HOME": str(self.tmp / ".config"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", ""),
            # The code of the tree these tests are in, not whichever toolcall is installed.
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.tmux(
            "new-session",
            "-d",
            "-x",
            str(width),
            "-y",
            "40",
            "-s",
            "t",
            f"cd {shlex.quote(str(self.tmp))} && env {exports} {command}; echo EXIT=$?; sleep 30",
        )

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-200")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)  # polling the screen; how long it takes is not asserted
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def close(self) -> None:
        self.tmux("kill-server")


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    yield term
    term.close()


TOOLCALL = f"{shlex.quote(sys.executable)} -m toolcall_cli"


def test_live_view_shows_every_step(terminal: Terminal) -> None:
    terminal.start(f"{TOOLCALL} run '北京和上海明天天气分别是多少？'")
    screen = terminal.wait_for("EXIT=")
    assert "EXIT=0" in screen
    for step in (
        "Iteration 1",
        "Iteration 2",
        "<tool_call>",
        "get_weather",
        "✓",
        "fed back",
        "上海",
    ):
        assert step in screen, step
    assert "model offline" in screen and "strategy regex" in screen  # the header
    assert "2 iterations" in screen and "2 tool calls" in screen  # the footer


def test_the_trace_path_under_a_narrow_live_view_is_one_line(terminal: Terminal) -> None:
    # At 60 columns rich broke the path with a newline, so it could not be copied whole.
    terminal.start(f"{TOOLCALL} run 'What is 12*5+3?'", width=60)
    screen = terminal.wait_for("EXIT=")
    [path] = re.findall(r"^trace (\S+\.jsonl)$", screen, re.MULTILINE)
    assert Path(path).is_file()


def test_live_view_streaming(terminal: Terminal) -> None:
    terminal.start(f"{TOOLCALL} run --strategy stream 'What is 12*5+3?'")
    screen = terminal.wait_for("EXIT=")
    assert "EXIT=0" in screen and "63" in screen and "calculate" in screen


def test_chat_turns_ctrl_c_and_ctrl_d(terminal: Terminal) -> None:
    terminal.start(f"{TOOLCALL} chat")
    terminal.wait_for("you>")
    terminal.keys("What's 12*5+3?", "Enter")
    turn = wait_for_count(terminal, "you>", 2)  # the turn, then the next prompt
    assert "12*5+3 = 63" in turn
    lines = [line.rstrip() for line in turn.splitlines() if line.strip()]
    # the turn's last line says why it ended
    assert lines[-2].endswith("stopped: answered") and lines[-1] == "you>", lines[-3:]
    terminal.keys("/str", "Tab")
    terminal.wait_for("/strategy")
    terminal.keys(" stream", "Enter")
    terminal.wait_for("Strategy is now stream.")
    terminal.keys("C-c")  # at the prompt: clears the line, keeps the session
    terminal.keys("/history", "Enter")
    terminal.wait_for("The conversation holds 4 messages.")
    terminal.keys("C-d")
    screen = terminal.wait_for("EXIT=")
    assert "EXIT=0" in screen
    history_file = terminal.tmp / ".config" / "toolcall" / "chat_history"
    history = history_file.read_text(encoding="utf-8")
    assert "What's 12*5+3?" in history and "/strategy stream" in history
    # what was typed is for its owner only, and so is toolcall's own directory
    assert stat.S_IMODE(history_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(history_file.parent.stat().st_mode) == 0o700


SLOW_WEATHER = (
    "import time\nfrom toolcall_cli import tool\n\n@tool(timeout=60)\n"
    "def get_weather(city: str) -> str:\n"
    '    """Get the weather (天气) for a city (slowly)."""\n'
    "    time.sleep(30)\n    return 'sunny'\n"
)


def test_ctrl_c_while_a_tool_runs_cancels_that_round_and_the_model_goes_on(
    terminal: Terminal,
) -> None:
    tools = terminal.tmp / "tools.d"
    tools.mkdir()
    (tools / "slow.py").write_text(SLOW_WEATHER, encoding="utf-8")
    terminal.start(f"{TOOLCALL} chat --no-default-tools")
    terminal.wait_for("you>")
    terminal.keys("北京今天天气怎么样？", "Enter")
    terminal.wait_for("running get_weather")
    terminal.keys("C-c")
    terminal.wait_for("cancelled 1 tool call of this round")
    screen = terminal.wait_for("╭─ answer")  # the model answered, told the tool was cancelled
    assert "cancelled by the user" in screen and "turn cancelled" not in screen
    terminal.keys("/history", "Enter")
    screen = terminal.wait_for("The conversation holds")
    assert "The conversation holds 0 messages." not in screen  # the turn was kept
    terminal.keys("C-d")
    assert "EXIT=0" in terminal.wait_for("EXIT=")


def test_ctrl_c_twice_cancels_the_whole_turn_and_keeps_the_session(terminal: Terminal) -> None:
    tools = terminal.tmp / "tools.d"
    tools.mkdir()
    (tools / "slow.py").write_text(SLOW_WEATHER, encoding="utf-8")
    # Streamed and paced, so the model's next reply is still arriving at the second Ctrl-C.
    terminal.start(f"{TOOLCALL} chat --no-default-tools --strategy stream --pace 0.3")
    terminal.wait_for("you>")
    terminal.keys("北京今天天气怎么样？", "Enter")
    terminal.wait_for("model output (raw)")  # the reply is in; its tool still runs
    terminal.keys("C-c")
    terminal.wait_for("cancelled 1 tool call of this round")
    terminal.keys("C-c")
    terminal.wait_for("turn cancelled")
    terminal.keys("/history", "Enter")
    terminal.wait_for("The conversation holds 0 messages.")
    terminal.keys("C-d")
    assert "EXIT=0" in terminal.wait_for("EXIT=")


def test_a_dangerous_tool_asks_first_in_the_live_view(terminal: Terminal) -> None:
    tools = terminal.tmp / "tools.d"
    tools.mkdir()
    (tools / "danger.py").write_text(
        "from toolcall_cli import tool\n\n@tool(dangerous=True)\n"
        "def get_weather(city: str) -> str:\n"
        '    """Get the weather (天气) for a city (pretend this one is dangerous)."""\n'
        "    return 'sunny, 30°C'\n",
        encoding="utf-8",
    )
    terminal.start(f"{TOOLCALL} run --no-default-tools '北京今天天气怎么样？'")
    terminal.wait_for("Run dangerous tool get_weather")
    terminal.keys("y", "Enter")
    screen = terminal.wait_for("EXIT=")
    assert "EXIT=0" in screen and "sunny" in screen


def test_step_edits_one_argument_and_skips_one_call(terminal: Terminal) -> None:
    terminal.start(
        f'{TOOLCALL} run --step --explain --no-trace "What\'s the weather in Tokyo and in Berlin?"'
    )
    terminal.wait_for("step: model request 1")
    terminal.keys("Enter")  # send the first request
    terminal.wait_for('step: about to run get_weather {"city": "Tokyo"}')
    terminal.keys("e", "Enter")
    terminal.wait_for('arguments> {"city": "Tokyo"}')  # prefilled with the model's arguments
    terminal.keys("C-u", '{"city": "Paris"}', "Enter")
    terminal.wait_for('step: about to run get_weather {"city": "Berlin"}')
    terminal.keys("s", "Enter")
    terminal.wait_for("step: model request 2")
    terminal.keys("Enter")
    screen = terminal.wait_for("EXIT=")
    assert "EXIT=0" in screen
    assert 'the user edited its arguments to {"city": "Paris"}' in screen
    assert "skipped_by_user" in screen and "skipped by the user" in screen
    assert "Paris today:" in screen  # the answer is built from the edited call's result
    assert "Tokyo today:" not in screen and "Berlin today:" not in screen
    assert "explain · loop: no calls in the reply: the loop ends" in screen


def weather_plugin(answer: str) -> str:
    return (
        "from toolcall_cli import tool\n\n\n@tool\n"
        "def get_weather(city: str) -> str:\n"
        '    """Get the weather (天气) for a city."""\n'
        f"    return {answer!r}\n"
    )


def edit_and_wait_for_the_hint(terminal: Terminal, plugin: Path, text: str) -> None:
    """Write the plugin file, then wait until the prompt shows the chat saw the change (the
    hint on the prompt line), so the next question is asked after the watcher noticed."""
    from toolcall_cli.repl import RELOAD_HINT

    before = terminal.screen().count(RELOAD_HINT)
    plugin.write_text(text, encoding="utf-8")
    deadline = time.monotonic() + 30
    while terminal.screen().count(RELOAD_HINT) <= before:
        assert time.monotonic() < deadline, f"the change was never noticed:\n{terminal.screen()}"
        time.sleep(0.05)  # polling the screen; how long it takes is not asserted


def wait_for_count(terminal: Terminal, text: str, count: int) -> str:
    """The screen once `text` is on it `count` times (a later turn's answer like an earlier)."""
    deadline = time.monotonic() + 30
    while (screen := terminal.screen()).count(text) < count:
        assert time.monotonic() < deadline, f"{text!r} never came {count} times:\n{screen}"
        time.sleep(0.05)  # polling the screen; how long it takes is not asserted
    return screen


def test_editing_a_plugin_while_chat_runs_changes_the_next_answer(terminal: Terminal) -> None:
    plugins = terminal.tmp / "plugins"
    plugins.mkdir()
    weather = plugins / "weather.py"
    weather.write_text(weather_plugin("sunny, 30°C"), encoding="utf-8")
    terminal.start(f"{TOOLCALL} chat --no-default-tools --tools plugins --no-trace")
    terminal.wait_for("you>")
    terminal.keys("北京今天天气怎么样？", "Enter")
    terminal.wait_for("返回：“sunny, 30°C”")
    edit_and_wait_for_the_hint(terminal, weather, weather_plugin("light snow, -2°C"))
    terminal.keys("北京今天天气怎么样？", "Enter")
    screen = terminal.wait_for("返回：“light snow, -2°C”")
    assert screen.count("reload: changed get_weather (code) · plugins/weather.py") == 1
    # A broken edit: one warning line, and the last good version still answers.
    edit_and_wait_for_the_hint(terminal, weather, "def get_weather(city: str) -> str\n")
    terminal.keys("上海今天天气怎么样？", "Enter")
    screen = wait_for_count(terminal, "2 iterations · 1 tool call", 3)  # the third turn's end
    assert screen.count("返回：“light snow, -2°C”") == 4  # its raw reply and answer, as before
    warnings = [line for line in screen.splitlines() if "warning" in line]
    assert warnings == [
        "toolcall: warning: reload: plugins/weather.py: could not load: SyntaxError: expected "
        "':' (line 1); its last good version stays in use"
    ]
    terminal.keys("/reload", "Enter")
    terminal.wait_for("reload: nothing changed")
    terminal.keys("C-d")
    assert "EXIT=0" in terminal.wait_for("EXIT=")


@pytest.mark.parametrize("strategy", ["regex", "stream"])
def test_two_calls_of_one_tool_each_result_with_its_id_and_every_fed_back_id(
    terminal: Terminal, strategy: str
) -> None:
    """Two results of get_weather look alike but for their ids: each result line names its
    call, and what was fed back shows every block's id, each result cut on its own."""
    terminal.start(
        f"{TOOLCALL} run --no-trace --strategy {strategy} "
        '"What\'s the weather in Tokyo and in Berlin?"'
    )
    screen = terminal.wait_for("EXIT=")
    assert "EXIT=0" in screen
    assert "✓ get_weather #1.0" in screen and "✓ get_weather #1.1" in screen
    fed = screen.split("↩ fed back to the model")[1].split("Iteration 2")[0]
    assert '<tool_result id="#1.0" name="get_weather">' in fed
    assert '<tool_result id="#1.1" name="get_weather">' in fed
    assert screen.rstrip().splitlines()[-2].endswith("stopped: answered")  # then EXIT=0
