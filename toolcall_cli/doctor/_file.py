"""Reading a trace file for the doctor: v1 (a header line first) or v0 (records only, as
`--trace` wrote before traces were versioned). Kept apart so trace.py's reader can replace it."""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEADER_KIND = "trace_header"
FORMAT_NAME = "toolcall-trace"
NEWEST_VERSION = 1


class TraceUnreadable(Exception):
    """The file is not a trace the doctor can read; the message says why in one line."""


@dataclass(frozen=True)
class TraceFile:
    """A trace as plain records: the header (empty for v0) and every event record after it."""

    path: Path
    version: int
    header: dict[str, Any] = field(default_factory=dict)
    records: tuple[dict[str, Any], ...] = ()
    cut_line: int | None = None
    """The number of a last line cut mid-write (dropped), if there was one."""


def read_trace_file(path: Path) -> TraceFile:
    """The trace at `path`. A last line cut mid-write is dropped and reported; anything else
    that is not a JSON object with a `kind` raises TraceUnreadable naming the line."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TraceUnreadable(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TraceUnreadable(f"{path} is not UTF-8 (byte offset {error.start})") from None
    # Lines end at "\n" only: splitlines() would also cut at a U+2028 inside a JSON string.
    numbered = enumerate(text.split("\n"), start=1)
    lines = [(n, line.rstrip("\r")) for n, line in numbered if line.strip()]
    records: list[dict[str, Any]] = []
    cut_line = None
    for position, (number, line) in enumerate(lines):
        record = _record(line)
        if record is None:
            # Only the last line may be cut short by a crash mid-write; earlier damage is not a
            # trace any more.
            if position == len(lines) - 1 and position > 0:
                cut_line = number
                break
            raise TraceUnreadable(f"{path}: line {number} is not a trace record")
        records.append(record)
    return _trace(path, records, cut_line)


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        return value
    return None


def _trace(path: Path, records: list[dict[str, Any]], cut_line: int | None) -> TraceFile:
    if not records:
        raise TraceUnreadable(f"{path} holds no trace records")
    header: dict[str, Any] = {}
    version = 0
    if records[0]["kind"] == HEADER_KIND:
        header = records.pop(0)
        version = header.get("version", -1)
        if header.get("format") != FORMAT_NAME or not isinstance(version, int) or version < 1:
            raise TraceUnreadable(f"{path}: the header is not a toolcall trace header")
        if version > NEWEST_VERSION:
            raise TraceUnreadable(
                f"{path} is trace format v{version}; this toolcall reads up to v{NEWEST_VERSION}"
            )
    if not any(record["kind"] == "run_started" for record in records):
        raise TraceUnreadable(f"{path} records no run (no run_started record)")
    return TraceFile(path, version, header, tuple(records), cut_line)


def traces_dir() -> Path:
    """Where traces are kept by default: TOOLCALL_STATE_DIR/traces when it is set, else the
    user state dir by platform conventions (~/.local/state/toolcall/traces on Linux)."""
    override = os.environ.get("TOOLCALL_STATE_DIR")
    if override:
        return Path(override) / "traces"
    try:
        # Not a dependency of every install: when absent, its Linux answer is used.
        platformdirs = importlib.import_module("platformdirs")
    except ImportError:
        state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(state) / "toolcall" / "traces"
    return Path(platformdirs.user_state_path("toolcall")) / "traces"


def latest_trace() -> Path | None:
    """The newest trace in traces_dir(), or None. Names are UTC timestamps, so the newest is
    the last by name."""
    folder = traces_dir()
    if not folder.is_dir():
        return None
    names = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
    return names[-1] if names else None
