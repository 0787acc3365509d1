"""Native function calling: `tool_calls` in a message, or streamed as deltas keyed by index."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.events import CallForming, ParseError, ParserEvent, ToolCallParsed
from toolcall_cli.messages import ToolCall
from toolcall_cli.strategies._dependencies import split_reserved
from toolcall_cli.strategies._repair import JsonProblem, decode_nested, load_json


def decode_arguments(text: str) -> tuple[Any, bool]:
    """A native call's `arguments` as (value, repaired); raises JsonProblem. An empty string is
    no arguments; a JSON string that holds an object (double encoding) is decoded once more."""
    if not text.strip():
        return {}, False
    loaded = load_json(text)
    return decode_nested(loaded.value), loaded.repaired


@dataclass
class JsonDepth:
    """Tells, a piece at a time, when a streamed JSON object has closed (linear: each character
    is looked at once)."""

    depth: int = 0
    started: bool = False
    in_string: bool = False
    escaped: bool = False

    def feed(self, piece: str) -> bool:
        for char in piece:
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
                self.started = True
            elif char in "}]":
                self.depth -= 1
        return self.complete

    @property
    def complete(self) -> bool:
        return self.started and self.depth <= 0 and not self.in_string


@dataclass
class CallSlot:
    """One call being assembled from deltas."""

    index: int
    position: int
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)
    depth: JsonDepth = field(default_factory=JsonDepth)
    done: bool = False
    echo: str | None = None
    """The arguments the next request echoes for a call that was read (see wire_calls)."""

    @property
    def arguments_text(self) -> str:
        return "".join(self.parts)


class NativeCallAssembler:
    """Builds calls from `tool_calls` entries, whole or in deltas.

    Quirks handled: the id and name may be repeated on every delta (never concatenated);
    `arguments` may arrive whole, in pieces, as null, or (Ollama) as an object; Ollama gives
    parallel calls the same index with different ids, so a new id on a used index is a new call.
    """

    def __init__(self, call_id_prefix: str, *, dag: bool = False) -> None:
        self._prefix = call_id_prefix
        self._dag = dag
        self._slots: list[CallSlot] = []
        self._open: dict[int, CallSlot] = {}
        self._last: dict[int, CallSlot] = {}
        self.calls: list[ToolCall] = []
        self.errors: list[ParseError] = []

    def add(self, entries: list[dict[str, Any]]) -> list[ParserEvent]:
        events: list[ParserEvent] = []
        for position, entry in enumerate(entries):
            if isinstance(entry, dict) and isinstance(entry.get("function") or {}, dict):
                events += self._add_entry(entry, position)
        return events

    def _add_entry(self, entry: dict[str, Any], position: int) -> list[ParserEvent]:
        index = entry.get("index")
        index = index if isinstance(index, int) else position
        new_id = entry.get("id") if isinstance(entry.get("id"), str) and entry.get("id") else None
        events: list[ParserEvent] = []
        if self._is_echo(index, new_id, entry):
            return events
        slot = self._open.get(index)
        if slot is not None and new_id and slot.id and new_id != slot.id:
            events += self._finish(slot)
            slot = None
        if slot is None:
            events += self._finish_others(index)
            slot = CallSlot(index=index, position=len(self._slots), id=new_id)
            self._slots.append(slot)
            self._open[index] = slot
            self._last[index] = slot
        slot.id = slot.id or new_id
        function = entry.get("function") or {}
        name = function.get("name")
        if isinstance(name, str) and name and not slot.name:
            slot.name = name
        events += self._add_arguments(slot, function.get("arguments"))
        return events

    def _is_echo(self, index: int, new_id: str | None, entry: dict[str, Any]) -> bool:
        """A delta for a call that is already complete that brings nothing new (trailing
        whitespace, a repeated id or name): it must not start a new call. A new id, another
        name, or more arguments on the same index is the next call (Ollama without ids)."""
        last = self._last.get(index)
        if last is None or not last.done:
            return False
        function = entry.get("function") or {}
        name = function.get("name")
        arguments = function.get("arguments")
        more = arguments is not None and not (isinstance(arguments, str) and not arguments.strip())
        return (new_id is None or new_id == last.id) and name in (None, "", last.name) and not more

    def _add_arguments(self, slot: CallSlot, arguments: Any) -> list[ParserEvent]:
        if arguments is not None and not isinstance(arguments, str):
            # Ollama sends an object; a number or list is passed on as JSON, for the executor
            # to reject with a message the model can act on.
            arguments = json.dumps(arguments, ensure_ascii=False)
        if not isinstance(arguments, str) or not arguments:
            return []
        slot.parts.append(arguments)
        complete = slot.depth.feed(arguments)
        forming = CallForming(
            index=slot.position, name=slot.name, arguments_text=slot.arguments_text
        )
        return [forming, *self._finish(slot)] if complete else [forming]

    def _finish_others(self, index: int) -> list[ParserEvent]:
        # A delta for a new index means the earlier calls are complete (models emit them in order).
        events: list[ParserEvent] = []
        for other in list(self._open.values()):
            if other.index != index:
                events += self._finish(other)
        return events

    def _finish(self, slot: CallSlot, cut_off: bool = False) -> list[ParserEvent]:
        self._open.pop(slot.index, None)
        if slot.done:
            return []
        slot.done = True
        call_id = slot.id or f"{self._prefix}{slot.position}"
        raw = slot.arguments_text
        if not slot.name:
            return [self._error(call_id, raw, "a tool call arrived without a function name")]
        if cut_off and slot.depth.started and not slot.depth.complete:
            # Repairing a cut-off object would run the tool on a guess (`12*5+3` cut to `12`).
            message = (
                f"the reply was cut off inside the arguments of `{slot.name}` ({raw[-60:]!r}). "
                "Send the whole call again."
            )
            return [self._error(call_id, raw, message, truncated=True)]
        try:
            arguments, repaired = decode_arguments(raw)
            slot.echo = echoed_arguments(raw, arguments, repaired)
        except JsonProblem as problem:
            message = (
                f"the arguments of `{slot.name}` were not used: {problem} ({raw[:120]!r}). "
                'Send them as one JSON object, e.g. {"param": "value"}.'
            )
            return [self._error(call_id, raw, message)]
        ref, depends_on = None, ()  # type: tuple[str | None, tuple[str, ...]]
        if self._dag:  # the reserved arguments say how the call fits into the reply's graph
            arguments, ref, depends_on = split_reserved(arguments)
        call = ToolCall(
            id=call_id,
            name=slot.name,
            arguments=arguments,
            raw=raw,
            repaired=repaired,
            ref=ref,
            depends_on=depends_on,
        )
        self.calls.append(call)
        return [ToolCallParsed(call=call)]

    def _error(self, call_id: str, raw: str, message: str, truncated: bool = False) -> ParseError:
        error = ParseError(message=message, raw=raw, call_id=call_id, truncated=truncated)
        self.errors.append(error)
        return error

    def finish(self, finish_reason: str | None = None) -> list[ParserEvent]:
        """The reply has ended (a finish chunk, or the stream closed): complete every open call.

        Arguments still open when the reply was cut (finish_reason "length", or the stream ended
        with no finish reason) are a truncated call, not something to repair; a model that said
        it was done but left a brace open gets json-repair.
        """
        cut_off = finish_reason in (None, "length")
        events: list[ParserEvent] = []
        for slot in list(self._open.values()):
            events += self._finish(slot, cut_off)
        return events

    def wire_calls(self, as_written: bool = False) -> list[dict[str, Any]]:
        """Every call as it should be echoed back in the assistant message, broken ones included
        (each `tool` message must answer an id the assistant message carries).

        The arguments echoed are always valid JSON: a server that renders the history through
        its chat template parses them, and llama.cpp answers HTTP 500 to arguments cut off or
        written with single quotes, on every retry, since the history does not change. A
        repaired call is echoed as it ran; a call that could not be read, as a JSON string
        holding what the model wrote (its `tool` message says what was wrong). `as_written`
        gives the model's own text instead, for the view."""
        return [
            wire_call(
                slot.id or f"{self._prefix}{slot.position}",
                slot.name or "",
                (slot.arguments_text or "{}") if as_written else echoed(slot),
            )
            for slot in self._slots
        ]


def wire_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One entry of an assistant message's `tool_calls`, as OpenAI writes it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def echoed(slot: CallSlot) -> str:
    if slot.echo is not None:
        return slot.echo
    raw = slot.arguments_text
    return json.dumps(raw, ensure_ascii=False) if raw.strip() else "{}"


def echoed_arguments(raw: str, arguments: Any, repaired: bool) -> str:
    """The text the next request echoes for arguments read from `raw`: the model's own text
    when it was strict JSON of an object, else the object the call ran with."""
    if not repaired and raw.strip().startswith("{"):
        return raw
    return json.dumps(arguments if isinstance(arguments, dict) else {}, ensure_ascii=False)
