"""JSON lines: one object per event, `kind` first, for other programs to read."""

from __future__ import annotations

import dataclasses
import json
from contextlib import AbstractContextManager
from typing import IO, Any

from toolcall_cli.events import Event
from toolcall_cli.render.base import nothing_to_suspend


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as plain data, `kind` first (asdict keeps field order; this makes it sure)."""
    data = dataclasses.asdict(event)
    return {"kind": data.pop("kind"), **data}


def event_to_json(event: Event) -> str:
    # repr for anything JSON cannot hold: a tool's arguments are whatever the model sent.
    return json.dumps(event_to_dict(event), ensure_ascii=False, default=repr)


class JsonLinesRenderer:
    """Writes each event as one line of JSON and flushes it, so a reader sees steps live."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def handle(self, event: Event) -> None:
        self._stream.write(event_to_json(event) + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.flush()

    def suspended(self) -> AbstractContextManager[None]:
        return nothing_to_suspend()
