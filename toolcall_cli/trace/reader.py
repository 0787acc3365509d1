"""Reading a trace back: its header and records, the runs a chat trace holds, and the one-line
summary `toolcall trace list` shows."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from toolcall_cli.events import strategy_label
from toolcall_cli.strictjson import DEEPEST, nesting_depth
from toolcall_cli.trace._shapes import EVENT_TYPES, ShapeError, checked_record
from toolcall_cli.trace.writer import FORMAT, LINE_CAP, VERSION

Record = dict[str, Any]

HEADER_KIND = "trace_header"
MAX_LINE_BYTES = LINE_CAP
"""The longest line a trace is read with: the longest the writer writes. A longer line is no
record toolcall wrote, and is refused without being held (a 1 GiB last line took `trace show`
to 4.2 GB)."""
HEAD_BYTES = 4096
"""How much of a line `trace list` reads to learn its kind, which is written first."""
_SKIP_BYTES = 64 * 1024
"""The piece an over-long (or unwanted) line is read past in, and let go."""


class TraceError(ValueError):
    """A file that cannot be read as a trace; the message names it and says why (one line)."""


@dataclass(frozen=True)
class Trace:
    path: Path
    header: Record | None
    """The first line of a v1 trace; None for a trace written before the format had one."""
    records: list[Record] = field(default_factory=list)
    """Every line after the header, in order, each checked for the shape of its kind."""
    cut_line: int | None = None
    """The number of a last line cut mid-write (a crash, a full disk), which was left out."""
    header_line: int = 1
    """The header's line (blank lines may come first)."""

    @property
    def cut(self) -> bool:
        """The last line was cut mid-write and was left out."""
        return self.cut_line is not None

    @property
    def version(self) -> int:
        """The format's version: 0 for a headerless trace (toolcall's `--trace` before v1)."""
        return int(self.header["version"]) if self.header else 0


@dataclass(frozen=True)
class Line:
    """One line of a trace file as read: its text, or None when it was passed over unread."""

    number: int
    text: str | None
    ended: bool
    """It ended with a newline (a last line without one was cut mid-write)."""
    too_long: bool = False


def lines_of(
    stream: IO[bytes],
    max_line_bytes: int | None = None,
    wanted: Callable[[bytes], bool] | None = None,
) -> Iterator[Line]:
    """The file's lines, ended by "\\n" only (str.splitlines() would also cut at a U+2028 that
    a JSON string holds raw), never holding more than `max_line_bytes` of one. A longer line,
    or one whose start `wanted` turns down, is read past in pieces and let go."""
    max_line_bytes = max_line_bytes or MAX_LINE_BYTES
    first = max_line_bytes + 1 if wanted is None else min(HEAD_BYTES, max_line_bytes + 1)
    number = 0
    while head := stream.readline(first):
        number += 1
        line = head
        if wanted is not None and len(head) == first and not head.endswith(b"\n"):
            if not wanted(head):
                yield Line(number, None, ended=_passed_over(stream))
                continue
            line += stream.readline(max_line_bytes + 1 - len(head))
        ended = line.endswith(b"\n")
        if len(line) - ended > max_line_bytes:
            yield Line(number, None, ended=ended or _passed_over(stream), too_long=True)
            continue
        text = line.decode("utf-8", errors="replace")
        yield Line(number, text[:-1] if ended else text, ended=ended)


def _passed_over(stream: IO[bytes]) -> bool:
    """Read on to the end of the line, keeping none of it; whether a newline ended it."""
    while piece := stream.readline(_SKIP_BYTES):
        if piece.endswith(b"\n"):
            return True
    return False


def read_trace(
    path: Path, *, max_line_bytes: int | None = None, data: bytes | None = None
) -> Trace:
    """The trace in `path` (or in `data`, read from `path` already: a pipe is read once), every
    record checked for the shape of its kind. A last line cut mid-write is dropped (`cut` says
    so); anything else that is not a trace record raises TraceError naming the file and the
    line."""
    max_line_bytes = max_line_bytes or MAX_LINE_BYTES
    records: list[Record] = []
    cut_line = None
    first_line = 1
    reached = 0
    try:
        with path.open("rb") if data is None else io.BytesIO(data) as stream:
            for line in lines_of(stream, max_line_bytes):
                if line.text is not None and not line.text.strip():
                    continue
                first_line = first_line if records else line.number
                try:
                    records.append(_record(line, path, max_line_bytes))
                    reached = _iteration_reached(records[-1], reached, line, path)
                except TraceError:
                    if not line.ended and not line.too_long:
                        cut_line = line.number  # written up to a crash: never finished
                        break
                    raise
    except OSError as error:
        raise TraceError(f"cannot read the trace {path}: {error.strerror or error}") from None
    header = records.pop(0) if records and records[0]["kind"] == HEADER_KIND else None
    return Trace(path, header, records, cut_line, header_line=first_line)


def _record(line: Line, path: Path, max_line_bytes: int) -> Record:
    """The record on `line`, checked; TraceError naming the file and line, and why not."""
    where = f"{path} is not a toolcall trace: line {line.number}"
    if line.text is None:
        raise TraceError(f"{where} is longer than {max_line_bytes:,} bytes")
    try:
        record = json.loads(line.text)
    except json.JSONDecodeError:
        raise TraceError(f"{where} is not JSON") from None
    except ValueError:  # a number of over 4,300 digits, which Python will not read
        raise TraceError(f"{where} holds a number too long to read") from None
    except RecursionError:
        raise TraceError(f"{where} is nested too deeply to read") from None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        raise TraceError(f"{where} is not a record (a JSON object with a `kind`)")
    if nesting_depth(record, DEEPEST + 1) > DEEPEST:  # what the writer bounds every line to
        raise TraceError(f"{where} is nested more deeply than toolcall writes")
    if record["kind"] == HEADER_KIND:
        _check_header(record, path, line.number)  # a newer version is named as such, first
    try:
        return checked_record(record)
    except ShapeError as problem:
        raise TraceError(f"{where} is not a {record['kind']} record: {problem}") from None


def _iteration_reached(record: Record, reached: int, line: Line, path: Path) -> int:
    """The highest iteration a run has started once `record` is read; TraceError for an
    iteration out of its run's order. Iterations go up one at a time from 1 (a retried one
    comes again), so a reader may count from 1 to the last: an iteration 10**18 made the
    replay's diff count that far."""
    if record["kind"] == "run_started":
        return 0
    iteration = record.get("iteration")
    if record["kind"] not in EVENT_TYPES or type(iteration) is not int:
        return reached
    if not 1 <= iteration <= reached + 1:
        raise TraceError(
            f"{path} is not a toolcall trace: line {line.number} is not a {record['kind']} "
            f"record: its iteration {iteration} is out of order (after {reached}, iterations "
            "go up one at a time from 1)"
        )
    return max(reached, iteration) if record["kind"] == "iteration_started" else reached


def _check_header(header: Record, path: Path, number: int) -> None:
    version = header.get("version")
    if header.get("format") != FORMAT or type(version) is not int:
        raise TraceError(f"{path} has a header of an unknown format (line {number})")
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
    mode: str
    """The strategy's mode (`json` of `schema json`); empty for regex."""
    iterations: int
    stop_reason: str
    tokens: int

    @property
    def strategy_label(self) -> str:
        """`schema json`, `stream native`, `regex`: the strategy as the first question ran."""
        return strategy_label(self.strategy, self.mode)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "path": str(self.path)}


_SUMMARY_KINDS = (HEADER_KIND, "run_started", "run_finished", "interrupted")


def summarize(path: Path, *, max_line_bytes: int | None = None) -> TraceSummary:
    """The summary of one trace, reading only the lines it needs: a trace of a long streamed
    chat holds thousands of chunk records, and `trace list` reads up to hundreds of traces. Of
    any other line only its start is read (its kind is written first), and none is held."""
    max_line_bytes = max_line_bytes or MAX_LINE_BYTES
    picked: list[Record] = []
    try:
        with path.open("rb") as stream:
            for line in lines_of(stream, max_line_bytes, wanted=_summary_line):
                if line.text is None and not line.too_long:
                    continue  # a line of another kind
                if line.text is not None and _kind_of(line.text) not in _SUMMARY_KINDS:
                    continue
                try:
                    picked.append(_record(line, path, max_line_bytes))
                except TraceError:
                    if line.ended or line.too_long:  # not a line cut mid-write
                        raise
        when = _when(path, picked)
    except OSError as error:
        raise TraceError(f"cannot read the trace {path}: {error.strerror or error}") from None
    return _summary(path, picked, when)


def _summary_line(head: bytes) -> bool:
    """Whether a line starting with `head` may be one a summary reads."""
    kind = _kind_of(head.decode("utf-8", errors="replace"))
    return kind is None or kind in _SUMMARY_KINDS


def _when(path: Path, records: list[Record]) -> str:
    """When the trace was begun: its header says; a headerless one's file is as old as that."""
    if records and records[0]["kind"] == HEADER_KIND and records[0].get("created"):
        return str(records[0]["created"])
    modified = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    return modified.isoformat(timespec="milliseconds")


def _kind_of(line: str) -> str | None:
    """A record's kind read off the start of its line (`kind` is written first); None for a
    line written some other way, or only partly read, which is then parsed whole."""
    prefix = '{"kind": "'
    if line.startswith(prefix):
        end = line.find('"', len(prefix))
        return line[len(prefix) : end] if end > 0 else None
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # ValueError: also a number of 4,300 digits
        return None  # a line cut mid-write (or read in part), or one _record will refuse
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
        mode=run_mode(first, header),
        iterations=sum(_number(r.get("iterations")) for r in finished),
        stop_reason=_stop_reason(records, finished),
        tokens=sum(tokens_of(r.get("usage")) for r in finished),
    )


def _setting(key: str, first: Record, header: Record) -> str:
    """What the first question ran with; else what the header's settings say (a trace cut
    before any question started)."""
    settings = header.get("settings") or {}
    return str(first.get(key) or settings.get(key) or "")


def run_mode(first: Record, header: Record) -> str:
    """The mode the first question's strategy ran in; a trace from before runs recorded it
    has the header's mode of that strategy's kind, where the header names the same strategy."""
    if "mode" in first:
        return str(first.get("mode") or "")
    settings = header.get("settings") or {}
    strategy = _setting("strategy", first, header)
    if settings.get("strategy") != strategy:
        return ""  # chosen at run time (a llama.cpp server): the header's modes are not its
    key = {"schema": "schema_mode", "stream": "stream_mode"}.get(strategy)
    return str(settings.get(key) or "") if key else ""


def _stop_reason(records: list[Record], finished: list[Record]) -> str:
    """Why the trace ended: an interruption, else how its last question finished; "no
    question" for a chat left before anything was asked."""
    if any(r["kind"] == "interrupted" for r in records):
        return "interrupted"
    if finished:
        return str(finished[-1].get("stop_reason", "?"))
    return "unfinished" if any(r["kind"] == "run_started" for r in records) else "no question"


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
