"""The README cannot go stale: every `toolcall ...` command in its code blocks (and in docs/*.md)
is run here, on the offline model, and must end with the exit code the README implies; where the
README shows a command's output, the output must still hold it. docs/run.svg must be what
scripts/readme_svg.py draws today.

A command is taken from a ```bash block (each line whose command is `toolcall`, after any
`pip install ... &&` or `echo '...' |` before it), or from a `$ toolcall ...` line of any other
block, whose following lines are its output. Each command runs in a fresh copy of a workspace
holding the files the README's commands name (run.jsonl, reply.txt, kata_parse.py, ...) and a
trace directory with one recorded run. How a command is run, when not plainly, is in HOW below;
a command that cannot run as written is in SKIPPED with the reason. Nothing else is needed for a
new README command to be tested: it runs plainly and must exit 0.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from in_process import toolcall

from toolcall_cli.serve._answering import Answerer, ServeSettings
from toolcall_cli.serve._http import ServeServer

REPOSITORY = Path(__file__).resolve().parent.parent
DOCUMENTS = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
SHELL_BLOCKS = {"bash", "sh", "shell", "console"}


@dataclass(frozen=True)
class Shown:
    """One command as a document shows it."""

    where: str
    """`README.md:123`: where it is written."""
    line: str
    """The `toolcall ...` part of the line, without the comment after it."""
    argv: tuple[str, ...]
    stdin: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    before: tuple[tuple[str, ...], ...] = ()
    """The `$ toolcall ...` lines above it in the same block, run first."""
    output: tuple[str, ...] = ()
    """The output the document shows under it."""


def command_of(line: str) -> tuple[tuple[str, ...], str | None, dict[str, str]] | None:
    """The toolcall argv of a shell line, the stdin an `echo '...' |` gives it, and the
    variables set before it; None when the line runs no toolcall."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    segments: list[list[str]] = [[]]
    for word in words:
        if word in ("&&", "|", ";"):
            segments.append([])
        else:
            segments[-1].append(word)
    stdin: str | None = None
    for index, segment in enumerate(segments):
        env = {}
        while segment and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", segment[0]):
            name, value = segment.pop(0).split("=", 1)
            env[name] = value
        if segment[:1] == ["toolcall"]:
            before = segments[index - 1] if index else []
            if before[:1] == ["echo"]:
                stdin = " ".join(before[1:]) + "\n"
            return tuple(segment[1:]), stdin, env
    return None


def shown_commands(document: Path) -> list[Shown]:
    """Every toolcall command in the document's code blocks, in order."""
    shown: list[Shown] = []
    lines = document.read_text(encoding="utf-8").splitlines()
    language: str | None = None
    exported: dict[str, str] = {}
    dollars: list[tuple[str, ...]] = []
    taking: int | None = None
    """The index in `shown` of the `$` command whose output the block's lines are."""
    for number, text in enumerate(lines, 1):
        if text.startswith("```"):
            language = text[3:].strip() if language is None else None
            exported, dollars, taking = {}, [], None
            continue
        if language is None:
            continue
        where = f"{document.name}:{number}"
        if language in SHELL_BLOCKS:
            if text.startswith("export "):
                name, value = text.split(None, 1)[1].split("=", 1)
                exported[name] = value
                continue
            found = command_of(text)
            if found is not None:
                argv, stdin, env = found
                line = shlex.join(["toolcall", *argv])
                merged = tuple({**exported, **env}.items())
                shown.append(Shown(where, line, argv, stdin, merged))
        elif text.startswith("$ "):
            found = command_of(text[2:])
            if found is None:
                continue
            argv, stdin, env = found
            line = shlex.join(["toolcall", *argv])
            shown.append(Shown(where, line, argv, stdin, tuple(env.items()), tuple(dollars)))
            dollars.append(argv)
            taking = len(shown) - 1
        elif taking is not None:
            last = shown[taking]
            shown[taking] = replace(last, output=(*last.output, text))
    return shown


ALL_SHOWN = [command for document in DOCUMENTS for command in shown_commands(document)]


@dataclass(frozen=True)
class How:
    """How one command is run, where it is not run plainly (exit 0)."""

    exit: int = 0
    stdin: str | None = None
    setup: tuple[tuple[str, ...], ...] = ()
    """toolcall commands run first in its workspace."""
    removes: tuple[str, ...] = ()
    """Workspace files the command writes itself (and would refuse to write over)."""
    expects: tuple[str, ...] = ()
    """Text its stdout or stderr must hold, beside any output the README shows."""
    marks: tuple[str, ...] = ()
    """conftest's marks the test needs (`script_not_played`: a script refused unplayed)."""


THREE_RUNS = (
    ("run", "--strategy", "regex", "What's 12*5+3?"),
    ("run", "--strategy", "stream", "北京和上海明天天气分别是多少？"),
    ("run", "--strategy", "schema", "北京今天适合穿短袖吗？"),
)
"""The three runs `toolcall trace list` shows in the README."""

HOW: dict[str, How] = {
    # The README: "`--step` needs a terminal to answer on: with stdin piped it is a usage error".
    'toolcall run --step --explain "What\'s the weather in Tokyo and in Berlin?"': How(
        exit=2, stdin="", expects=("--step",)
    ),
    # The drills read answers from a pipe: none given, every question is skipped.
    "toolcall drill": How(stdin=""),
    "toolcall drill --topic endless-loop": How(stdin="", expects=("repeat_call",)),
    "toolcall drill --lang zh": How(stdin=""),
    # The doctor finds the unknown tool the recorded run was given (README: exit 4).
    "toolcall doctor run.jsonl": How(exit=4, expects=("unknown tool",)),
    "toolcall doctor run.jsonl --json": How(exit=4),
    # Replays of the run recorded with `--faults unknown_tool`, with the fault still on
    # (read from the trace's header): the same as the recording, exit 0.
    "toolcall replay -1": How(expects=("the replay matches",)),
    # Another strategy makes other calls: it differs (README: exit 5).
    "toolcall replay 20250102-0307 --strategy schema": How(exit=5),
    "toolcall replay run.jsonl --json": How(expects=('"same": true',)),
    # The replay in the README drops the recorded fault, so it differs: exit 5.
    "toolcall replay -1 --faults ''": How(exit=5),
    # A trace recorded under regex cannot play under stream (README: exit 2).
    'toolcall run --model scripted --script run.jsonl --strategy stream "What\'s 12*5+3?"': How(
        exit=2, marks=("script_not_played",)
    ),
    # A recorded run played back: its replies answer this question's requests.
    "toolcall run q --model scripted --script run.jsonl": How(),
    "toolcall trace list": How(
        setup=THREE_RUNS, removes=("state/traces/20250102-030737-0e372b.jsonl",)
    ),
    # `kata new` writes the file, and never over one.
    "toolcall kata new parse": How(removes=("kata_parse.py",), expects=("kata_parse.py",)),
    # The starter as `kata new` writes it: every case fails (README: exit 1).
    "toolcall kata check kata_parse.py": How(exit=1),
    "toolcall eject --strategy schema --output my_loop.py": How(removes=("my_loop.py",)),
    # Questions on a pipe are read line by line (tests/test_tmux.py and test_repl.py drive chat
    # in a real terminal).
    "toolcall chat": How(stdin="What's 12*5+3?\n", expects=("you> What's 12*5+3?", "= 63")),
    "toolcall --show-completion": How(expects=("toolcall",)),
    "toolcall --install-completion": How(expects=("completion installed",)),
}

SKIPPED: dict[str, str] = {
    # npx fetches the server from the npm registry, and no test reaches the internet; the same
    # flag runs above with mcp-server-time, a server of the test extra.
    "toolcall tools --mcp 'npx -y @modelcontextprotocol/server-filesystem /tmp'": "needs npm",
}

REAL_ENDPOINTS = {"ollama", "llamacpp", "deepseek", "openai", "vllm", "lmstudio", "qwen"}
"""Profiles that name a real server: their commands run against the loopback server."""
SERVE_URL = "http://127.0.0.1:8765/v1"
"""The URL the README gives `toolcall serve`: rewritten to the loopback server's."""


def key(line: str) -> str:
    """A command line in one spelling, so the tables may quote as the README does."""
    return shlex.join(shlex.split(line))


HOWS = {key(line): how for line, how in HOW.items()}
SKIPS = {key(line): reason for line, reason in SKIPPED.items()}


def ids(command: Shown) -> str:
    return f"{command.where} {command.line}"[:100]


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    """An OpenAI-compatible server on 127.0.0.1: `toolcall serve`'s own, the offline model."""
    server = ServeServer(("127.0.0.1", 0), Answerer(ServeSettings()), lambda exchange: None)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server.url
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace every command starts from: the files the README's commands name."""
    place = tmp_path_factory.mktemp("readme")
    state = place / "state"
    env = workspace_env(place)
    recorded = toolcall(
        "run",
        "--faults",
        "unknown_tool",
        "--trace",
        "run.jsonl",
        "北京今天适合穿短袖吗？",
        cwd=place,
        env=env,
    )
    assert recorded.returncode == 0, recorded.stderr
    (state / "traces").mkdir(parents=True, exist_ok=True)
    # A trace in the state dir, named as toolcall names them, for `replay -1` and an id prefix.
    shutil.copy(place / "run.jsonl", state / "traces" / "20250102-030737-0e372b.jsonl")
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}</tool_call>'
    (place / "reply.txt").write_text(f"Let me look.\n{call}\n", encoding="utf-8")
    delta = {"content": f"Sure.{call}"}
    chunks = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}]
    (place / "stream.sse").write_text(
        "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n",
        encoding="utf-8",
    )
    native = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"city": "北京"})},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [native]}
    (place / "message.json").write_text(json.dumps(message), encoding="utf-8")
    started = toolcall("kata", "new", "parse", cwd=place, env=env)
    assert started.returncode == 0, started.stderr
    toolcall("eject", "--strategy", "schema", "--output", "my_loop.py", cwd=place, env=env)
    return place


def workspace_env(place: Path) -> dict[str, str | None]:
    """A rich view as on a 120-column terminal, without colours, and the workspace's own state
    and config dirs."""
    return {
        "TOOLCALL_STATE_DIR": str(place / "state"),
        "XDG_CONFIG_HOME": str(place / "config"),
        "HOME": str(place / "home"),
        "TTY_COMPATIBLE": "1",
        "TTY_INTERACTIVE": "0",
        "COLUMNS": "120",
        "NO_COLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def as_run(argv: tuple[str, ...], loopback: str) -> tuple[str, ...]:
    """The command as the test runs it: real endpoints replaced by the loopback server."""
    argv = tuple(word.replace(SERVE_URL, loopback) for word in argv)
    profile = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    if profile in REAL_ENDPOINTS:
        argv = (*argv, "--base-url", loopback)
    return argv


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TIME = re.compile(r"\d+\.\d+s\b")
TRACE_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
WHEN = re.compile(r"\b\d\d-\d\d \d\d:\d\d\b")


def normalised(text: str, place: Path) -> str:
    """A line with what moves from run to run (times, trace ids and dates, where traces are
    kept) replaced by placeholders, and runs of spaces made one."""
    text = ANSI.sub("", text)
    text = text.replace(str(place / "state" / "traces"), "TRACES")
    text = re.sub(r"(~|/home/me)/\.local/state/toolcall/traces", "TRACES", text)
    text = TIME.sub("N.NNs", text)
    text = TRACE_ID.sub("ID", text)
    text = WHEN.sub("WHEN", text)
    return " ".join(text.split())


def shows(output: str, line: str, place: Path) -> bool:
    """Whether the output holds the README's line (wherever the terminal's width wrapped it);
    a line the README cuts with `…` need only hold its start."""
    wanted = normalised(line, place).removesuffix("…").rstrip()
    return wanted in normalised(output, place)


def shown_lines(command: Shown) -> list[str]:
    """The README's output lines worth checking: not blank, not an ellipsis it leaves out."""
    return [line for line in command.output if line.strip() and line.strip() not in ("...", "…")]


def cases() -> list[object]:
    """Each command not skipped, with the marks its HOW entry asks for."""
    return [
        pytest.param(
            command,
            marks=[getattr(pytest.mark, mark) for mark in HOWS.get(command.line, How()).marks],
            id=ids(command),
        )
        for command in ALL_SHOWN
        if command.line not in SKIPS
    ]


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A short path in /tmp, not pytest's (whose worker folders make it long): a trace path the
    view prints must fit the 120 columns unwrapped, as the README shows it."""
    place = Path(tempfile.mkdtemp(prefix="readme-"))
    yield place / "work"
    shutil.rmtree(place, ignore_errors=True)


@pytest.mark.parametrize("command", cases())
def test_each_readme_command_runs_as_the_readme_says(
    command: Shown, library: Path, loopback: str, workspace: Path
) -> None:
    place = workspace
    shutil.copytree(library, place)
    how = HOWS.get(command.line, How())
    for name in how.removes:
        (place / name).unlink()
    env: dict[str, str | None] = {**workspace_env(place), **dict(command.env)}
    for step in (*how.setup, *command.before):
        done = toolcall(*as_run(step, loopback), cwd=place, env=env)
        assert done.returncode in (0, 3), f"{step}: {done.stderr}"
    if command.argv[:1] == ("serve",):
        code, output = served(command.argv, place, env)
    else:
        stdin = how.stdin if how.stdin is not None else command.stdin
        done = toolcall(*as_run(command.argv, loopback), cwd=place, env=env, stdin=stdin)
        code, output = done.returncode, done.stdout + done.stderr
    assert code == how.exit, f"{command.where}: exit {code}, not {how.exit}\n{output[-3000:]}"
    for text in how.expects:
        assert text in output, f"{command.where}: {text!r} not in\n{output[-3000:]}"
    for line in shown_lines(command):
        assert shows(output, line, place), f"{command.where}: {line!r} not in\n{output}"


def served(argv: tuple[str, ...], place: Path, env: dict[str, str | None]) -> tuple[int, str]:
    """`toolcall serve`, which serves until Ctrl-C: started as a process (on any free port),
    stopped with SIGINT once it says where it listens."""
    argv = (*argv, "--port", "0") if "--port" not in argv else argv
    argv = tuple(
        "0" if before == "--port" else word
        for before, word in zip(("", *argv[:-1]), argv, strict=True)
    )
    full_env = {**os.environ, **{k: v for k, v in env.items() if v is not None}}
    server = subprocess.Popen(
        [sys.executable, "-m", "toolcall_cli", *argv],
        cwd=place,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        # A background job's SIGINT may be ignored; the server must get it as from a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert server.stdout is not None
    lines: list[str] = []
    for line in server.stdout:
        lines.append(line)
        if "Ctrl-C stops" in line:
            break
    server.send_signal(signal.SIGINT)
    rest, _ = server.communicate(timeout=30)
    return server.returncode, "".join(lines) + rest


def test_every_readme_command_is_run_or_skipped_with_a_reason() -> None:
    """The tables name only commands the README shows, so none outlives its command."""
    lines = {command.line for command in ALL_SHOWN}
    assert set(HOWS) - lines == set()
    assert set(SKIPS) - lines == set()
    assert len(ALL_SHOWN) > 50


def test_the_set_up_commands_are_the_ones_ci_runs() -> None:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block[0].startswith("pip install . && toolcall run ")
    ci = (REPOSITORY / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    tests = first_block[1].split(" && ")[-1]
    assert tests == "python -m pytest -n auto"
    assert ci[-1].endswith(f" && {tests}")


def test_the_picture_is_what_the_script_draws_today(tmp_path: Path) -> None:
    """docs/run.svg is current: scripts/readme_svg.py draws the same bytes."""
    drawn = tmp_path / "run.svg"
    subprocess.run(
        [sys.executable, str(REPOSITORY / "scripts" / "readme_svg.py"), str(drawn)],
        check=True,
        capture_output=True,
    )
    committed = (REPOSITORY / "docs" / "run.svg").read_bytes()
    assert drawn.read_bytes() == committed, "run `python scripts/readme_svg.py` and commit"
