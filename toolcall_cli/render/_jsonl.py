"""JSON lines: one object per event, `kind` first, for other programs to read."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import IO, Any

from toolcall_cli import strictjson
from toolcall_cli.events import Event, ModelChunk, event_record
from toolcall_cli.render.base import nothing_to_suspend


def event_to_json(event: Event) -> str:
    """One line of strict JSON (see strictjson: never NaN, repr for what JSON cannot hold)."""
    return strictjson.dumps(event_record(event))


class JsonLinesRenderer:
    """Writes each event as one line of JSON and flushes it, so a reader sees steps live. The
    model's raw chunks (`model_chunk`) are left to the trace."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def handle(self, event: Event) -> None:
        if isinstance(event, ModelChunk):
            return  # the raw wire chunks are the trace's; the deltas above say what they held
        self._stream.write(event_to_json(event) + "\n")
        self._stream.flush()

    def record(self, data: dict[str, Any]) -> None:
        """A line that is no event (an --explain note), written and flushed the same way."""
        self._stream.write(strictjson.dumps(data) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.flush()

    def suspended(self) -> AbstractContextManager[None]:
        return nothing_to_suspend()
