"""The CLI's files and streams: trace and history paths, their permissions, broken pipes, and
what a program reading `--json` learns when a run is interrupted.

Paths and permissions are checked through `main()` in the test process; broken pipes and a
trace on the process's own stderr need a real process."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from in_process import Finished, toolcall
from typer.testing import CliRunner

from toolcall_cli import cli
from toolcall_cli.app import _model_choice as model_choice
from toolcall_cli.cli import entry
from toolcall_cli.offline import OfflineModel
from toolcall_cli.wire import ModelRequest

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask there is, so only toolcall's own care keeps a file private."""
    old = os.umask(0)
    yield
    os.umask(old)


def one_error_line(done: Finished) -> str:
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("toolcall: error: ") and "Traceback" not in done.stderr
    return done.stderr


# --- where a trace or a history file may go ----------------------------------------------------


def bad_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Paths a confused user gives, and the words the error must use for each."""
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("", encoding="utf-8")
    return {
        "a directory": (tmp_path / "adir", "is a directory"),
        "a missing directory": (tmp_path / "no" / "such" / "dir" / "x", "does not exist"),
        "under a file": (tmp_path / "afile" / "x", "is not a directory"),
    }


@pytest.mark.parametrize("case", ["a directory", "a missing directory", "under a file"])
def test_a_trace_path_that_cannot_be_written_is_a_usage_error_before_the_run(
    tmp_path: Path, case: str
) -> None:
    path, why = bad_paths(tmp_path)[case]
    done = toolcall("run", "What's 2+2?", "--json", "--trace", str(path), cwd=tmp_path)
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(path) in line and why in line
    assert done.stdout == ""  # the run never started: not even its first event
    assert not (tmp_path / "no").exists()  # no directory tree left behind by a typo


@pytest.mark.parametrize("case", ["a directory", "a missing directory", "under a file"])
def test_a_history_file_that_cannot_be_used_is_a_usage_error_before_the_chat(
    tmp_path: Path, case: str
) -> None:
    path, why = bad_paths(tmp_path)[case]
    done = toolcall("chat", "--history-file", str(path), cwd=tmp_path, stdin="What's 2+2?\n")
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(path) in line and why in line
    assert "toolcall chat" not in done.stdout  # the chat never started
    assert not (tmp_path / "no").exists()


def test_a_file_that_is_not_a_trace_is_neither_appended_to_nor_made_private(
    tmp_path: Path,
) -> None:
    """`--trace notes.md` appended JSON lines to the user's notes and took their group and
    other permissions away."""
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n", encoding="utf-8")
    notes.chmod(0o644)
    done = toolcall("run", "What's 2+2?", "--json", "--trace", str(notes), cwd=tmp_path)
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(notes) in line and "something other than a trace file" in line
    assert done.stdout == ""  # decided before the run
    assert notes.read_text(encoding="utf-8") == "# my notes\n" and mode_of(notes) == 0o644
    # A trace, even one whose last line was cut, and an empty file are appended to.
    trace = tmp_path / "trace.jsonl"
    for _ in range(2):
        again = toolcall("run", "What's 2+2?", "-q", "--trace", str(trace), cwd=tmp_path)
        assert again.returncode == 0, again.stderr
    kinds = [json.loads(line)["kind"] for line in trace.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("trace_header") == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert toolcall("run", "hi", "-q", "--trace", str(empty), cwd=tmp_path).returncode == 0


def test_a_file_that_is_not_a_chat_history_is_left_alone(tmp_path: Path) -> None:
    """`chat --history-file notes.md` appended `# date` and `+question` lines to the notes."""
    notes = tmp_path / "notes.md"
    notes.write_text("my notes\n", encoding="utf-8")
    notes.chmod(0o644)
    done = toolcall("chat", "--history-file", str(notes), cwd=tmp_path, stdin="What's 2+2?\n")
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(notes) in line and "something other than a history file" in line
    assert notes.read_text(encoding="utf-8") == "my notes\n" and mode_of(notes) == 0o644
    history = tmp_path / "history"
    for _ in range(2):  # a history of its own is appended to
        again = toolcall("chat", "--history-file", str(history), "--no-trace", cwd=tmp_path,
                         stdin="What's 2+2?\n")  # fmt: skip
        assert again.returncode == 0, again.stderr
    assert history.read_text(encoding="utf-8").count("+What's 2+2?") == 2


def test_a_trace_file_that_cannot_be_appended_to_is_a_usage_error_not_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc/version opened, then failed to seek to its end (EINVAL): an internal error."""

    def unseekable(fd: int, *args: object, **kwargs: object) -> object:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr("os.fdopen", unseekable)  # nothing else of a run uses it
    path = tmp_path / "odd.jsonl"
    done = toolcall("run", "What's 2+2?", "--json", "--trace", str(path), cwd=tmp_path)
    assert done.returncode == 2
    line = one_error_line(done)
    assert f"cannot use {path} as the trace file: Invalid argument" in line
    assert done.stdout == ""


def test_a_trace_where_no_file_can_be_made_says_so(tmp_path: Path) -> None:
    """/proc takes no new file (ENOENT): it was said as `a link to a file that does not
    exist`."""
    from toolcall_cli.private_files import PathProblem, open_private

    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    with pytest.raises(PathProblem, match="no file can be made in /proc"):
        open_private(Path("/proc/toolcall-test.jsonl"), "trace file")
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "gone" / "x.jsonl")
    with pytest.raises(PathProblem, match="a link to a file that does not exist"):
        open_private(link, "trace file")


@pytest.mark.skipif(IS_ROOT, reason="root may write anywhere")
def test_an_unwritable_trace_file_is_a_usage_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked.jsonl"
    locked.write_text("", encoding="utf-8")
    locked.chmod(0o400)
    done = toolcall("run", "What's 2+2?", "--trace", str(locked), cwd=tmp_path)
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(locked) in line and "permission denied" in line.lower()


@pytest.mark.usefixtures("open_umask")
def test_a_trace_is_created_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = toolcall("run", "What's 2+2?", "--quiet", "--trace", str(trace), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert mode_of(trace) == 0o600
    assert json.loads(trace.read_text(encoding="utf-8").splitlines()[-1])["kind"] == "run_finished"


def test_an_existing_trace_readable_by_others_is_tightened(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"kind": "earlier"}\n', encoding="utf-8")
    trace.chmod(0o644)
    done = toolcall("run", "What's 2+2?", "--quiet", "--trace", str(trace), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert mode_of(trace) == 0o600
    assert trace.read_text(encoding="utf-8").startswith('{"kind": "earlier"}\n')  # appended to


def test_a_trace_may_go_to_a_pipe(tmp_path: Path) -> None:
    """`--trace /dev/stderr` (or a process substitution) is not a regular file: written to, and
    its permissions left alone."""
    args = ["run", "What's 2+2?", "--quiet", "--trace", "/dev/stderr"]
    done = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    kinds = [json.loads(line)["kind"] for line in done.stderr.splitlines()]
    assert kinds[:2] == ["trace_header", "run_started"] and kinds[-1] == "run_finished"


# --- broken pipes --------------------------------------------------------------------------------


def with_reader_gone(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run toolcall with stdout a pipe whose reader has already left, as `| head -1` leaves it
    once head has its line (closed before the start, so the outcome never depends on timing)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "toolcall_cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            timeout=60,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ["faults"],
        ["tools"],
        ["tools", "get_weather"],
        ["run", "北京和上海明天天气分别是多少？"],
        ["run", "北京和上海明天天气分别是多少？", "--json"],
        ["run", "What's 12*5+3?", "--quiet"],
        ["prompt", "hi"],
        ["--help"],
        ["run", "--help"],
    ],
    ids=lambda args: " ".join(args),
)
def test_a_reader_that_leaves_early_gets_a_quiet_exit_141(tmp_path: Path, args: list[str]) -> None:
    done = with_reader_gone(*args, cwd=tmp_path)
    assert done.stderr == b""  # no "Exception ignored", no traceback, no error line
    assert done.returncode == entry.EXIT_OUTPUT_CLOSED == 141


def test_parse_with_its_reader_gone_exits_141(tmp_path: Path) -> None:
    source = tmp_path / "reply.txt"
    source.write_text('<tool_call>{"name": "f", "arguments": {}}</tool_call>', encoding="utf-8")
    done = with_reader_gone("parse", str(source), cwd=tmp_path)
    assert done.stderr == b"" and done.returncode == 141


def test_a_run_cut_off_by_a_broken_pipe_still_closes_its_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = with_reader_gone("run", "What's 2+2?", "--json", "--trace", str(trace), cwd=tmp_path)
    assert done.returncode == 141 and done.stderr == b""
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [r["kind"] for r in records[:2]] == ["trace_header", "run_started"]
    assert records[-2]["kind"] == "run_finished" and records[-2]["stop_reason"] == "interrupted"
    assert records[-1]["kind"] == "interrupted" and records[-1]["reason"] == "broken-pipe"


def test_the_shell_sees_141_from_a_pipe_to_head(tmp_path: Path) -> None:
    """The same through a real shell pipeline. The run writes megabytes, more than any pipe
    holds, so it is still writing when head leaves after its line, whatever the timing."""
    script = tmp_path / "long.jsonl"
    script.write_text(json.dumps("word " * 300_000) + "\n", encoding="utf-8")
    command = (
        f"{shlex.quote(sys.executable)} -m toolcall_cli run hi --json --model scripted"
        f" --script {shlex.quote(str(script))} | head -1 >/dev/null; echo $?:${{PIPESTATUS[0]}}"
    )
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.stderr == ""
    assert done.stdout.strip() == "0:141"  # head's status, then toolcall's


# --- Ctrl-C with --json ------------------------------------------------------------------------


class InterruptedOnSecondRequest:
    """The offline model, until the person presses Ctrl-C while the second request runs."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.requests = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.requests += 1
        if self.requests == 2:
            raise KeyboardInterrupt
        return self.inner.stream(request)


def test_ctrl_c_with_json_ends_stdout_and_the_trace_with_the_same_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = InterruptedOnSecondRequest()
    monkeypatch.setattr(model_choice, "get_model", lambda choice: model)
    trace = tmp_path / "trace.jsonl"
    result = CliRunner().invoke(cli.app, ["run", "What's 12*5+3?", "--json", "--trace", str(trace)])
    assert result.exit_code == 130
    assert result.stderr == "toolcall: interrupted\n"
    stdout_last = json.loads(result.stdout.splitlines()[-1])
    *_, trace_final, trace_last = trace.read_text(encoding="utf-8").splitlines()
    assert {**stdout_last, "t": ANY} == json.loads(trace_final)  # the trace adds the time
    assert json.loads(trace_last)["kind"] == "interrupted"
    assert stdout_last["kind"] == "run_finished" and stdout_last["stop_reason"] == "interrupted"
    # how far it got: one full iteration with its call, and the second begun
    assert (stdout_last["iterations"], stdout_last["tool_calls"]) == (2, 1)
    assert stdout_last["usage"]["total_tokens"] > 0  # what the first reply cost is not lost


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_trace_that_stops_taking_writes_stops_the_run_with_one_line(tmp_path: Path) -> None:
    """/dev/full opens like any file and fails every write, as a full disk does mid-run."""
    done = toolcall("run", "What's 2+2?", "--json", "--trace", "/dev/full", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "toolcall: error: cannot write the trace file /dev/full: No space left on device\n"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["faults"], ["run", "What's 2+2?", "--no-trace"]], ids=str)
def test_output_to_a_full_disk_is_one_error_line_not_a_bug(tmp_path: Path, args: list[str]) -> None:
    """`toolcall ... > out.txt` on a full disk: it said "internal error ... (a bug in toolcall)"."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "toolcall_cli", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr == "toolcall: error: cannot write: No space left on device\n"


def test_questions_on_a_pipe_are_answered_one_a_line_in_one_conversation(tmp_path: Path) -> None:
    asked = "What's 12*5+3?\n/strategy schema\nweather in Tokyo\n"
    done = toolcall(
        "chat", "--no-trace", "--history-file", str(tmp_path / "h"), cwd=tmp_path, stdin=asked
    )
    assert done.returncode == 0, done.stderr
    assert "you> What's 12*5+3?" in done.stdout and "12*5+3 = 63" in done.stdout
    assert "you> weather in Tokyo" in done.stdout and "Tokyo today" in done.stdout
    assert "strategy schema" in done.stdout  # the slash command took effect before the question
    assert (tmp_path / "h").read_text(encoding="utf-8").count("weather in Tokyo") == 1
    # the questions and their answers, nothing else: no terminal warning, no key hints
    assert done.stderr == ""
    assert "Ctrl-D" not in done.stdout and "/help" not in done.stdout
    assert done.stdout.startswith("you> What's 12*5+3?\n")


# --- files read whole: bounded, and read once ----------------------------------------------------


def toolcall_bounded(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`toolcall ARGS` in a process whose memory is bounded (2 GiB), as a small machine's is:
    a read without a bound dies there of MemoryError instead of taking the test machine's."""
    import resource

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "toolcall_cli", *args], capture_output=True, text=True,
        timeout=120, preexec_fn=bounded, env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["run", "hi", "--no-trace", "--system-prompt", "/dev/zero"], None),
        (["run", "hi", "--no-trace", "--model", "scripted", "--script", "/dev/zero"], None),
        (["run", "hi", "--no-trace"], {"TOOLCALL_CONFIG": "/dev/zero"}),
        (["eval", "/dev/zero"], None),
        (["parse", "/dev/zero"], None),
        (["kata", "check", "/dev/zero", "--kata", "parse"], None),
    ],
    ids=["system-prompt", "script", "config", "eval", "parse", "kata"],
)
def test_a_file_read_whole_that_never_ends_is_one_line_not_a_memory_error(
    args: list[str], env: dict[str, str] | None
) -> None:
    """/dev/zero (or a disk image named by mistake) was read whole: `internal error:
    MemoryError`, or a script that read on for ever."""
    done = toolcall_bounded(*args, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "/dev/zero" in done.stderr
    assert "MiB: is it the file you meant?" in done.stderr


def test_a_script_in_a_pipe_is_read_once(tmp_path: Path) -> None:
    """`--script <(...)`: telling a trace from a script of replies read the pipe, and loading
    it found it empty ("holds no replies")."""
    for script in ('"hello there"\n', json.dumps(["hello there"])):
        done = subprocess.run(
            [sys.executable, "-m", "toolcall_cli", "run", "hi", "-q", "--no-trace",
             "--model", "scripted", "--script", "/dev/stdin"],
            input=script, capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, "hello there\n"), done.stderr
    trace = tmp_path / "run.jsonl"
    assert (
        toolcall("run", "What is 2+3?", "-q", "--trace", str(trace), cwd=tmp_path).returncode == 0
    )
    again = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "run", "What is 2+3?", "-q", "--no-trace",
         "--model", "scripted", "--script", "/dev/stdin"],
        input=trace.read_text(encoding="utf-8"), capture_output=True, text=True, timeout=60,
        cwd=tmp_path,
    )  # fmt: skip
    assert (again.returncode, again.stdout) == (0, "2+3 = 5\n"), again.stderr


POEM_TOOL = '''
from toolcall_cli import tool


@tool
def poem(topic: str) -> str:
    """A short poem about a topic, in Markdown."""
    print("rhyming  ")
    return f"Roses on {topic}  \\nViolets  \\nend"
'''


def test_piped_output_keeps_the_hard_breaks_of_an_answer_and_a_result(tmp_path: Path) -> None:
    """Two spaces ending a line are a Markdown hard break: `run` piped (plain or --quiet) and
    `trace show` piped keep the model's and the tool's, and add none of their own."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "poem.py").write_text(POEM_TOOL, "utf-8")
    replies = [
        '<tool_call>{"name": "poem", "arguments": {"topic": "sea"}}</tool_call>',
        "Here it is:  \nRoses on sea  \nViolets",
    ]
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join(json.dumps(r) for r in replies), "utf-8")
    flags = ("--model", "scripted", "--script", str(script), "--tools", str(tmp_path / "tools"))
    trace = tmp_path / "run.jsonl"
    plain = toolcall("run", "a poem", *flags, "--trace", str(trace), cwd=tmp_path)
    quiet = toolcall("run", "a poem", *flags, "--quiet", "--no-trace", cwd=tmp_path)
    shown = toolcall("trace", "show", str(trace), cwd=tmp_path)
    assert plain.returncode == quiet.returncode == shown.returncode == 0, shown.stderr
    assert quiet.stdout.splitlines() == ["Here it is:  ", "Roses on sea  ", "Violets"]
    answer = {"    Here it is:  ", "    Roses on sea  "}  # the live view's answer is boxed
    assert answer <= {*plain.stdout.splitlines()}, plain.stdout
    for out in (plain.stdout, shown.stdout):
        lines = out.splitlines()
        assert {"    Violets  ", "      rhyming  "} <= {*lines}, out
        written = ("Here it is:  ", "Roses on sea  ", "Violets  ", "rhyming  ")
        own = [line for line in lines if line != line.rstrip() and not line.endswith(written)]
        assert own == [], own
