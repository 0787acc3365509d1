"""How far a run got, read from its events: the final event for a run cut off (Ctrl-C, stdout's
reader leaving, a crash) before the loop could send its own."""

from __future__ import annotations

import time

from toolcall_cli.events import (
    Event,
    IterationStarted,
    ModelReplied,
    RunFinished,
    RunStarted,
    ToolCallParsed,
)


class RunProgress:
    """Counts a run's iterations, calls and tokens as its events pass."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._iterations = 0
        self._tool_calls = 0
        self._usage: dict[str, int] = {}
        self.finished = False
        """Whether the run sent its own RunFinished (then there is nothing to make up)."""

    def add(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._started = time.monotonic()
        elif isinstance(event, IterationStarted):
            self._iterations = event.iteration
        elif isinstance(event, ToolCallParsed):
            self._tool_calls += 1
        elif isinstance(event, ModelReplied):
            for key, value in event.usage.items():
                self._usage[key] = self._usage.get(key, 0) + value
        elif isinstance(event, RunFinished):
            self.finished = True

    def interrupted(self) -> RunFinished:
        return RunFinished(
            stop_reason="interrupted",
            iterations=self._iterations,
            tool_calls=self._tool_calls,
            elapsed=time.monotonic() - self._started,
            usage=dict(self._usage),
        )
