"""The README and the docs cannot go stale: every `toolcall ...` command in their code blocks is
run here, on the offline model, in the order the page shows it, and must end with the exit code
the page implies; where a page shows a command's output (`$ toolcall ...` and the lines under
it), the real output must be that output, line for line, with times, trace ids and dates masked.
docs/run.svg must be what scripts/readme_svg.py draws today.

A command is taken from a ```bash block (each line whose command is `toolcall`, after any
`pip install ... &&` or `echo '...' |` before it; its output is not shown), or from a
`$ toolcall ...` line of any other block, whose following lines are its output (none: it must
print nothing). A shown output may leave lines out with a line of
its own that is `…` (any number of lines, none included), and may cut a line short with `…` at
its end (the real line need only start so). Blank lines are not compared.

Each page runs from a fresh copy of what a clone holds that its commands may read (examples/),
with its own state directory, so a command may use only files the repository ships or that an
earlier command of the same page made. How a command is run, when not plainly, is in HOW below;
a command that cannot run as written is in SKIPPED with the reason. Nothing else is needed for a
new command to be tested: it runs plainly and must exit 0.

`TOOLCALL_UPDATE_DOCS=1 python -m pytest tests/test_readme.py` writes each shown output that no
longer matches as the command prints it today (outputs that leave lines out are left to you):
read the diff before committing it.
"""

from __future__ import annotations

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
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet
from in_process import toolcall
from terminal_signals import as_from_a_terminal

from toolcall_cli.serve._answering import Answerer, ServeSettings
from toolcall_cli.serve._http import ServeServer

REPOSITORY = Path(__file__).resolve().parent.parent
DOCUMENTS = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]
SHELL_BLOCKS = {"bash", "sh", "shell"}
SHIPPED = ("examples",)
"""What a page's commands may read from the clone: copied into each page's workspace."""
GAP = ("…", "...")
"""A shown output line that stands for lines left out."""


@dataclass(frozen=True)
class Shown:
    """One command as a page shows it."""

    where: str
    """`README.md:123`: where it is written."""
    line: str
    """The `toolcall ...` part of the line, without the comment after it."""
    argv: tuple[str, ...]
    stdin: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    output: tuple[str, ...] | None = None
    """The output the page shows under it (a `$` line; nothing under it: the command must print
    nothing), or None (a shell block's line: not compared)."""
    number: int = 0
    """The line number of the command in its page."""


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


def named(document: Path) -> str:
    """A page's name as a failure reports it: its path in the repository."""
    return (
        str(document.relative_to(REPOSITORY))
        if document.is_relative_to(REPOSITORY)
        else str(document)
    )


FENCE = re.compile(r"^[ \t]*(?P<marks>`{3,}|~{3,})(?P<info>.*)$")
"""A code fence as CommonMark reads one (see `opens` and `closes`), at any indent: a list item's
block is indented."""


def opens(fence: re.Match[str] | None) -> bool:
    """A backtick fence's info string holds no backtick: a line that starts with inline code
    such as ```` ```json ```` is prose, not a fence."""
    return fence is not None and not (fence["marks"][0] == "`" and "`" in fence["info"])


def closes(fence: re.Match[str] | None, opened: re.Match[str]) -> bool:
    """The same character, at least as many, and nothing after."""
    return (
        fence is not None
        and fence["marks"][0] == opened["marks"][0]
        and len(fence["marks"]) >= len(opened["marks"])
        and not fence["info"].strip()
    )


def shown_commands(document: Path) -> list[Shown]:
    """Every toolcall command in the page's code blocks, in order."""
    shown: list[Shown] = []
    lines = document.read_text(encoding="utf-8").splitlines()
    language: str | None = None
    opened: re.Match[str] | None = None
    """The fence the current block opened with, None outside a block."""
    exported: dict[str, str] = {}
    taking: int | None = None
    """The index in `shown` of the `$` command whose output the block's lines are."""
    for number, text in enumerate(lines, 1):
        fence = FENCE.match(text)
        if closes(fence, opened) if opened else opens(fence):
            opened = None if opened else fence
            language = (opened["info"].split() or [""])[0] if opened else None
            exported, taking = {}, None
            continue
        if language is None:
            continue
        where = f"{named(document)}:{number}"
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
                shown.append(Shown(where, line, argv, stdin, merged, number=number))
        elif text.startswith("$ "):
            found = command_of(text[2:])
            if found is None:  # another program's command (`$ $EDITOR FILE`): its own output
                taking = None
                continue
            argv, stdin, env = found
            line = shlex.join(["toolcall", *argv])
            shown.append(Shown(where, line, argv, stdin, tuple(env.items()), (), number))
            taking = len(shown) - 1
        elif taking is not None:
            last = shown[taking]
            shown[taking] = replace(last, output=(*(last.output or ()), text))
    return shown


ALL_SHOWN = [command for document in DOCUMENTS for command in shown_commands(document)]


@dataclass(frozen=True)
class How:
    """How one command is run, where it is not run plainly (exit 0)."""

    exit: int = 0
    stdin: str | None = None
    expects: tuple[str, ...] = ()
    """Text its stdout or stderr must hold, beside any output the page shows."""
    marks: tuple[str, ...] = field(default=())
    """conftest's marks the page's test needs (`script_not_played`: a script refused unplayed)."""


HOW: dict[str, How] = {
    # The docs: "`--step` needs a terminal to answer on: with stdin piped it is a usage error".
    'toolcall run --step --explain "What\'s the weather in Tokyo and in Berlin?"': How(
        exit=2, stdin="", expects=("--step",)
    ),
    # The drills read answers from a pipe: none given, every question is skipped.
    "toolcall drill": How(stdin=""),
    "toolcall drill --topic endless-loop": How(stdin="", expects=("repeat_call",)),
    "toolcall drill --lang zh": How(stdin=""),
    "toolcall drill --topic ending": How(stdin="", expects=("stopped: answered",)),
    # The doctor finds the unknown tool the recorded run was given (docs: exit 4).
    "toolcall doctor examples/run.jsonl": How(exit=4, expects=("unknown tool",)),
    "toolcall doctor run.jsonl": How(exit=4, expects=("unknown tool",)),
    "toolcall doctor run.jsonl --json": How(exit=4),
    # The offline model's score is under 101%: the exit code CI would fail on.
    "toolcall eval examples/eval/cases.jsonl --fail-under 1.01": How(
        exit=1, expects=("under --fail-under",)
    ),
    # The latest run is the one recorded with `--faults unknown_tool`, with the fault still on
    # (read from the trace's header): the same as the recording, exit 0.
    "toolcall replay -1": How(expects=("the replay matches",)),
    # Another strategy makes other calls: it differs (docs: exit 5).
    "toolcall replay examples/run.jsonl --strategy schema": How(exit=5),
    "toolcall replay run.jsonl --json": How(expects=('"same": true',)),
    # The replay in the docs drops the recorded fault, so it differs: exit 5.
    "toolcall replay -1 --faults ''": How(exit=5),
    # A trace recorded under regex cannot play under stream (docs: exit 2).
    "toolcall run --model scripted --script examples/run.jsonl --strategy stream "
    '"北京今天适合穿短袖吗？"': How(exit=2, marks=("script_not_played",)),
    # The starter as `kata new` writes it: every case fails (docs: exit 1).
    "toolcall kata check kata_parse.py": How(exit=1),
    "toolcall kata check kata_request.py": How(exit=1, expects=("since `toolcall kata new`",)),
    # The mock interview reads its commands from a pipe: none given, it ends at once, grades
    # the untouched starters, skips the follow-up questions and prints the score.
    "toolcall kata interview": How(stdin="", expects=("== score ==",)),
    # Questions on a pipe are read line by line (tests/test_tmux.py and test_repl.py drive chat
    # in a real terminal).
    "toolcall chat": How(stdin="What's 12*5+3?\n", expects=("you> What's 12*5+3?", "= 63")),
    "toolcall --show-completion": How(expects=("toolcall",)),
    "toolcall --install-completion": How(expects=("completion installed",)),
}

SKIPPED: dict[str, str] = {
    # npx fetches the server from the npm registry, and no test reaches the internet; the same
    # flag runs beside it with mcp-server-time, a server of the test extra.
    "toolcall tools --mcp 'npx -y @modelcontextprotocol/server-filesystem /tmp'": "needs npm",
}

REAL_ENDPOINTS = {"ollama", "llamacpp", "deepseek", "openai", "vllm", "lmstudio", "qwen"}
"""Profiles that name a real server: their commands run against the loopback server."""
SERVE_URL = "http://127.0.0.1:8765/v1"
"""The URL the docs give `toolcall serve`: rewritten to the loopback server's."""
SHOWN_STATE = "~/.local/state/toolcall"
"""Where the docs show toolcall's state kept (Linux's user state directory)."""


def key(line: str) -> str:
    """A command line in one spelling, so the tables may quote as the docs do."""
    return shlex.join(shlex.split(line))


HOWS = {key(line): how for line, how in HOW.items()}
SKIPS = {key(line): reason for line, reason in SKIPPED.items()}


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


@dataclass(frozen=True)
class Workspace:
    """A clone as a page's reader has it, and a state directory of its own."""

    place: Path
    """The clone's root, holding what the commands may read: the shipped examples."""
    state: Path
    """Where traces go: a path as long as the one the docs show (`~/.local/state/toolcall`),
    so the terminal wraps a line holding it where the reader's terminal does."""


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Workspace]:
    """A fresh workspace, its state directory removed after the test."""
    yield (made := workspace(tmp_path / "clone"))
    shutil.rmtree(made.state.parent, ignore_errors=True)


def workspace(place: Path) -> Workspace:
    place.mkdir(parents=True)
    for name in SHIPPED:
        shutil.copytree(REPOSITORY / name, place / name)
    state = Path(tempfile.mkdtemp(prefix="t", dir="/tmp")) / "toolcall"
    assert len(str(state)) == len(SHOWN_STATE), state
    return Workspace(place, state)


def workspace_env(work: Workspace) -> dict[str, str | None]:
    """A rich view as on a 100-column terminal, without colours, and the workspace's own state
    and config dirs."""
    place = work.place
    return {
        "TOOLCALL_STATE_DIR": str(work.state),
        "XDG_CONFIG_HOME": str(place / "config"),
        "HOME": str(place / "home"),
        "TTY_COMPATIBLE": "1",
        "TTY_INTERACTIVE": "0",
        "COLUMNS": "100",
        "NO_COLOR": "1",
        "TZ": "UTC",
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
TIME = re.compile(r"\d+\.\d+(-\d+\.\d+)? ?s\b")
BARS = re.compile("[·█]+")
"""A timeline's bars: they draw the times."""
TRACE_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
WHEN = re.compile(r"\b\d\d-\d\d \d\d:\d\d\b")
RULE = re.compile("─+")


def normalised(text: str, work: Workspace) -> str:
    """A line with what moves from run to run (times, trace ids and dates, where traces are
    kept) replaced by placeholders, and runs of spaces made one."""
    text = ANSI.sub("", text)
    text = text.replace(str(work.state), "STATE").replace(SHOWN_STATE, "STATE")
    text = TIME.sub("N.NNs", text)
    text = BARS.sub("▒", text)
    text = TRACE_ID.sub("ID", text)
    text = WHEN.sub("WHEN", text)
    text = RULE.sub("─", text)  # a rule's length moves with the width of the times on it
    return " ".join(text.split())


def matches(shown: list[str], real: list[str]) -> bool:
    """Whether the real lines are the shown ones: each in turn, a gap line standing for any
    number of lines, and a line cut with `…` needing only its start."""
    if not shown:
        return not real
    first, rest = shown[0], shown[1:]
    if first in GAP:
        return any(matches(rest, real[skip:]) for skip in range(len(real) + 1))
    if not real:
        return False
    head = real[0]
    same = head.startswith(first[:-1].rstrip()) if first.endswith("…") else head == first
    return same and matches(rest, real[1:])


def compared(lines: list[str] | tuple[str, ...], work: Workspace) -> list[str]:
    """Lines as they are compared: normalised, blank ones left out."""
    return [normal for normal in (normalised(line, work) for line in lines) if normal]


def as_shown(output: str, work: Workspace) -> list[str]:
    """The output as a page would show it: the workspace's paths as a reader's."""
    text = ANSI.sub("", output).replace(str(work.state), SHOWN_STATE)
    lines = [line.rstrip() for line in text.replace(str(work.place) + os.sep, "").splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@dataclass
class Outcome:
    """What the commands of one page did, against what it shows."""

    problems: list[str] = field(default_factory=list)
    rewrites: dict[int, list[str]] = field(default_factory=dict)
    """Per `$` line number, the output as printed today, where it differs from the page's."""


def ran(
    command: Shown, work: Workspace, env: dict[str, str | None], loopback: str
) -> tuple[int, str]:
    """Run one command as the page shows it, in the page's workspace: its exit code and its
    stdout then stderr."""
    how = HOWS.get(command.line, How())
    place = work.place
    env = {**env, **dict(command.env)}
    if command.argv[:1] == ("serve",):
        return served(command.argv, place, env)
    stdin = how.stdin if how.stdin is not None else command.stdin
    done = toolcall(*as_run(command.argv, loopback), cwd=place, env=env, stdin=stdin)
    return done.returncode, done.stdout + done.stderr


def check(command: Shown, code: int, output: str, work: Workspace, outcome: Outcome) -> None:
    """Hold one command's exit code and output to what the page and HOW say."""
    how = HOWS.get(command.line, How())
    at = f"{command.where} {command.line}"
    if code != how.exit:
        outcome.problems.append(f"{at}: exit {code}, not {how.exit}\n{output[-3000:]}")
    outcome.problems += [
        f"{at}: {text!r} not in\n{output[-3000:]}" for text in how.expects if text not in output
    ]
    if command.output is None:
        return  # a shell block's line: its output is not shown
    # A `$` line with nothing under it shows an output too: none. A command that prints must
    # show what (at least a `…`), or the reader is left with a command and no answer.
    real = compared(output.splitlines(), work)
    if matches(compared(command.output, work), real):
        return
    printed = as_shown(output, work)
    outcome.problems.append(
        f"{at}: the output differs from the page's; it is now:\n" + "\n".join(printed)
    )
    if not any(line.strip() in GAP for line in command.output):
        outcome.rewrites[command.number] = printed


def rewrite(document: Path, commands: list[Shown], rewrites: dict[int, list[str]]) -> None:
    """Write each `$` command's output as printed today in place of the page's."""
    lines = document.read_text(encoding="utf-8").splitlines()
    for command in sorted(commands, key=lambda shown: -shown.number):
        if command.number not in rewrites or command.output is None:
            continue
        start = command.number
        lines[start : start + len(command.output)] = rewrites[command.number]
    document.write_text("\n".join(lines) + "\n", encoding="utf-8")


def page_cases() -> list[ParameterSet]:
    """Each page with a command, with the marks its commands' HOW entries ask for."""
    cases = []
    for document in DOCUMENTS:
        commands = shown_commands(document)
        if not commands:
            continue
        marks = {mark for c in commands for mark in HOWS.get(c.line, How()).marks}
        cases.append(
            pytest.param(
                document,
                marks=[getattr(pytest.mark, mark) for mark in sorted(marks)],
                id=named(document),
            )
        )
    return cases


@pytest.mark.parametrize("document", page_cases())
def test_every_command_of_a_page_runs_in_order_as_the_page_shows(
    document: Path, loopback: str, clone: Workspace
) -> None:
    env = workspace_env(clone)
    commands = [c for c in shown_commands(document) if c.line not in SKIPS]
    outcome = Outcome()
    for command in commands:
        code, output = ran(command, clone, env, loopback)
        check(command, code, output, clone, outcome)
    if outcome.rewrites and os.environ.get("TOOLCALL_UPDATE_DOCS") == "1":
        rewrite(document, commands, outcome.rewrites)
    assert not outcome.problems, "\n\n".join(outcome.problems)


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
        preexec_fn=as_from_a_terminal,
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


def test_every_command_is_run_or_skipped_with_a_reason() -> None:
    """The tables name only commands the pages show, so none outlives its command."""
    lines = {command.line for command in ALL_SHOWN}
    assert set(HOWS) - lines == set()
    assert set(SKIPS) - lines == set()
    assert len(ALL_SHOWN) > 50


def test_inline_code_at_a_line_start_is_no_fence(tmp_path: Path) -> None:
    """A paragraph line that starts with ```` ```json ```` would, taken for a fence, turn the
    page inside out: its real blocks would be read as prose and go untested."""
    page = tmp_path / "page.md"
    page.write_text(
        "A reply in a\n```` ```json ```` fence is read.\n\n```bash\ntoolcall faults\n```\n\n"
        "````console\n$ toolcall tools\n```\nstill output\n````\n",
        encoding="utf-8",
    )
    faults, tools = shown_commands(page)
    assert (faults.line, faults.output) == ("toolcall faults", None)
    assert (tools.line, tools.output) == ("toolcall tools", ("```", "still output"))


@pytest.mark.parametrize("document", DOCUMENTS, ids=named)
def test_every_dollar_line_of_a_page_is_run(document: Path) -> None:
    """Each `$ toolcall` line a page holds is a command the page test runs."""
    written = [
        line
        for line in document.read_text(encoding="utf-8").splitlines()
        if line.startswith("$ toolcall ")
    ]
    taken = [c for c in shown_commands(document) if c.output is not None]
    assert len(taken) == len(written)


def test_a_shown_output_is_compared_line_for_line() -> None:
    """A changed, added or missing line breaks the comparison; only a gap line lets lines go
    unshown, and only a line cut with `…` may end differently."""
    here = Workspace(Path("/nowhere"), Path("/nowhere/state"))
    real = compared(["a 0.12s", "b", "", "c d"], here)
    assert matches(compared(["a 9.99s", "b", "c  d"], here), real)
    assert not matches(compared(["a 9.99s", "b"], here), real)
    assert not matches(compared(["a 9.99s", "b", "c e"], here), real)
    assert not matches(compared(["a", "b", "c d", "e"], here), real)
    assert matches(compared(["a 1.00s", "…", "c d"], here), real)
    assert matches(compared(["…", "c …"], here), real)
    assert not matches(compared(["…", "b x…"], here), real)


def test_a_command_shown_with_no_output_must_print_none(
    tmp_path: Path, loopback: str, clone: Workspace
) -> None:
    """A `$ toolcall` line with nothing under it says the command prints nothing: a command
    that prints must show it. Another program's `$` line takes the lines under it."""
    page = tmp_path / "page.md"
    page.write_text("```console\n$ toolcall faults\n$ $EDITOR x\nits own\n```\n", "utf-8")
    [command] = shown_commands(page)
    assert command.output == ()
    outcome = Outcome()
    check(command, *ran(command, clone, workspace_env(clone), loopback), clone, outcome)
    assert outcome.problems and "the output differs" in outcome.problems[0]


def test_a_page_whose_output_changed_fails(tmp_path: Path, loopback: str, clone: Workspace) -> None:
    """The page test on a page with a stale output: it finds the difference, and the output
    it writes in its place is one that passes."""
    page = tmp_path / "page.md"
    page.write_text("```console\n$ toolcall faults\nnot what it prints\n```\n", encoding="utf-8")
    env = workspace_env(clone)
    outcome = Outcome()
    [command] = shown_commands(page)
    check(command, *ran(command, clone, env, loopback), clone, outcome)
    assert outcome.problems and "the output differs" in outcome.problems[0]
    rewrite(page, [command], outcome.rewrites)
    [again] = shown_commands(page)
    fresh = Outcome()
    check(again, *ran(again, clone, env, loopback), clone, fresh)
    assert fresh.problems == []


def test_the_set_up_commands_are_the_ones_ci_runs() -> None:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    # The first command makes a virtual environment: a distribution may refuse system pip.
    assert first_block[0].startswith("python3 -m venv .venv && . .venv/bin/activate && ")
    assert " && pip install . && toolcall run " in first_block[0]
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
