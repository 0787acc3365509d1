"""The sandbox a user's kata file runs in, and the small process that keeps it:
`python -m toolcall_cli.kata._keeper`, started by the judge, never imported by the CLI.

Where Linux lets a user make namespaces, the code runs as PID 1 of a PID namespace of its own,
with a /proc of its own, in a user namespace where it holds no privilege: it can neither see
nor signal a process outside, and when it ends the kernel ends every process it started,
however it detached (setsid, a double fork). Elsewhere on Linux the keeper is a child
subreaper: what the code leaves behind is reparented to the keeper, which kills it all.
Elsewhere still, the code's session is killed. The first line the keeper writes on its report
pipe says which holds, the last how the code's process ended.

Either way the code runs in a session of its own, with hard limits (soft = hard: it cannot raise
them back) on address space, CPU time, file size, open files and core files, and on processes
where the kernel counts them per sandbox. The keeper itself takes no signal it can ignore: the
judge ends the sandbox by closing the keeper's stdin, or by ending (which closes it too).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import select
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

IGNORED_SIGNALS = (
    "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM",
    "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGVTALRM", "SIGPROF",
)  # fmt: skip
"""What the judge and the keeper ignore: the code under check must not end them."""

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 3, 4, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 36, 38
LAST_CAPABILITY = 63
NOBODY = 65534
"""Who root is inside the user namespace: not uid 0 there, so it holds no capability."""
SWEEP_SECONDS = 5.0

OPEN_FILES = 128
PROCESSES = 256
"""Processes and threads together (Linux counts both), in the sandbox's user namespace."""
FILE_BYTES = 64 << 20
"""The most a file the code writes may hold (what it prints included)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    cpu_seconds: int


def libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def ignore_signals() -> None:
    for name in IGNORED_SIGNALS:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


def set_dumpable(dumpable: bool) -> bool:
    """Not dumpable: a process of the same user cannot read or write this one's memory
    (/proc/PID/mem), read its environment, nor trace it, without privileges the sandbox does
    not hold. Returns whether it was dumpable before."""
    if not sys.platform.startswith("linux"):
        return False
    call = libc().prctl
    before = bool(call(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1)
    call(PR_SET_DUMPABLE, int(dumpable), 0, 0, 0)
    return before


@contextlib.contextmanager
def undumpable() -> Iterator[None]:
    """The CLI out of the code's reach while a check runs (see set_dumpable)."""
    before = set_dumpable(False)
    try:
        yield
    finally:
        if before:
            set_dumpable(True)


def shield() -> None:
    """For the judge: out of the code's reach, as far as this platform allows."""
    ignore_signals()
    set_dumpable(False)


# --- the namespaces ---------------------------------------------------------------------------


def enter_namespaces() -> str:
    """User, PID, mount and (where it can) network namespaces for the keeper's next child,
    where Linux allows unprivileged ones: "network" (all four), "host network" (no network
    namespace) or "" (none). The keeper stays in the host's PID namespace, out of the code's
    sight."""
    if not sys.platform.startswith("linux"):
        return ""
    uid, gid = os.geteuid(), os.getegid()
    kinds = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS
    if libc().unshare(kinds | CLONE_NEWNET) == 0:
        entered = "network"
    elif libc().unshare(kinds) == 0:
        entered = "host network"
    else:
        return ""
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid or NOBODY} {uid} 1"),
        ("gid_map", f"{gid or NOBODY} {gid} 1"),
    ):
        try:
            with open(f"/proc/self/{name}", "w", encoding="ascii") as map_file:
                map_file.write(text)
        except FileNotFoundError:  # an old kernel without setgroups: nothing to deny
            pass
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # no mount here reaches the host
    return entered


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> bool:
    call = libc().mount
    call.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]

    def raw(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    return bool(call(raw(source), raw(target), raw(kind), flags, raw(data or None)) == 0)


def own_proc() -> str:
    """In the child, PID 1 of the new namespace: a /proc showing only the sandbox, else none
    at all (the host's would show every process the code could reach through /proc/PID/mem)."""
    plain = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if mount("proc", "/proc", "proc", plain):
        return "own"
    if mount("tmpfs", "/proc", "tmpfs", plain, "size=4k,mode=555"):
        return "hidden"
    return "host"


def become_subreaper() -> bool:
    """Orphans of our descendants become our children (Linux), for `sweep` to end."""
    if not sys.platform.startswith("linux"):
        return False
    return bool(libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def drop_privileges() -> None:
    """In the child, before exec: no capability survives the exec (root included, so the
    hard limits hold), and nothing it runs can gain one (setuid programs)."""
    if not sys.platform.startswith("linux"):
        return
    call = libc().prctl
    for capability in range(LAST_CAPABILITY + 1):
        call(PR_CAPBSET_DROP, capability, 0, 0, 0)  # EINVAL past the last one: harmless
    call(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


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


def apply_limits(wanted: list[tuple[str, int, str]]) -> list[str]:
    """Set each limit hard (never above a hard limit already there); what holds, as text."""
    try:
        import resource
    except ImportError:
        return []
    held: list[str] = []
    for name, value, text in wanted:
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
            held.append(text)
        except (ValueError, OSError):
            continue
    return held


# --- the keeper -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    pid: int
    containment: str
    """namespace, subreaper or session."""
    network: bool
    """In a namespace with no network of its own (only a loopback that is down)."""
    proc: str
    """In a namespace: own, hidden or host."""
    limits: list[str]


def start(command: list[str], channel_fd: int, limits: Limits, namespace: bool) -> Sandbox | str:
    """The code's process started in its sandbox, or why it could not start."""
    root = os.geteuid() == 0
    entered = enter_namespaces() if namespace else ""
    contained = bool(entered)
    set_dumpable(False)  # after writing the id maps, which needs /proc/self to be ours
    containment = "namespace" if contained else "subreaper" if become_subreaper() else "session"
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
        for name in (*IGNORED_SIGNALS, "SIGCHLD"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
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


def keep(sandbox: Sandbox, wakeup: int) -> int:
    """Wait until the code's process ends, or until the judge closes our stdin (then end it);
    then end whatever it left. Returns its exit code (negative: the signal that ended it)."""
    stopping = False
    while True:
        ready, _, _ = select.select([wakeup] if stopping else [0, wakeup], [], [])
        if wakeup in ready:
            os.read(wakeup, 4096)
        code = reap(sandbox.pid)
        if code is not None:
            break
        if 0 in ready and not os.read(0, 4096):
            stopping = True
            kill(sandbox)
    if sandbox.containment != "namespace":  # a namespace ended with its PID 1
        kill(sandbox)  # what it left in its session
        sweep(sandbox)
    return code


def reap(pid: int) -> int | None:
    """Reap every child that has ended; the code's exit code once it is among them."""
    code = None
    while True:
        try:
            ended, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return code
        if ended == 0:
            return code
        if ended == pid:
            code = os.waitstatus_to_exitcode(status)


def kill(sandbox: Sandbox) -> None:
    try:
        if sandbox.containment == "namespace":
            os.kill(sandbox.pid, signal.SIGKILL)  # PID 1: the kernel ends the rest
        else:
            os.killpg(sandbox.pid, signal.SIGKILL)  # its session's first process group
    except (ProcessLookupError, PermissionError):
        pass


def sweep(sandbox: Sandbox) -> None:
    if sandbox.containment == "subreaper":
        sweep_children()


def sweep_children() -> None:
    """As a subreaper: kill and reap every process reparented to us, until none is left."""
    if not os.path.isdir("/proc/self"):
        return
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        for pid in children(os.getpid()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.01)
        except ChildProcessError:
            return


def children(parent: int) -> list[int]:
    """The processes whose parent is `parent`, read from /proc."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry))
    return found


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
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
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
    tell(report, ended=keep(sandbox, wakeup_read))
    os._exit(0)


if __name__ == "__main__":
    main()
