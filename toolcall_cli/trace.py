"""The trace: every event of a run as JSON lines, so a run can be read back or compared later."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from toolcall_cli import strictjson
from toolcall_cli.events import (
    Event,
    IterationStarted,
    RunFinished,
    RunStarted,
    ToolCallParsed,
    event_record,
)


class TraceWriter:
    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self._iterations = 0
        self._tool_calls = 0

    @classmethod
    def open(cls, path: Path) -> TraceWriter:
        path.parent.mkdir(parents=True, exist_ok=True)
        # errors="replace": a stray surrogate in some text must not lose the rest of the trace.
        return cls(path.open("a", encoding="utf-8", errors="replace"))

    def interrupted(self) -> None:
        """Close an interrupted run's record with how far it got."""
        self.write(
            RunFinished(
                stop_reason="interrupted",
                iterations=self._iterations,
                tool_calls=self._tool_calls,
                elapsed=time.monotonic() - self._started,
            )
        )

    def write(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._started, self._iterations, self._tool_calls = time.monotonic(), 0, 0
        elif isinstance(event, IterationStarted):
            self._iterations = event.iteration
        elif isinstance(event, ToolCallParsed):
            self._tool_calls += 1
        # Flushed per event: an interrupted run keeps everything up to the interruption.
        self._stream.write(strictjson.dumps(event_record(event)) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
