"""The sandbox a user's kata file runs in, and the small process that keeps it:
`python -m toolcall_cli.kata._keeper`, started by the judge (how it contains: tools/sandbox.py).

Its report pipe's first line says which containment holds, its last how the code's process
ended. It ignores every signal it can: the judge ends the sandbox by closing the keeper's stdin,
or by ending (which closes it too)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from dataclasses import dataclass
from typing import IO, Any

from toolcall_cli.tools.sandbox import (
    Containment,
    apply_limits,
    child_wakeup,
    contain,
    drop_privileges,
    ignore_signals,
    keep,
    own_proc,
    restore_signals,
    set_dumpable,
)

OPEN_FILES = 128
PROCESSES = 256
"""Processes and threads together (Linux counts both), in the sandbox's user namespace."""
FILE_BYTES = 64 << 20
"""The most a file the code writes may hold (what it prints included)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    cpu_seconds: int


def shield() -> None:
    """For the judge: out of the code's reach, as far as this platform allows."""
    ignore_signals()
    set_dumpable(False)


# --- the limits -------------------------------------------------------------------------------


def hard_limits(limits: Limits, count_processes: bool) -> list[tuple[str, int, str]]:
    """(resource name, value, how the report says it): each set as soft = hard."""
    wanted = [
        ("RLIMIT_AS", limits.memory_mb << 20, f"{limits.memory_mb:,} MiB of address space"),
        ("RLIMIT_CPU", limits.cpu_seconds, f"{limits.cpu_seconds} s of CPU"),
        ("RLIMIT_FSIZE", FILE_BYTES, f"{FILE_BYTES >> 20} MiB per file written"),
        ("RLIMIT_NOFILE", OPEN_FILES, f"{OPEN_FILES} open files"),
        ("RLIMIT_CORE", 0, "no core files"),
    ]
    if count_processes:
        wanted.append(("RLIMIT_NPROC", PROCESSES, f"{PROCESSES} processes and threads"))
    return wanted


# --- the keeper -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    pid: int
    containment: Containment
    network: bool
    """In a namespace with no network of its own (only a loopback that is down)."""
    proc: str
    """In a namespace: own, hidden or host."""
    limits: list[str]


def start(command: list[str], channel_fd: int, limits: Limits, namespace: bool) -> Sandbox | str:
    """The code's process started in its sandbox, or why it could not start."""
    root = os.geteuid() == 0
    containment, entered = contain(namespace=namespace, network=True)
    contained = containment == "namespace"
    count_processes = contained and not root  # the kernel never counts root's
    wanted = hard_limits(limits, count_processes)
    told_read, told_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: PID 1 of the namespace, where there is one
        os.close(told_read)
        child(command, channel_fd, wanted, contained, told_write)
    os.close(told_write)
    told = b""
    while chunk := os.read(told_read, 4096):  # EOF once the child has exec'd (or failed to)
        told += chunk
    os.close(told_read)
    last = (told.decode(errors="replace").splitlines() or ["{}"])[-1]  # an exec that failed
    reply = json.loads(last)  # writes its error after the report it wrote first
    if "error" in reply:
        os.waitpid(pid, 0)
        return str(reply["error"])
    network = entered == "network"
    return Sandbox(pid, containment, network, reply.get("proc", ""), reply.get("limits", []))


def child(
    command: list[str],
    channel_fd: int,
    wanted: list[tuple[str, int, str]],
    contained: bool,
    told: int,
) -> None:
    """Between fork and exec: a session, a /proc, the limits; then the runner. Never returns."""
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # not the keeper's stdin: that pipe is how the judge ends us
        proc = own_proc() if contained else ""
        restore_signals()
        if hasattr(signal, "SIGXFSZ"):  # past the file size, a write fails; no signal kills
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        held = apply_limits(wanted)
        drop_privileges()
        os.set_inheritable(channel_fd, True)
        os.write(told, json.dumps({"proc": proc, "limits": held}).encode() + b"\n")
        os.execv(command[0], command)
    except BaseException as error:
        failed = {"error": f"{type(error).__name__}: {error}"}
        os.write(told, json.dumps(failed).encode() + b"\n")
    finally:
        os._exit(127)


def describe(sandbox: Sandbox) -> str:
    if sandbox.containment == "namespace":
        proc = {
            "own": " and /proc",
            "hidden": " (and no /proc)",
            "host": " (but this machine shows it the host's /proc)",
        }[sandbox.proc or "host"]
        network = ", no network" if sandbox.network else ""
        return (
            f"sandbox: a PID namespace{proc} of its own{network}, no privileges: it cannot "
            "signal your processes, and every process it starts ends with the check"
        )
    if sandbox.containment == "subreaper":
        return (
            "sandbox: a session of its own; every process it leaves is killed at the end "
            "(no PID namespace on this machine: it runs as you, and could signal your processes)"
        )
    return (
        "sandbox: a session of its own, killed at the end (no PID namespace on this platform: "
        "a process that leaves the session can outlive the check)"
    )


def how_ended(code: int) -> str:
    """How a process ended, from its exit code (negative: the signal that killed it)."""
    if code >= 0:
        return f"exited (code {code})"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def tell(report: IO[str], **record: Any) -> None:
    report.write(json.dumps(record) + "\n")
    report.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="toolcall_cli.kata._keeper")
    parser.add_argument("--report-fd", type=int, required=True)
    parser.add_argument("--channel-fd", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--no-namespace", action="store_true")
    options = parser.parse_args(argv)
    ignore_signals()
    os.set_inheritable(options.report_fd, False)  # the judge's, never the code's
    report = os.fdopen(options.report_fd, "w", encoding="utf-8")
    wakeup = child_wakeup()
    command = [
        sys.executable, "-m", "toolcall_cli.kata._runner", "--channel-fd", str(options.channel_fd)
    ]  # fmt: skip
    limits = Limits(options.memory_mb, options.cpu_seconds)
    sandbox = start(command, options.channel_fd, limits, not options.no_namespace)
    os.close(options.channel_fd)  # the code's alone: EOF on the judge's end means it is gone
    if isinstance(sandbox, str):
        tell(report, problem=sandbox)
        os._exit(0)
    tell(report, sandbox=describe(sandbox), limits=sandbox.limits, pid=sandbox.pid)
    tell(report, ended=keep(sandbox.pid, sandbox.containment, 0, wakeup))
    os._exit(0)


if __name__ == "__main__":
    main()
