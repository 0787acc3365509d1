"""A tool call in a worker process of its own (`python -m toolcall_cli.tools.worker`): killed at
its timeout, and whatever the tool does there (os._exit, a crash, memory without end) ends as an
error result while toolcall goes on."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from toolcall_cli.tools._capture import MAX_OUTPUT_CHARS, CapturedOutput
from toolcall_cli.tools._outcome import Outcome, failed
from toolcall_cli.tools.registry import Tool
from toolcall_cli.tools.sandbox import hold_undumpable, release_undumpable

MEMORY_LIMIT_BYTES = 2 << 30
"""Address space a call may use (a hard limit, where the platform has one): past it,
allocations fail with MemoryError, so a runaway tool ends as an error result, not as the
machine's memory."""
ANSWER_BYTES = 64 << 20
"""The most a tool's answer may hold: past it, the call is ended (the rest would only be
toolcall's memory)."""
NAMESPACES = True
"""Run each call in namespaces of its own where the machine allows them (False: never, as on a
machine without them)."""
STOP_SECONDS = 5.0
"""How long the worker has to end the tool's processes once told to, before it is killed."""
PASSED_ENVIRONMENT = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "PYTHONPATH", "PYTHONHOME", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONDONTWRITEBYTECODE",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "SYSTEMROOT",
)  # fmt: skip
"""The environment an isolated tool gets, with the LC_* variables: an allow-list, so that no key
(OPENAI_API_KEY, a profile's key_env, a cloud token) reaches a tool that is not trusted."""
NAMED_ENVIRONMENT = "TOOLCALL_ISOLATED_ENV"
"""Names more variables an isolated tool gets (`WEATHER_API_KEY,HTTPS_PROXY`): the user's
choice, never a plugin's."""


def start_isolated(
    tool: Tool,
    arguments: dict[str, Any],
    output: CapturedOutput,
    report: Callable[[Outcome], None],
) -> Callable[[], None]:
    """Start the call in a worker; `report` gets its outcome. Returns what ends the call.

    A fresh interpreter, not a multiprocessing child: those re-run the program's main module and
    unpickle the call, and a plugin's function cannot be pickled. The call goes as JSON on one
    pipe and the answer comes back on another; all the tool (and any process it starts) prints
    lands in a file kept as the call's output."""
    request_read, request_write = os.pipe()
    answer_read, answer_write = os.pipe()
    printed = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the thread that waits
    command = [
        sys.executable, "-m", "toolcall_cli.tools.worker",
        "--request-fd", str(request_read), "--answer-fd", str(answer_write),
    ]  # fmt: skip
    try:
        worker = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,  # never written: closing it ends the call (see stop)
            stdout=printed,
            stderr=printed,
            pass_fds=(request_read, answer_write),
            env=worker_environment(),
            # A session (and process group) of its own: the terminal's Ctrl-C is toolcall's to
            # handle, not the tool's.
            start_new_session=True,
        )
    except OSError as error:
        for fd in (request_read, request_write, answer_read, answer_write):
            os.close(fd)
        printed.close()
        report(failed(f"the tool's worker process could not start: {error}"))
        return lambda: None
    os.close(request_read)
    os.close(answer_write)  # the worker holds its end: EOF on ours means the call is over
    # Where the machine gives the tool no /proc of its own, it would see ours: our environment
    # and memory hold the API key.
    hold_undumpable()
    request: dict[str, Any] = {
        "target": target_of(tool),
        "arguments": arguments,
        "path": sys.path,
        "memory_limit": MEMORY_LIMIT_BYTES,
        "namespaces": NAMESPACES,
    }

    def wait() -> None:
        outcome = Outcome()
        try:
            outcome = _converse(worker, request, request_write, answer_read, printed, output)
        finally:
            release_undumpable()
            report(outcome)

    threading.Thread(target=wait, name=f"isolated:{tool.name}", daemon=True).start()
    return lambda: stop(worker)


def worker_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The allow-list's variables (see PASSED_ENVIRONMENT), and those the user names."""
    named = set(re.split(r"[\s,]+", environ.get(NAMED_ENVIRONMENT, "")))
    return {
        name: value
        for name, value in environ.items()
        if name in PASSED_ENVIRONMENT or name.startswith("LC_") or name in named
    }


def stop(worker: subprocess.Popen[bytes]) -> None:
    """End the call: closing the worker's stdin tells it to end the tool's process and every
    process that one started; a worker that has not ended within STOP_SECONDS is killed."""
    if worker.stdin is not None:
        with contextlib.suppress(OSError):
            worker.stdin.close()
    try:
        worker.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        kill_group(worker)
        worker.wait()


def kill_group(worker: subprocess.Popen[bytes]) -> None:
    """Kill a process started in a session of its own, and the processes of its first group
    (a child that called setsid() is not among them: only a sandbox's keeper reaches those)."""
    if hasattr(os, "killpg"):
        # Lookup: the group is gone (the worker and all it started ended). Permission: a child
        # that left the group and changed user, not ours.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(worker.pid, signal.SIGKILL)
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
    request_write: int,
    answer_read: int,
    printed: IO[bytes],
    output: CapturedOutput,
) -> Outcome:
    try:
        # OSError: it is already gone; its exit code will say how.
        with contextlib.suppress(OSError), os.fdopen(request_write, "wb") as requests:
            requests.write(json.dumps(request, ensure_ascii=False).encode())
        answer = read_answer(answer_read)
        if answer is None:
            stop(worker)
        worker.wait()
        stop(worker)  # its stdin closed: nothing of ours stays open
        printed.seek(0)
        output.write(printed.read(MAX_OUTPUT_CHARS * 4).decode("utf-8", errors="replace"))
    finally:
        printed.close()
    if answer is None:
        mib = ANSWER_BYTES >> 20
        return failed(f"the tool's answer was over {mib} MiB; its process was killed")
    try:
        message = json.loads(answer) if answer else None
    except ValueError:
        message = None
    if isinstance(message, dict) and isinstance(message.get("text"), str):
        return failed(message["text"]) if message.get("failure") else Outcome(message["text"])
    return failed(ended_without_result(worker.returncode))


def read_answer(answer_read: int) -> bytes | None:
    """What the tool wrote on its answer pipe, read until the tool's process and all it started
    are gone (or killed); None once it passes ANSWER_BYTES."""
    parts: list[bytes] = []
    size = 0
    with os.fdopen(answer_read, "rb", buffering=0) as answers:
        while part := answers.read(1 << 16):
            size += len(part)
            if size > ANSWER_BYTES:
                return None
            parts.append(part)
    return b"".join(parts)


def ended_without_result(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        killer = signal_name(-exitcode)
        return f"the tool's process was killed by {killer} before it returned a result"
    return f"the tool's process ended (exit code {exitcode}) before it returned a result"


def signal_name(number: int) -> str:
    """`SIGKILL`, or `signal 77` for a number Python has no name for."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
