"""Reading a trace back: its header and records, the runs a chat trace holds, and the one-line
summary `toolcall trace list` shows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolcall_cli.trace.writer import FORMAT, VERSION

Record = dict[str, Any]

HEADER_KIND = "trace_header"


class TraceError(ValueError):
    """A file that cannot be read as a trace; the message names it and says why (one line)."""


@dataclass(frozen=True)
class Trace:
    path: Path
    header: Record | None
    """The first line of a v1 trace; None for a trace written before the format had one."""
    records: list[Record] = field(default_factory=list)
    """Every line after the header, in order."""
    cut_line: int | None = None
    """The number of a last line cut mid-write (a crash, a full disk), which was left out."""

    @property
    def cut(self) -> bool:
        """The last line was cut mid-write and was left out."""
        return self.cut_line is not None

    @property
    def version(self) -> int:
        """The format's version: 0 for a headerless trace (toolcall's `--trace` before v1)."""
        return int(self.header["version"]) if self.header else 0


def read_trace(path: Path) -> Trace:
    """The trace in `path`. A last line cut mid-write is dropped (`cut` says so); anything
    else that is not a trace record raises TraceError."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TraceError(f"cannot read the trace {path}: {error.strerror or error}") from None
    # Lines end at "\n" only: str.splitlines() would also cut at a U+2028 or U+0085 that a
    # JSON string holds raw (the writer keeps non-ASCII text as it is).
    lines = data.decode("utf-8", errors="replace").split("\n")
    ends_cleanly = lines[-1] == ""
    records: list[Record] = []
    cut_line = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(_record(line))
        except TraceError as error:
            if number == len(lines) and not ends_cleanly:
                cut_line = number  # written up to a crash: the line was never finished
                break
            raise TraceError(f"{path} is not a toolcall trace: line {number} {error}") from None
    header = records.pop(0) if records and records[0]["kind"] == HEADER_KIND else None
    if header is not None:
        _check_header(header, path)
    return Trace(path=path, header=header, records=records, cut_line=cut_line)


def _record(line: str) -> Record:
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        raise TraceError("is not JSON") from None
    except RecursionError:
        raise TraceError("is nested too deeply to read") from None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        raise TraceError("is not a record (a JSON object with a `kind`)")
    return record


def _check_header(header: Record, path: Path) -> None:
    version = header.get("version")
    if header.get("format") != FORMAT or not isinstance(version, int):
        raise TraceError(f"{path} has a header of an unknown format")
    if version > VERSION:
        raise TraceError(
            f"{path} is a version {version} trace; this toolcall reads up to version {VERSION}"
        )


def runs(trace: Trace) -> list[list[Record]]:
    """The trace's records split into runs (a chat trace holds one per question).

    A run ends with its `run_finished`; records after the last one (an `interrupted` line)
    belong to the last run, and a trace cut off mid-run ends with that run unfinished. A later
    header (a `--trace` file written to again) starts nothing and is left out."""
    split: list[list[Record]] = []
    current: list[Record] = []
    for record in trace.records:
        if record["kind"] == HEADER_KIND:
            continue
        current.append(record)
        if record["kind"] == "run_finished":
            split.append(current)
            current = []
    if current and split and not _starts_a_run(current):
        split[-1].extend(current)
    elif current:
        split.append(current)
    return split


def _starts_a_run(records: list[Record]) -> bool:
    return any(record["kind"] != "interrupted" for record in records)


@dataclass(frozen=True)
class TraceSummary:
    """One row of `toolcall trace list`."""

    id: str
    path: Path
    when: str
    command: str
    question: str
    questions: int
    model: str
    strategy: str
    iterations: int
    stop_reason: str
    tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "when": self.when,
            "command": self.command,
            "question": self.question,
            "questions": self.questions,
            "model": self.model,
            "strategy": self.strategy,
            "iterations": self.iterations,
            "stop_reason": self.stop_reason,
            "tokens": self.tokens,
        }


_SUMMARY_KINDS = (HEADER_KIND, "run_started", "run_finished", "interrupted")


def summarize(path: Path) -> TraceSummary:
    """The summary of one trace, reading only the lines it needs: a trace of a long streamed
    chat holds thousands of chunk records, and `trace list` reads up to hundreds of traces."""
    picked: list[Record] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if _kind_of(line) not in _SUMMARY_KINDS:
                    continue
                try:
                    picked.append(_record(line))
                except TraceError:
                    if line.endswith("\n"):  # not a line cut mid-write
                        raise TraceError(f"{path} is not a toolcall trace") from None
        when = _when(path, picked)
    except OSError as error:
        raise TraceError(f"cannot read the trace {path}: {error.strerror or error}") from None
    return _summary(path, picked, when)


def _when(path: Path, records: list[Record]) -> str:
    """When the trace was begun: its header says; a headerless one's file is as old as that."""
    if records and records[0]["kind"] == HEADER_KIND and records[0].get("created"):
        return str(records[0]["created"])
    modified = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    return modified.isoformat(timespec="milliseconds")


def _kind_of(line: str) -> str | None:
    """A record's kind read off the start of its line (`kind` is written first); None for a
    line written some other way, which is then parsed whole."""
    prefix = '{"kind": "'
    if line.startswith(prefix):
        end = line.find('"', len(prefix))
        return line[len(prefix) : end] if end > 0 else None
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None  # a line cut mid-write, or one _record will refuse
    kind = record.get("kind") if isinstance(record, dict) else None
    return kind if isinstance(kind, str) else None


def _summary(path: Path, records: list[Record], when: str) -> TraceSummary:
    header = records[0] if records and records[0]["kind"] == HEADER_KIND else {}
    started = [r for r in records if r["kind"] == "run_started"]
    finished = [r for r in records if r["kind"] == "run_finished"]
    first = started[0] if started else {}
    return TraceSummary(
        id=path.stem,
        path=path,
        when=when,
        command=str(header.get("command") or ""),
        question=str(first.get("question") or ""),
        questions=len(started),
        model=_setting("model", first, header),
        strategy=_setting("strategy", first, header),
        iterations=sum(_number(r.get("iterations")) for r in finished),
        stop_reason=_stop_reason(records, finished),
        tokens=sum(tokens_of(r.get("usage")) for r in finished),
    )


def _setting(key: str, first: Record, header: Record) -> str:
    """What the first question ran with; else what the header's settings say (a trace cut
    before any question started)."""
    settings = header.get("settings") or {}
    return str(first.get(key) or settings.get(key) or "")


def _stop_reason(records: list[Record], finished: list[Record]) -> str:
    """Why the trace ended: an interruption, else how its last question finished."""
    if any(r["kind"] == "interrupted" for r in records):
        return "interrupted"
    return str(finished[-1].get("stop_reason", "?")) if finished else "unfinished"


def tokens_of(usage: Any) -> int:
    """A usage's total: `total_tokens`, else prompt plus completion."""
    if not isinstance(usage, dict):
        return 0
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    return _number(usage.get("prompt_tokens")) + _number(usage.get("completion_tokens"))


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
