"""The pieces of a sandbox for code toolcall runs but does not trust: an isolated tool's call
(worker.py) and a kata file under `kata check` (kata/_keeper.py). A keeper process holds the
code's process, contained as strongly as the machine allows (see Containment), under limits set
hard (soft = hard), so that the code cannot raise them back."""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

Containment = Literal["namespace", "subreaper", "session"]
"""What ends every process the code starts, strongest first. "namespace": the code runs in PID,
user and mount namespaces of its own, with its own /proc: it cannot see or signal a process
outside, and when the namespace's PID 1 ends, the kernel ends every process in it, however it
detached (setsid, a double fork). "subreaper" (Linux without them): what the code leaves behind
is reparented to its keeper, which kills it all. "session" (elsewhere): its session is killed."""

IGNORED_SIGNALS = (
    "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM",
    "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGVTALRM", "SIGPROF",
)  # fmt: skip
"""What a keeper ignores: the code it keeps must not end it."""

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 3, 4, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 36, 38
LAST_CAPABILITY = 63
CAPABILITY_VERSION_3 = 0x20080522
NOBODY = 65534
SWEEP_SECONDS = 5.0
"""The longest a subreaper spends killing what was left behind."""


def libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


Handlers = dict[int, Any]


def ignore_signals() -> Handlers:
    """Ignore every signal in IGNORED_SIGNALS; the handlers there were before."""
    before: Handlers = {}
    for name in IGNORED_SIGNALS:
        if hasattr(signal, name):
            number = getattr(signal, name)
            before[number] = signal.signal(number, signal.SIG_IGN)
    return before


def restore_signals(before: Handlers | None = None) -> None:
    """In the code's process: the handlers there were before its keeper changed them (`before`,
    for code forked without an exec: Python's own, as KeyboardInterrupt on SIGINT), else the
    default action (for code about to exec, which keeps an ignored signal ignored)."""
    for name in (*IGNORED_SIGNALS, "SIGCHLD"):
        if hasattr(signal, name):
            number = getattr(signal, name)
            handler = signal.SIG_DFL if before is None else before.get(number, signal.SIG_DFL)
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
    wakeup = signal.set_wakeup_fd(-1)
    if wakeup >= 0:  # the keeper's (see child_wakeup): nothing for the code to write to
        os.close(wakeup)


# --- out of reach: dumpable ---------------------------------------------------------------------


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


_undumpable_lock = threading.Lock()
_undumpable_holders = 0
_dumpable_before = False


def hold_undumpable() -> None:
    """Keep this process out of the sandboxed code's reach (see set_dumpable) until every
    holder has called release_undumpable: sandboxes may overlap (isolated calls in parallel)."""
    global _undumpable_holders, _dumpable_before
    with _undumpable_lock:
        if _undumpable_holders == 0:
            _dumpable_before = set_dumpable(False)
        _undumpable_holders += 1


def release_undumpable() -> None:
    global _undumpable_holders
    with _undumpable_lock:
        _undumpable_holders -= 1
        if _undumpable_holders == 0 and _dumpable_before:
            set_dumpable(True)


@contextlib.contextmanager
def undumpable() -> Iterator[None]:
    """This process out of the code's reach while a sandbox runs (see set_dumpable)."""
    hold_undumpable()
    try:
        yield
    finally:
        release_undumpable()


# --- the namespaces ---------------------------------------------------------------------------


def enter_namespaces(*, network: bool, root_inside: int = NOBODY) -> str:
    """User, PID and mount namespaces for the caller's next child (the caller stays in the
    host's PID namespace, out of the code's sight), where Linux allows unprivileged ones.
    `network`: a network namespace too, where it can (the code gets no network).

    The caller's user keeps its id inside, except root, which becomes `root_inside`.
    Returns "network" (with a network namespace), "host network" (without) or "" (none)."""
    if not sys.platform.startswith("linux"):
        return ""
    uid, gid = os.geteuid(), os.getegid()
    kinds = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS
    if network and libc().unshare(kinds | CLONE_NEWNET) == 0:
        entered = "network"
    elif libc().unshare(kinds) == 0:
        entered = "host network"
    else:
        return ""
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid or root_inside} {uid} 1"),
        ("gid_map", f"{gid or root_inside} {gid} 1"),
    ):
        # FileNotFoundError: an old kernel without setgroups, nothing to deny.
        path = f"/proc/self/{name}"
        with contextlib.suppress(FileNotFoundError), open(path, "w", encoding="ascii") as map_file:
            map_file.write(text)
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
    at all (the host's would show every process the code could reach through /proc/PID/mem).
    Returns "own", "hidden" or "host"."""
    plain = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if mount("proc", "/proc", "proc", plain):
        return "own"
    if mount("tmpfs", "/proc", "tmpfs", plain, "size=4k,mode=555"):
        return "hidden"
    return "host"


def become_subreaper() -> bool:
    """Orphans of our descendants become our children (Linux), for `sweep_children` to end."""
    if not sys.platform.startswith("linux"):
        return False
    return bool(libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def contain(
    *, namespace: bool = True, network: bool, root_inside: int = NOBODY
) -> tuple[Containment, str]:
    """For a keeper, before it forks the code's process: the strongest containment this
    machine allows (`namespace` False: never a namespace), and the namespaces entered (see
    enter_namespaces). Leaves the keeper undumpable."""
    entered = enter_namespaces(network=network, root_inside=root_inside) if namespace else ""
    set_dumpable(False)  # after writing the id maps, which needs /proc/self to be ours
    if entered:
        return "namespace", entered
    return ("subreaper" if become_subreaper() else "session"), ""


def die_with_keeper() -> None:
    """In the code's process: the kernel kills it if its keeper dies (Linux). Without it, PID 1
    of a namespace would outlive a keeper that was killed, and with it every process inside."""
    if sys.platform.startswith("linux"):
        libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# --- privileges and limits --------------------------------------------------------------------


def drop_privileges() -> None:
    """In the child, before exec: no capability survives the exec (root included, so the
    hard limits hold), and nothing it runs can gain one (setuid programs)."""
    if not sys.platform.startswith("linux"):
        return
    call = libc().prctl
    for capability in range(LAST_CAPABILITY + 1):
        call(PR_CAPBSET_DROP, capability, 0, 0, 0)  # EINVAL past the last one: harmless
    call(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


class _CapabilityHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapabilitySets(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> None:
    """In a child that runs the code without an exec: every capability gone now (root's
    CAP_SYS_RESOURCE would raise a hard limit; a namespace's CAP_SYS_ADMIN would unmount its
    /proc), none to be had by what it runs later (see drop_privileges)."""
    if not sys.platform.startswith("linux"):
        return
    drop_privileges()
    capset = getattr(libc(), "capset", None)
    if capset is not None:
        capset(ctypes.byref(_CapabilityHeader(CAPABILITY_VERSION_3, 0)), (_CapabilitySets * 2)())


def apply_limits(wanted: list[tuple[str, int, str]]) -> list[str]:
    """Set each (resource name, value, how to say it) hard: soft = hard, never above a hard
    limit already there. What holds, as text."""
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


# --- keeping the code's process ---------------------------------------------------------------


def child_wakeup() -> int:
    """For a keeper: a file descriptor that becomes readable when a child ends (and on any
    other signal), for select()."""
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    return wakeup_read


def keep(pid: int, containment: Containment, control: int, wakeup: int) -> int:
    """Wait until the code's process ends, or until `control` reaches EOF (its other end was
    closed: end the code now); then end whatever it left. Returns the code's exit code
    (negative: the signal that ended it)."""
    stopping = False
    while True:
        ready, _, _ = select.select([wakeup] if stopping else [control, wakeup], [], [])
        if wakeup in ready:
            os.read(wakeup, 4096)
        code = reap(pid)
        if code is not None:
            break
        if control in ready and not os.read(control, 4096):
            stopping = True
            end(pid, containment)
    if containment != "namespace":  # a namespace ended with its PID 1
        end(pid, containment)  # what it left in its session
        if containment == "subreaper":
            sweep_children()
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


def end(pid: int, containment: Containment) -> None:
    """Kill the code's process and, as far as the containment reaches, all it started."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if containment == "namespace":
            os.kill(pid, signal.SIGKILL)  # PID 1: the kernel ends the rest
        else:
            os.killpg(pid, signal.SIGKILL)  # its session's first process group


def sweep_children() -> None:
    """As a subreaper: kill and reap every process reparented to us, until none is left."""
    deadline = time.monotonic() + SWEEP_SECONDS
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] != 0:
                continue  # one reaped: look again before reading /proc
        except ChildProcessError:
            return  # none left (the common case: nothing was left behind)
        if time.monotonic() > deadline or not os.path.isdir("/proc/self"):
            return
        for pid in children(os.getpid()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


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
