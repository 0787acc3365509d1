"""Traces: every run recorded as JSON lines (the versioned format the README describes), then
read back, listed, found by id and shown again.

Public here: the names in `__all__` (each imported on first use), and the modules `files`
(where traces live, their names, pruning; it imports platformdirs, so it is imported on its own
where needed), `diff` and `script` (a recorded run as a replay model's script). Private:
`_shapes` (a record's shape checks) and `_progress`. `toolcall --help` imports none of this."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcall_cli.trace._progress import RunProgress
    from toolcall_cli.trace.reader import Trace, TraceError, read_trace, runs
    from toolcall_cli.trace.records import event_from_record
    from toolcall_cli.trace.writer import (
        FORMAT,
        VERSION,
        TraceWriteError,
        TraceWriter,
        trace_header,
    )

_HOMES = {
    "RunProgress": "_progress",
    "Trace": "reader",
    "TraceError": "reader",
    "read_trace": "reader",
    "runs": "reader",
    "event_from_record": "records",
    "FORMAT": "writer",
    "VERSION": "writer",
    "TraceWriteError": "writer",
    "TraceWriter": "writer",
    "trace_header": "writer",
}

__all__ = [
    "FORMAT",
    "VERSION",
    "RunProgress",
    "Trace",
    "TraceError",
    "TraceWriteError",
    "TraceWriter",
    "event_from_record",
    "read_trace",
    "runs",
    "trace_header",
]


def __getattr__(name: str) -> Any:
    # Each name's module is imported on first use: a run that writes a trace never loads the
    # reader and its shape checks, which only reading a trace back needs.
    if name not in _HOMES:
        raise AttributeError(f"module 'toolcall_cli.trace' has no attribute {name!r}")
    return getattr(import_module(f"toolcall_cli.trace.{_HOMES[name]}"), name)
