"""What a tool prints while it runs is kept with its result: never on stdout (where --json lines
and --quiet answers go), never fed back to the model, whichever thread it prints from and when."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from in_process import Finished, toolcall

from toolcall_cli import tool
from toolcall_cli.messages import ToolCall
from toolcall_cli.tools.pool import execute
from toolcall_cli.tools.registry import ToolRegistry

NOISY_PLUGIN = '''
import sys
import threading

from toolcall_cli import tool

both = threading.Barrier(2)
released = threading.Event()
printed_late = threading.Event()


@tool
def noisy() -> str:
    """Prints on both streams, then answers."""
    print("NOISY OUT line 1")
    print("NOISY OUT line 2", flush=True)
    sys.stderr.write("NOISY ERR\\n")
    sys.stdout.buffer.write(b"NOISY BYTES\\n")
    return "the result"


@tool
def left() -> str:
    """Prints while `right` prints too."""
    both.wait(20)
    for _ in range(50):
        print("LEFT")
    return "left done"


@tool
def right() -> str:
    """Prints while `left` prints too."""
    both.wait(20)
    for _ in range(50):
        print("RIGHT")
    return "right done"


@tool(timeout=0.2)
def stuck() -> str:
    """Waits (past its timeout) until `release` is called, then prints."""
    released.wait(30)
    print("LATE OUT")
    sys.stderr.write("LATE ERR\\n")
    printed_late.set()
    return "too late"


@tool
def release() -> str:
    """Lets `stuck` go on, and answers once it has printed."""
    released.set()
    return "stuck printed" if printed_late.wait(30) else "stuck did not print"
'''


def call_reply(*names: str) -> str:
    calls = "".join(
        f'<tool_call>{{"name": "{name}", "arguments": {{}}}}</tool_call>' for name in names
    )
    return json.dumps(calls)


def toolcall_run(tmp_path: Path, replies: list[str], *flags: str) -> Finished:
    (tmp_path / "tools.d").mkdir(exist_ok=True)
    (tmp_path / "tools.d" / "noisy.py").write_text(NOISY_PLUGIN, encoding="utf-8")
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join(replies) + "\n", encoding="utf-8")
    command = ["run", "go", "--no-default-tools", "--model", "scripted", "--script", str(script)]
    return toolcall(*command, *flags, cwd=tmp_path)


def finished(events: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(
        e["result"] for e in events if e["kind"] == "tool_finished" and e["call"]["name"] == name
    )


def test_json_lines_stay_json_and_the_printed_text_is_in_the_result(tmp_path: Path) -> None:
    done = toolcall_run(tmp_path, [call_reply("noisy"), json.dumps("done")], "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]  # each line is JSON
    result = finished(events, "noisy")
    assert result["content"] == "the result"
    assert result["output"].splitlines() == [
        "NOISY OUT line 1",
        "NOISY OUT line 2",
        "NOISY ERR",
        "NOISY BYTES",
    ]
    assert "NOISY" not in done.stderr
    fed = next(e for e in events if e["kind"] == "fed_back")
    assert "NOISY" not in json.dumps(fed)  # the model reads the return value only


def test_quiet_prints_only_the_answer(tmp_path: Path) -> None:
    done = toolcall_run(tmp_path, [call_reply("noisy"), json.dumps("the answer")], "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the answer\n"
    assert "NOISY" not in done.stderr


def test_tools_printing_at_once_each_keep_their_own_output(tmp_path: Path) -> None:
    done = toolcall_run(tmp_path, [call_reply("left", "right"), json.dumps("done")], "--json")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert finished(events, "left")["content"] == "left done"  # both ran at once (the barrier)
    assert finished(events, "left")["output"] == "LEFT\n" * 50
    assert finished(events, "right")["output"] == "RIGHT\n" * 50


def test_a_tool_printing_after_its_timeout_reaches_neither_stream(tmp_path: Path) -> None:
    replies = [call_reply("stuck"), call_reply("release"), json.dumps("done")]
    done = toolcall_run(tmp_path, replies, "--json")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert finished(events, "stuck")["error_kind"] == "timeout"
    assert finished(events, "release")["content"] == "stuck printed"  # during the run
    assert "LATE" not in done.stdout and "LATE" not in done.stderr


def test_plain_view_shows_the_printed_text_under_the_result(tmp_path: Path) -> None:
    done = toolcall_run(tmp_path, [call_reply("noisy"), json.dumps("done")])
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(r"tool noisy \S+ ok ", line))
    assert lines[at].endswith("-> the result")
    assert lines[at + 1 : at + 6] == [
        "    printed by the tool:",
        "      NOISY OUT line 1",
        "      NOISY OUT line 2",
        "      NOISY ERR",
        "      NOISY BYTES",
    ]


def test_printed_output_is_bounded_and_kept_on_errors_and_timeouts() -> None:
    gate = threading.Event()

    @tool
    def chatty() -> str:
        print("x" * 1_000_000)
        return "ok"

    @tool
    def failing() -> None:
        print("about to fail")
        raise RuntimeError("failed")

    @tool(timeout=0.2)
    def hanging() -> None:
        print("waiting")
        gate.wait(30)

    registry = ToolRegistry.from_functions(chatty, failing, hanging)
    try:
        big = execute(ToolCall(id="1", name="chatty", arguments={}), registry)
        failed = execute(ToolCall(id="2", name="failing", arguments={}), registry)
        hung = execute(ToolCall(id="3", name="hanging", arguments={}), registry)
    finally:
        gate.set()
    assert big.content == "ok"
    assert len(big.output) < 70_000
    assert big.output.startswith("x" * 1000)
    assert "934,465 more characters" in big.output  # 1,000,001 printed, 65,536 kept
    assert (failed.error_kind, failed.output) == ("tool_error", "about to fail\n")
    assert (hung.error_kind, hung.output) == ("timeout", "waiting\n")


def test_a_repeated_call_does_not_show_the_earlier_printed_output_again() -> None:
    from toolcall_cli.events import ToolFinished
    from toolcall_cli.loop import run
    from toolcall_cli.models.scripted import ScriptedModel
    from toolcall_cli.strategies import get_strategy

    @tool
    def shout(text: str) -> str:
        print(f"shouting {text}")
        return text.upper()

    reply = '<tool_call>{"name": "shout", "arguments": {"text": "hi"}}</tool_call>'
    events = run(
        "q",
        model=ScriptedModel([reply, reply, "done"]),
        strategy=get_strategy("regex"),
        registry=ToolRegistry.from_functions(shout),
        history=[],
    )
    first, again = [e.result for e in events if isinstance(e, ToolFinished)]
    assert (first.cached, first.output) == (False, "shouting hi\n")
    assert (again.cached, again.output) == (True, "")  # reused: the tool did not run again
