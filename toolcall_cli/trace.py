"""The trace: every event of a run as JSON lines, so a run can be read back or compared later."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from toolcall_cli import strictjson
from toolcall_cli.events import Event, event_record
from toolcall_cli.private_files import open_private


class TraceWriter:
    """Appends each event as one line of strict JSON, flushed at once."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    @classmethod
    def open(cls, path: Path) -> TraceWriter:
        """Append to `path`, owner-only; raises PathProblem (naming the path and why) when it
        cannot be written, so the run never starts."""
        fd = open_private(path, "trace file")
        # errors="replace": a stray surrogate in some text must not lose the rest of the trace.
        return cls(os.fdopen(fd, "a", encoding="utf-8", errors="replace"))

    def write(self, event: Event) -> None:
        # Flushed per event: an interrupted run keeps everything up to the interruption.
        self._stream.write(strictjson.dumps(event_record(event)) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
