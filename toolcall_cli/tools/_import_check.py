"""Chat's reload tries each changed plugin file in a child process before importing it into the
chat: a file edited to hang, to exit or to crash at import costs only its own reload.

The child is a fresh interpreter (`python -m toolcall_cli.tools._import_check REQUEST`) that loads
the file as the chat would, under the same guard, and answers one JSON line on its stdout:
{"problem": null} when the file loads, or the phrase the warning line uses. A child that says
nothing is judged by how it ended: killed past the deadline, an exit code, a signal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from toolcall_cli.tools._plugin_guard import IMPORT_DEADLINE

START_GRACE = 5.0
"""Seconds a child is given beyond the deadline before it is killed: its interpreter's start,
and a hang the child's own guard could not break (C code, a plugin that swallows the alarm)."""


def check_imports(
    paths: Sequence[Path], *, deadline: float = IMPORT_DEADLINE, grace: float = START_GRACE
) -> dict[Path, str | None]:
    """Each file's problem at import, or None when it loads (or could not be tried: a child
    that cannot start leaves the file to the in-process guard). The files are tried at once,
    each in its own child; the children are gone when this returns, or when Ctrl-C stops it."""
    children = {path: _start(path, deadline) for path in paths}
    give_up = time.monotonic() + deadline + grace  # they all started just now
    verdicts: dict[Path, str | None] = {}
    try:
        for path, child in children.items():
            verdicts[path] = None if child is None else _verdict(child, deadline, give_up)
    finally:
        for child in children.values():
            if child is not None and child.returncode is None:
                _kill(child)
    return verdicts


def _start(path: Path, deadline: float) -> subprocess.Popen[bytes] | None:
    request = {"file": str(path), "deadline": deadline, "path": sys.path}
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "toolcall_cli.tools._import_check", json.dumps(request)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            # A session of its own: what the plugin starts can be killed with it, and the
            # terminal's Ctrl-C is the chat's to handle.
            start_new_session=True,
        )
    except OSError:
        return None


def _verdict(child: subprocess.Popen[bytes], deadline: float, give_up: float) -> str | None:
    try:
        # Never less than a moment: one that ended while another was awaited still has its say.
        answer, _ = child.communicate(timeout=max(give_up - time.monotonic(), 0.5))
    except subprocess.TimeoutExpired:
        _kill(child)
        return f"hung at import for more than {deadline:g} s"
    line = answer.split(b"\n", 1)[0]
    try:
        told = json.loads(line) if line else None
    except ValueError:
        told = None
    if isinstance(told, dict) and "problem" in told:
        problem = told["problem"]
        return problem if isinstance(problem, str) or problem is None else str(problem)
    return ended_at_import(child.returncode)


def ended_at_import(code: int | None) -> str:
    """How a child that never answered ended: `exited with code 3 at import`."""
    if code is not None and code < 0:
        from toolcall_cli.tools.isolated import signal_name

        return f"was killed by {signal_name(-code)} at import"
    return f"exited with code {code} at import"


def _kill(child: subprocess.Popen[bytes]) -> None:
    from toolcall_cli.tools.isolated import kill_group

    kill_group(child)  # before it is reaped: its process group's id cannot be anyone else's
    child.communicate()


# --- the child ------------------------------------------------------------------------------


def main() -> None:
    request = json.loads(sys.argv[1])
    # The answer goes to the stdout the parent reads; whatever the plugin prints, at any level
    # (print, os.write, its own subprocesses), goes nowhere.
    answers = os.fdopen(os.dup(1), "w", encoding="ascii")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    sys.path[:] = [str(entry) for entry in request["path"]]
    from toolcall_cli.tools.loader import load_plugin

    found = load_plugin(Path(request["file"]), fresh=True, deadline=float(request["deadline"]))
    answers.write(json.dumps({"problem": found if isinstance(found, str) else None}) + "\n")
    answers.flush()
    _end_all()


def _end_all() -> None:
    """End at once, with whatever the plugin started: its threads would keep an ordinary exit
    waiting, and its processes would outlive the check."""
    if hasattr(os, "killpg") and os.getpgid(0) == os.getpid():  # our own group: see _start
        os.killpg(0, signal.SIGKILL)
    os._exit(0)


if __name__ == "__main__":
    main()
