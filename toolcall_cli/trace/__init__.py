"""Traces: every run recorded as JSON lines (the versioned format the README describes), then
read back, listed, found by id and shown again.

`files` (where traces live, their names, pruning) imports platformdirs, so it is imported on its
own where needed; `toolcall --help` imports none of this.
"""

from __future__ import annotations

from toolcall_cli.trace.progress import RunProgress
from toolcall_cli.trace.reader import Trace, TraceError, read_trace, runs
from toolcall_cli.trace.records import event_from_record
from toolcall_cli.trace.writer import (
    FORMAT,
    VERSION,
    TraceWriteError,
    TraceWriter,
    trace_header,
)

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
