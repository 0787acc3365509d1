"""JSON lines: one object per event, `kind` first, for other programs to read."""

from __future__ import annotations

from typing import Any

from toolcall_cli import strictjson
from toolcall_cli.events import Event, ModelChunk, event_record
from toolcall_cli.render.base import LineWriter


def event_to_json(event: Event) -> str:
    """One line of strict JSON (see strictjson: never NaN, repr for what JSON cannot hold)."""
    return strictjson.dumps(event_record(event))


class JsonLinesRenderer(LineWriter):
    """Writes each event as one line of JSON. The model's raw chunks (`model_chunk`) are left to
    the trace."""

    def handle(self, event: Event) -> None:
        if isinstance(event, ModelChunk):
            return  # the raw wire chunks are the trace's; the deltas above say what they held
        self._write(event_to_json(event))

    def record(self, data: dict[str, Any]) -> None:
        """A line that is no event (an --explain note), written the same way."""
        self._write(strictjson.dumps(data))
