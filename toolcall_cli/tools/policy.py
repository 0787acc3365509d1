"""A tool's policy as the execution layer enforces it, before a call runs: the session's
permission level, and rate limits that hold across the session. Never left to the model."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from toolcall_cli.feedback import Problem
from toolcall_cli.tools.registry import PERMISSIONS, Permission, Tool

WINDOW = 60.0
"""Rate limits count the calls of the last minute."""


def permission_refusal(tool: Tool, allow: Permission) -> Problem | None:
    """Why the session may not run `tool`, or None when its --allow level reaches the tool's."""
    if PERMISSIONS.index(tool.permission) <= PERMISSIONS.index(allow):
        return None
    return Problem("permission", tool.name, given=tool.permission, allowed=(allow,))


class RateLimits:
    """Calls a minute, per tool, across a session: a call over its tool's limit is refused, with
    when the next one would be allowed (waiting could hold the whole run for a minute)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._calls: dict[str, deque[float]] = {}

    def refusal(self, tool: Tool) -> Problem | None:
        """None, and the call counted, when `tool` may run now; else why not."""
        if tool.rate_limit is None:
            return None
        now = self._clock()
        calls = self._calls.setdefault(tool.name, deque())
        while calls and calls[0] <= now - WINDOW:
            calls.popleft()
        if len(calls) < tool.rate_limit:
            calls.append(now)
            return None
        wait = calls[0] + WINDOW - now
        return Problem(
            "rate_limited", tool.name, given=f"{tool.rate_limit:g}", detail=f"{wait:.0f}"
        )
