"""app/: options, config and environment turned into a session without the command line, and
`toolcall prompt` showing exactly the request the run sends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall
from many_tools import TOOLS, write_plugin

from toolcall_cli.app.build import build_session
from toolcall_cli.app.errors import AppError
from toolcall_cli.app.options import SessionOptions

QUESTION = "What is the air quality in Beijing?"
MORE_TOOLS = '''
from toolcall_cli.tools.registry import tool


@tool(permission="read")
def tide_times(port: str) -> str:
    """High and low tide times at a harbour."""
    return port


@tool(permission="read")
def pollen_count(city: str) -> str:
    """Pollen count and allergy risk for a city."""
    return city


@tool(permission="read")
def ski_report(resort: str) -> str:
    """Snow depth and open pistes at a ski resort."""
    return resort


@tool(permission="read")
def uv_index(city: str) -> str:
    """Ultraviolet index and sunburn risk for a city."""
    return city
'''


@pytest.fixture
def sixty_four_tools(tmp_path: Path) -> Path:
    """A working directory whose ./tools.d holds 60 tools: with the 4 bundled ones, 64."""
    write_plugin(tmp_path / "tools.d")
    (tmp_path / "tools.d" / "more.py").write_text(MORE_TOOLS, encoding="utf-8")
    assert len(TOOLS) + 4 == 60
    return tmp_path


def first_request_of_run(cwd: Path, *flags: str) -> tuple[dict[str, Any], list[str]]:
    """The first request `toolcall run --json` sent, and the tools the run had loaded."""
    done = toolcall("run", QUESTION, *flags, "--json", "--no-trace", cwd=cwd)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    started = next(e for e in events if e["kind"] == "run_started")
    request = next(e for e in events if e["kind"] == "iteration_started")["request"]
    return request, started["tools"]


@pytest.mark.parametrize("flags", [(), ("--strategy", "schema")], ids=["regex", "schema"])
def test_prompt_prints_the_request_the_run_sends_with_64_tools(
    sixty_four_tools: Path, flags: tuple[str, ...]
) -> None:
    shown = toolcall("prompt", QUESTION, *flags, cwd=sixty_four_tools)
    assert shown.returncode == 0, shown.stderr
    sent, loaded = first_request_of_run(sixty_four_tools, *flags)
    assert len(loaded) == 64
    assert json.loads(shown.stdout) == sent
    if flags:  # the native tools list: the ones retrieved for the question, not all 64
        names = [tool["function"]["name"] for tool in sent["tools"]]
        assert "air_quality" in names and "search_tools" in names
        assert len(names) < 10


def test_prompt_and_run_agree_on_the_flags_that_change_the_request(
    sixty_four_tools: Path,
) -> None:
    """The same flags, the same request: retrieval set by hand, sampling, the prompt style."""
    flags = ("--retrieve", "3", "--temperature", "0.5", "--prompt-style", "compact")
    shown = toolcall("prompt", QUESTION, *flags, cwd=sixty_four_tools)
    sent, _ = first_request_of_run(sixty_four_tools, *flags)
    assert json.loads(shown.stdout) == sent
    assert sent["temperature"] == 0.5


def test_prompt_says_why_when_the_run_would_refuse_the_question(tmp_path: Path) -> None:
    done = toolcall("prompt", "x" * 9000, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "toolcall: error: the question is 9,000 characters; the limit is 8,000"
    )


BUILD_AND_RUN = """
import sys
from toolcall_cli.app.build import build_session
from toolcall_cli.app.options import SessionOptions

assembled = build_session(SessionOptions.of(max_iterations=3))
try:
    events = list(assembled.session.ask("What is 12*7?"))
finally:
    assembled.session.close()
answers = [event.text for event in events if event.kind == "final_answer"]
print(events[-1].stop_reason, answers)
print(sorted(name for name in sys.modules if name.split(".")[0] in ("typer", "click")))
print("toolcall_cli.cli" in sys.modules)
"""


def test_a_session_is_built_and_run_without_typer(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "TOOLCALL_STATE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", BUILD_AND_RUN],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer, command_line, cli = done.stdout.splitlines()
    assert answer.startswith("answered") and "84" in answer
    assert command_line == "[]"
    assert cli == "False"


def test_what_cannot_be_built_is_an_app_error_with_its_kind(tmp_path: Path) -> None:
    options = SessionOptions.of(script=tmp_path / "replies.json")
    with pytest.raises(AppError) as raised:
        build_session(options)
    assert raised.value.kind == "usage"
    assert raised.value.message == "--script is for --model scripted (the model is offline)"


def test_the_command_line_says_an_app_error_as_one_line_and_its_exit_code(tmp_path: Path) -> None:
    done = toolcall("run", "hi", "--script", str(tmp_path / "replies.json"), cwd=tmp_path)
    assert done.returncode == 2
    expected = "toolcall: error: --script is for --model scripted (the model is offline)\n"
    assert done.stderr == expected


def test_options_are_changed_by_name_whatever_their_group() -> None:
    options = SessionOptions.of(strategy="schema", mcp=("srv",), max_iterations=2)
    assert options.strategy.strategy == "schema"
    assert options.tools.mcp == ("srv",)
    assert options.limits.max_iterations == 2
    assert options.flat()["max_iterations"] == 2
    with pytest.raises(TypeError, match="no session option named bogus"):
        options.replace(bogus=1)


def test_pace_is_only_a_default_where_none_was_chosen() -> None:
    assert SessionOptions().paced(0.02).local.pace == 0.02
    assert SessionOptions.of(pace=0.5).paced(0.02).local.pace == 0.5
