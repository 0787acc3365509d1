"""A tool call in a worker process of its own: killed at its timeout, and whatever the tool does
there (os._exit, a crash, memory without end) ends as an error result while toolcall goes on.

The worker is a fresh interpreter (`python -m toolcall_cli.tools.worker`), not a
multiprocessing child: those re-run the program's main module and unpickle the call, and a
plugin's function cannot be pickled. The worker gets the call as JSON on stdin, imports the
plugin by its file path, and answers as JSON on a pipe of its own; everything it prints, and
whatever its own subprocesses write, lands in a file kept as the call's output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import IO, Any

from toolcall_cli.tools.capture import CapturedOutput
from toolcall_cli.tools.executor import _Outcome
from toolcall_cli.tools.registry import Tool

MEMORY_LIMIT_BYTES = 2 << 30
"""Address space a worker may use (where the platform can limit it): past it, allocations fail
with MemoryError, so a runaway tool ends as an error result, not as the machine's memory."""


def start_isolated(
    tool: Tool,
    arguments: dict[str, Any],
    output: CapturedOutput,
    report: Callable[[_Outcome], None],
) -> Callable[[], None]:
    """Start the call in a worker; `report` gets its outcome. Returns what kills the worker."""
    answer_read, answer_write = os.pipe()
    printed = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the thread that waits
    try:
        worker = subprocess.Popen(
            [sys.executable, "-m", "toolcall_cli.tools.worker", str(answer_write)],
            stdin=subprocess.PIPE,
            stdout=printed,
            stderr=printed,
            pass_fds=(answer_write,),
            # A session (and process group) of its own: killing the call kills what the tool
            # started too, and the terminal's Ctrl-C is toolcall's to handle, not the tool's.
            start_new_session=True,
        )
    except OSError as error:
        os.close(answer_read)
        os.close(answer_write)
        printed.close()
        outcome = _Outcome()
        outcome.failure = ("tool_error", f"the tool's worker process could not start: {error}")
        report(outcome)
        return lambda: None
    os.close(answer_write)  # the worker holds its end: EOF on ours means it is gone
    request: dict[str, Any] = {
        "target": target_of(tool),
        "arguments": arguments,
        "path": sys.path,
        "memory_limit": MEMORY_LIMIT_BYTES,
    }

    def wait() -> None:
        outcome = _Outcome()
        try:
            outcome = _converse(worker, request, answer_read, printed, output)
        finally:
            report(outcome)

    threading.Thread(target=wait, name=f"isolated:{tool.name}", daemon=True).start()

    def kill() -> None:
        kill_group(worker)
        worker.wait()

    return kill


def kill_group(worker: subprocess.Popen[bytes]) -> None:
    """Kill the worker and every process it started (its process group, where the platform
    has them): a tool's own children would otherwise run on, orphaned, after its call ended."""
    if hasattr(os, "killpg"):
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except ProcessLookupError:  # the group is gone: the worker and all it started ended
            pass
        except PermissionError:  # a child that left the group and changed user: not ours
            pass
        return
    if worker.poll() is None:
        worker.kill()


def target_of(tool: Tool) -> list[str]:
    """How the worker finds the function: a plugin by its file, code by its module."""
    name = getattr(tool.func, "__name__", tool.name)
    if tool.source:
        return ["file", tool.source, name]
    return ["module", tool.func.__module__, getattr(tool.func, "__qualname__", name)]


def _converse(
    worker: subprocess.Popen[bytes],
    request: dict[str, Any],
    answer_read: int,
    printed: IO[bytes],
    output: CapturedOutput,
) -> _Outcome:
    outcome = _Outcome()
    try:
        assert worker.stdin is not None
        try:
            worker.stdin.write(json.dumps(request, ensure_ascii=False).encode())
            worker.stdin.close()
        except OSError:  # it is already gone; its exit code will say how
            pass
        with os.fdopen(answer_read, "rb") as answers:
            answer = answers.read()  # until the worker ends (or is killed)
        worker.wait()
        printed.seek(0)
        output.write(printed.read(output_limit()).decode("utf-8", errors="replace"))
    finally:
        printed.close()
    try:
        message = json.loads(answer) if answer else None
    except ValueError:
        message = None
    if isinstance(message, dict) and isinstance(message.get("text"), str):
        if message.get("failure"):
            outcome.failure = ("tool_error", message["text"])
        else:
            outcome.text = message["text"]
        return outcome
    outcome.failure = ("tool_error", ended_without_result(worker.returncode))
    return outcome


def output_limit() -> int:
    from toolcall_cli.tools.capture import MAX_OUTPUT_CHARS

    return MAX_OUTPUT_CHARS * 4


def ended_without_result(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the tool's process was killed by {name} before it returned a result"
    return f"the tool's process ended (exit code {exitcode}) before it returned a result"
