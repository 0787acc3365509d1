"""The trace: every event of a run as JSON lines, so a run can be read back or compared later."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import IO, Any

from toolcall_cli.events import Event


def event_record(event: Event) -> dict[str, Any]:
    """An event as a JSON-ready dict, `kind` first."""
    record = dataclasses.asdict(event)
    return {"kind": record.pop("kind"), **record}


class TraceWriter:
    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    @classmethod
    def open(cls, path: Path) -> TraceWriter:
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(path.open("a", encoding="utf-8"))

    def write(self, event: Event) -> None:
        # Flushed per event: an interrupted run keeps everything up to the interruption.
        self._stream.write(json.dumps(event_record(event), ensure_ascii=False, default=str) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
