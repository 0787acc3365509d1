"""The trace: every event of a run as JSON lines, so a run can be read back or compared later."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import IO, Any

from toolcall_cli.events import Event, IterationStarted, RunFinished, RunStarted, ToolCallParsed
from toolcall_cli.private_files import open_private


def event_record(event: Event) -> dict[str, Any]:
    """An event as a JSON-ready dict, `kind` first."""
    record = dataclasses.asdict(event)
    return {"kind": record.pop("kind"), **record}


class TraceWriter:
    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self._iterations = 0
        self._tool_calls = 0

    @classmethod
    def open(cls, path: Path) -> TraceWriter:
        """Append to `path`, owner-only; raises PathProblem (naming the path and why) when it
        cannot be written, so the run never starts."""
        fd = open_private(path, "trace file")
        # errors="replace": a stray surrogate in some text must not lose the rest of the trace.
        return cls(os.fdopen(fd, "a", encoding="utf-8", errors="replace"))

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
        self._stream.write(json.dumps(event_record(event), ensure_ascii=False, default=str) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
