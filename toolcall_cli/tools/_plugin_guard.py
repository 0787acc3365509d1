"""A guard around a plugin's import in toolcall's own process: a hang past the deadline, an
os._exit, or a KeyboardInterrupt the plugin raises itself ends that plugin's import, not toolcall.

It holds what can be held in-process. A hang in C code that never returns to Python, or a crash
of the interpreter, cannot be: chat's reload tries each changed file in a child process first
(_import_check.py), and the start-up, which must stay fast, relies on this guard alone.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType, TracebackType
from typing import Any, NoReturn

IMPORT_DEADLINE = 10.0
"""Seconds a plugin file's import (with the building of its tools) may take before it is taken
for hung: far more than a plugin's imports need, short enough not to leave a start stuck."""

_RE_ALARM = 1.0
"""Seconds between further alarms after the deadline, for a plugin that swallowed the first."""


class ImportStopped(BaseException):
    """A plugin's import ended by the guard; its message is the phrase the warning line uses. A
    BaseException, so that a plugin's `except Exception:` does not swallow it."""


def _plugin_exit(status: int) -> NoReturn:
    """os._exit while a plugin imports: the plugin's exit, not toolcall's."""
    raise ImportStopped(f"called os._exit({status!r}) at import")


class ImportGuard:
    """`with ImportGuard(deadline):` around a plugin's import. The deadline and the telling of
    the user's Ctrl-C from a plugin's own KeyboardInterrupt need signals, so they hold on the
    main thread only (where toolcall loads and reloads plugins); os._exit is held anywhere."""

    def __init__(self, deadline: float = IMPORT_DEADLINE) -> None:
        self.deadline = deadline
        self.interrupted = False
        """True when the user pressed Ctrl-C while the guard was up: whatever the plugin made of
        the KeyboardInterrupt (its own, or one it swallowed), the loading must stop."""
        self._armed = False
        self._timer_set = False
        self._saved: dict[int, Any] = {}
        self._real_exit = os._exit

    def __enter__(self) -> ImportGuard:
        os._exit = _plugin_exit
        if threading.current_thread() is threading.main_thread():
            self._watch_interrupt()
            self._arm_alarm()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            self._armed = False  # first: an alarm due now raises nothing further
        finally:
            if self._timer_set:
                signal.setitimer(signal.ITIMER_REAL, 0)
                self._timer_set = False
            for number, handler in self._saved.items():
                signal.signal(number, handler)
            self._saved.clear()
            os._exit = self._real_exit

    def _watch_interrupt(self) -> None:
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):  # ignored, the default, or set outside Python: left alone
            return

        def on_interrupt(number: int, frame: FrameType | None) -> None:
            self.interrupted = True
            previous(number, frame)

        self._saved[signal.SIGINT] = signal.signal(signal.SIGINT, on_interrupt)

    def _arm_alarm(self) -> None:
        if not hasattr(signal, "setitimer") or self.deadline <= 0:
            return  # no interval timers here: the import is not bounded in-process
        if signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
            return  # someone else's alarm is running: it is left alone
        if signal.getsignal(signal.SIGALRM) is None:
            return

        def on_alarm(number: int, frame: FrameType | None) -> None:
            if self._armed:
                raise ImportStopped(f"hung at import for more than {self.deadline:g} s")

        self._saved[signal.SIGALRM] = signal.signal(signal.SIGALRM, on_alarm)
        self._armed = self._timer_set = True
        signal.setitimer(signal.ITIMER_REAL, self.deadline, _RE_ALARM)
