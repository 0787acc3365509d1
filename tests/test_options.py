"""The flags: each command that runs a session takes every session flag, each command's `--help`
lists the flags it takes under their panels, and compare honours the flags it used to drop."""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from in_process import toolcall

from toolcall_cli.cli import app

SESSION_FLAGS = {
    # strategy
    "-s", "--strategy", "--schema-mode", "--stream-mode", "--prompt-style", "--system-prompt",
    "--dag",
    # model and endpoint
    "-m", "--model", "-p", "--profile", "--base-url", "--api-key", "--connect-timeout",
    "--read-timeout", "--context-window",
    # offline and scripted models
    "--script", "--faults", "--fault-rate", "--pace",
    # sampling
    "--seed", "--temperature", "--top-p", "--max-tokens",
    # tools
    "--tools", "--no-default-tools", "--mcp", "--allow", "--max-parallel", "--isolate-tools",
    "-y", "--yes",
    # retrieval
    "--retrieve", "--retrieve-over", "--retriever", "--embed-url", "--embed-model",
    # limits
    "--max-iterations", "--tool-timeout", "--timeout", "--max-result-chars", "--history-rounds",
    "--max-failed-rounds", "--max-repeated-rounds", "--max-calls-per-reply", "--max-reply-chars",
    "--max-response-bytes", "--max-line-bytes", "--request-timeout", "--no-final-answer",
    "--grounding",
}  # fmt: skip
"""Every flag a session can be asked for: run, chat, replay and prompt take them all; compare
all but the two that choose one strategy (it runs every one)."""
TRACE_FLAGS = {"--trace", "--no-trace"}
STEP_FLAGS = {"--step", "--explain", "--lang"}
COMMAND_FLAGS = {
    "run": SESSION_FLAGS | TRACE_FLAGS | STEP_FLAGS | {"-q", "--quiet", "--json", "--show-request"},
    "chat": SESSION_FLAGS | TRACE_FLAGS | STEP_FLAGS | {"--history-file"},
    "replay": SESSION_FLAGS | TRACE_FLAGS | {"--json"},
    "prompt": SESSION_FLAGS | {"--all", "--json"},
    "compare": SESSION_FLAGS - {"-s", "--strategy", "--schema-mode"}
    | {"--repeat", "--json", "--trace-dir", "--no-trace"},
    "tools": {"--tools", "--no-default-tools", "--mcp", "--rank", "--top"},
    "serve": {"--port", "--host", "--faults", "--fault-rate", "--seed"},
    "config show": {"-m", "--model", "-p", "--profile", "--base-url", "--api-key", "-s",
                    "--strategy"},
}  # fmt: skip
OPTION_LINE = re.compile(r"^  (?:(-\w), )?(--[\w-]+)")


def help_of(command: str) -> str:
    done = toolcall(*command.split(), "--help", cwd=Path.cwd())
    assert done.returncode == 0, done.stderr
    return done.stdout


def flags_in(help_text: str) -> set[str]:
    """The flags `--help` lists (the first names on its option lines), --help itself aside."""
    found: set[str] = set()
    for line in help_text.splitlines():
        match = OPTION_LINE.match(line)
        if match:
            found |= {name for name in match.groups() if name}
    return found - {"--help", "-h"}


@pytest.mark.parametrize("command", list(COMMAND_FLAGS))
def test_each_command_lists_the_flags_it_takes(command: str) -> None:
    assert flags_in(help_of(command)) == COMMAND_FLAGS[command]


def test_run_help_reads_as_panels() -> None:
    titles = [line[:-1] for line in help_of("run").splitlines() if re.fullmatch(r"\S.*:", line)]
    assert titles == [
        "Arguments",
        "Options",
        "Strategy",
        "Model and endpoint",
        "Offline and scripted models",
        "Sampling",
        "Tools",
        "Retrieval",
        "Limits",
        "Output",
        "Trace",
        "Step by step",
    ]


def click_params(*path: str) -> dict[str, Any]:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {param.name: param for param in command.params}


@pytest.mark.parametrize("command", ["run", "chat", "compare", "prompt", "replay"])
def test_the_session_flags_keep_their_defaults(command: str) -> None:
    params = click_params(command)
    defaults = {name: params[name].default for name in DEFAULTS}
    assert defaults == DEFAULTS


DEFAULTS = {
    "connect_timeout": 10.0,
    "read_timeout": 120.0,
    "fault_rate": 1.0,
    "max_parallel": 4,
    "allow": "write",
    "stream_mode": "tags",
    "prompt_style": "full",
    "yes": False,
    "tools": None,
    "mcp": None,
    "pace": None,
    "max_iterations": None,
    "run_timeout": None,
    "retrieve": None,
}


# --- compare takes what it dropped -----------------------------------------------------------


def compared(tmp_path: Path, question: str, *flags: str) -> dict[str, Any]:
    done = toolcall("compare", question, *flags, "--json", "--no-trace", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def test_compare_uses_the_tools_of_an_mcp_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = str(Path(sys.executable).parent)  # mcp-server-time, of the test extra
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    flags = ("--mcp", "mcp-server-time", "--no-default-tools")
    runs = compared(tmp_path, "What time is it in Tokyo?", *flags)["runs"]
    assert len(runs) == 5
    assert all(run["calls"] == 1 and run["stop_reason"] == "answered" for run in runs)
    assert all("Tokyo" in run["answer"] for run in runs)


PROCESS_ID_TOOL = '''
import os
from toolcall_cli.tools.registry import tool


@tool(permission="read")
def process_id() -> str:
    """The id of the process this tool runs in."""
    return str(os.getpid())
'''


@pytest.mark.parametrize("isolated", [False, True])
def test_compare_runs_tools_apart_with_isolate_tools(tmp_path: Path, isolated: bool) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "pid.py").write_text(PROCESS_ID_TOOL, encoding="utf-8")
    flags = ("--no-default-tools", *(["--isolate-tools"] if isolated else []))
    runs = compared(tmp_path, "What is the process id?", *flags)["runs"]
    here = f"process_id returned {os.getpid()}."
    assert all(run["answer"].startswith("process_id returned") for run in runs)
    assert all((run["answer"] != here) is isolated for run in runs)


def test_compare_takes_pace_and_the_system_prompt(tmp_path: Path) -> None:
    own = tmp_path / "prompt.txt"
    own.write_text("You are terse.", encoding="utf-8")
    done = toolcall(
        "compare",
        "What's 12*5+3?",
        "--pace",
        "0",
        "--system-prompt",
        str(own),
        "--trace-dir",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    traces = sorted(tmp_path.glob("*-compare-*.jsonl"))
    assert len(traces) == 5
    for trace in traces:
        header = json.loads(trace.read_text(encoding="utf-8").splitlines()[0])
        assert header["settings"]["system_prompt"] == "You are terse."


def test_compare_refuses_a_strategy_it_would_not_use(tmp_path: Path) -> None:
    done = toolcall("compare", "hi", "--strategy", "regex", cwd=tmp_path)
    assert done.returncode == 2 and "No such option: --strategy" in done.stderr


# --- the signatures stay short ---------------------------------------------------------------

CLI = Path(__file__).resolve().parent.parent / "toolcall_cli" / "cli"


def command_signatures() -> list[tuple[str, int]]:
    """Each command's name in cli/ and the lines of its signature (from `def` to the body)."""
    found = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command"
                for d in node.decorator_list
            ):
                found.append((f"{path.name}:{node.name}", node.body[0].lineno - node.lineno))
    return found


def test_no_command_signature_is_longer_than_25_lines() -> None:
    signatures = command_signatures()
    assert len(signatures) >= 20  # every command was found
    assert [(name, lines) for name, lines in signatures if lines > 25] == []
