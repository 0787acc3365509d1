"""A trace's records turned back into the events they were written from, so a recorded run can
go through the same renderers as a live one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from toolcall_cli.events import (
    ApprovalAnswered,
    ChosenTool,
    Event,
    ModelFailed,
    Notice,
    TimelineEntry,
)
from toolcall_cli.feedback import Problem, problem_from_record
from toolcall_cli.messages import ToolCall, ToolResult
from toolcall_cli.trace._shapes import EVENT_TYPES
from toolcall_cli.trace.reader import Record, Trace, TraceError

T = TypeVar("T")


def _call(value: Any) -> ToolCall:
    return _build(ToolCall, value, depends_on=tuple)


def _result(value: Any) -> ToolResult:
    return _build(ToolResult, value, coerced=tuple, problems=_problems)


def _problems(value: Any) -> tuple[Problem, ...]:
    items = value if isinstance(value, list) else []
    return tuple(p for p in map(problem_from_record, items) if p is not None)


def _entries(value: Any) -> tuple[TimelineEntry, ...]:
    return tuple(_build(TimelineEntry, entry, waits_for=tuple) for entry in value)


def _chosen(value: Any) -> tuple[ChosenTool, ...]:
    return tuple(_build(ChosenTool, tool) for tool in value)


# Fields JSON cannot give back as written: nested values and tuples (JSON has only lists).
_NESTED: dict[str, Callable[[Any], Any]] = {
    "call": _call,
    "result": _result,
    "entries": _entries,
    "tools": tuple,
    "placeholders": tuple,
    "sent": _chosen,
    "added": tuple,
    "messages": tuple,
    "figures": tuple,
    "ungrounded": tuple,
}


def event_from_record(record: Record) -> Event | None:
    """The event a record was written from; None for the records only a trace has (its
    header, `interrupted`, a script's end) and for kinds this toolcall does not know.
    Raises TraceError for a record of a known kind that lacks what the event needs."""
    cls = EVENT_TYPES.get(record["kind"])
    if cls is None:
        return None
    event: Event = _build(cls, record, **_NESTED)
    return event


def _build(cls: type[T], value: Any, **convert: Callable[[Any], Any]) -> T:
    """`cls` from a record's fields, each converted where `convert` names it; fields the class
    does not have (the record's `t`, a strict-JSON note) are left out."""
    if not isinstance(value, dict):
        raise TraceError(f"a {cls.__name__} record is not an object")
    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    try:
        fields = {
            name: convert[name](item) if name in convert and item is not None else item
            for name, item in value.items()
            if name in names and name != "kind"
        }
        return cls(**fields)
    except (TypeError, ValueError) as error:  # a field missing, or not of its shape
        what = value.get("kind", cls.__name__)
        raise TraceError(f"a {what} record cannot be read: {error}") from None


def approval_notice(answered: ApprovalAnswered) -> Notice:
    """What the user answered a call's approval question, for a run drawn again."""
    call = f"{answered.name} {answered.call_id}"
    waited = f"{answered.waited:.2f}s" if answered.waited == answered.waited else "?"
    return Notice(message=f"approval of {call}: answered {answered.answer} after {waited}")


def replayed_events(trace: Trace) -> Iterator[Event]:
    """The trace's events in order, to draw the recorded run again. What only a trace says
    (the run was cut short, a script ran out) comes as a notice where it happened; records of
    kinds this toolcall does not know are passed over."""
    last: Event | None = None
    for record in trace.records:
        event = event_from_record(record)
        if event is not None:
            last = event
            yield event
            if isinstance(event, ApprovalAnswered) and event.answer != "declined":
                yield approval_notice(event)  # at the run, the prompt itself showed it
        elif record["kind"] == "interrupted":
            why = f"{record.get('reason', '?')}: {record.get('detail', '')}".rstrip(": ")
            yield Notice(level="warning", message=f"the trace ends here: cut short ({why})")
        elif record["kind"].startswith("script_"):
            message = str(record.get("message") or record["kind"].replace("_", " "))
            if not (isinstance(last, ModelFailed) and last.message == message):
                yield Notice(level="warning", message=message)  # not said by the failure above
    if trace.cut:
        yield Notice(level="warning", message="the trace's last line was cut mid-write")
