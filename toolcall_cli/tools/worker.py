"""The worker process of an isolated tool call (see isolated.py), never imported by toolcall:
`python -m toolcall_cli.tools.worker --request-fd R --answer-fd A` reads the call as JSON on R,
runs it in a sandbox (sandbox.py), and writes {"failure", "text"} as JSON on A."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

from toolcall_cli.tools.sandbox import (
    Handlers,
    apply_limits,
    child_wakeup,
    contain,
    die_with_keeper,
    drop_capabilities,
    ignore_signals,
    keep,
    own_proc,
    restore_signals,
    set_dumpable,
)

if TYPE_CHECKING:
    from toolcall_cli.tools._outcome import Outcome

PROCESSES = 1024
"""Processes and threads together that one call may have at once (where the kernel counts them
per sandbox: in its own user namespace, for a user other than root)."""


def main(argv: list[str] | None = None) -> None:
    # Not argparse: toolcall alone writes this command line, and every call pays for imports.
    given = sys.argv[1:] if argv is None else argv
    options = dict(zip(given[::2], given[1::2], strict=True))
    request_fd, answer_fd = int(options["--request-fd"]), int(options["--answer-fd"])
    with os.fdopen(request_fd, "rb") as requests:
        request = json.loads(requests.read())
    sys.path[:] = [str(p) for p in request.get("path", sys.path)]
    if not hasattr(os, "fork"):  # no sandbox to keep here: the call runs in this process
        limit(request, count_processes=False)
        answer(answer_fd, run(request["target"], request["arguments"]))
        return
    end_as(keep_call(request, answer_fd))


def keep_call(request: dict[str, Any], answer_fd: int) -> int:
    """Fork the tool's process into its sandbox (namespaces of its own under a small init where
    the machine allows, else as its subreaper) and keep it until it ends or toolcall closes our
    stdin (the call's timeout, a cancel, toolcall's own end); then end all it left. Its exit
    code (negative: the signal that ended it)."""
    handlers = ignore_signals()
    namespaces = bool(request.get("namespaces", True))
    containment, _ = contain(namespace=namespaces, network=False, root_inside=0)
    wakeup = child_wakeup()
    alive_read, alive_write = os.pipe()  # EOF here: the keeper is gone
    told_read, told_write = os.pipe()  # how the tool's process ended, from the namespace's init
    pid = os.fork()
    if pid == 0:
        for fd in (alive_write, wakeup, told_read):
            os.close(fd)
        namespace = containment == "namespace"
        sandboxed = Sandboxed(request, answer_fd, handlers, namespace)
        if namespace:
            init(sandboxed, alive_read, told_write)
        os.close(told_write)  # the keeper is our parent: it sees how we end
        call_in_sandbox(sandboxed, alive_read)
    for fd in (alive_read, told_write, answer_fd):  # EOF on toolcall's end of the answer pipe
        os.close(fd)  # once the tool and all it started have ended
    code = keep(pid, containment, 0, wakeup)
    with os.fdopen(told_read, "rb") as told:
        ended = told.read()
    return int(ended) if ended.strip(b"-").isdigit() else code


@dataclass(frozen=True)
class Sandboxed:
    """What the tool's process needs from its keeper."""

    request: dict[str, Any]
    answer_fd: int
    handlers: Handlers
    """The signal handlers Python had before the keeper ignored them."""
    namespace: bool


def init(sandboxed: Sandboxed, keeper_alive: int, told: int) -> NoReturn:
    """PID 1 of the namespace: the /proc, then the tool's process as its child, whose orphans
    it reaps; when the tool's process ends, it says how on `told` and ends, and the kernel ends
    every process left in the namespace. The tool's process is an ordinary one that way: a
    signal it sends itself (SIGTERM, an alarm) acts as anywhere, where PID 1 would ignore it."""
    try:
        os.setsid()
        outlive_no_keeper(keeper_alive)
        restore_signals()  # PID 1 takes no signal from inside the namespace all the same
        own_proc()
        drop_capabilities()  # before the tool's process starts: it inherits none
        pid = os.fork()
        if pid == 0:
            os.close(told)
            call_in_sandbox(sandboxed, None)
        os.close(sandboxed.answer_fd)
        while True:
            ended, status = os.wait()  # a signal from inside cannot stop PID 1
            if ended == pid:
                os.write(told, str(os.waitstatus_to_exitcode(status)).encode())
                break
    finally:
        os._exit(0)


def outlive_no_keeper(keeper_alive: int) -> None:
    """Die with the keeper (see die_with_keeper), even if it died a moment ago."""
    die_with_keeper()
    if select.select([keeper_alive], [], [], 0)[0]:  # EOF: it died before we could ask
        os._exit(1)
    os.close(keeper_alive)


def call_in_sandbox(sandboxed: Sandboxed, keeper_alive: int | None) -> NoReturn:
    """The tool's process: a session of its own, the limits, no capabilities; then the call.
    Never returns."""
    code = 0
    try:
        os.setsid()
        if keeper_alive is not None:  # no namespace's init between the keeper and us
            outlive_no_keeper(keeper_alive)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # not the keeper's stdin: that pipe is how toolcall ends the call
        os.close(devnull)
        restore_signals(sandboxed.handlers)
        set_dumpable(True)  # its own /proc/self readable again; its keepers stay out of reach
        request = sandboxed.request
        limit(request, count_processes=sandboxed.namespace and os.geteuid() != 0)
        drop_capabilities()
        answer(sandboxed.answer_fd, run(request["target"], request["arguments"]))
    except BaseException:
        import traceback

        traceback.print_exc()  # into the call's output, like any traceback of the tool's
        code = 1
    finally:
        # At once, without waiting for threads the tool left: the call is over.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):  # a broken stream: nothing left to tell
                stream.flush()
        os._exit(code)


def answer(answer_fd: int, outcome: Outcome) -> None:
    failure = outcome.failure
    text = failure[1] if failure else outcome.text
    with os.fdopen(answer_fd, "w", encoding="utf-8") as answers:
        json.dump({"failure": failure is not None, "text": text}, answers, ensure_ascii=False)


def end_as(code: int) -> NoReturn:
    """Exit as the tool's process did: with its code, or killed by the same signal (which
    toolcall names in the call's error)."""
    if code < 0:
        with contextlib.suppress(ImportError, ValueError, OSError):
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the tool's crash, not ours
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        os._exit(128 - code)  # a signal that does not end a process
    os._exit(code)


def run(target: list[str], arguments: dict[str, Any]) -> Outcome:
    from toolcall_cli.tools._outcome import call_with, outcome_of

    # Finding the function runs the plugin's import: its failure is the tool's too.
    return outcome_of(lambda: call_with(function(target), arguments))


def function(target: list[str]) -> Callable[..., Any]:
    kind, where, name = target
    if kind == "file":
        from toolcall_cli.tools.loader import import_plugin

        # fresh: the file as it is now, which chat's hot reload may have just loaded anew.
        return cast(Callable[..., Any], getattr(import_plugin(Path(where), fresh=True), name))
    value: Any = importlib.import_module(where)
    for part in name.split("."):
        value = getattr(value, part)
    return cast(Callable[..., Any], value)


def limit(request: dict[str, Any], *, count_processes: bool) -> list[str]:
    """The call's hard limits (soft = hard: the tool cannot raise them back): its address space
    (past it, allocations fail with MemoryError), no core files, and its processes where the
    kernel counts them per sandbox. What holds, as text."""
    memory = int(request.get("memory_limit", 0))
    wanted = [("RLIMIT_CORE", 0, "no core files")]
    if memory > 0:
        wanted.append(("RLIMIT_AS", memory, f"{memory >> 20:,} MiB of address space"))
    if count_processes:
        wanted.append(("RLIMIT_NPROC", PROCESSES, f"{PROCESSES:,} processes and threads"))
    return apply_limits(wanted)


if __name__ == "__main__":
    main()
