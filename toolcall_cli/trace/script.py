"""A trace played as a script (`--model scripted --script TRACE`): the replies it recorded, each
as the model sent it (chunk by chunk where it was streamed), so a real model's session runs again
offline, through the same parsers and the same loop."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_cli.loop import judged_by_the_loop
from toolcall_cli.models.scripted import RecordedReply, Recording, ScriptedModel
from toolcall_cli.trace.reader import Record, Trace, TraceError, lines_of, read_trace
from toolcall_cli.wire import UNREADABLE_REPLY, WireFormat

REFUSED_AS_TOO_LONG = "the server said the request was too long (as recorded)"
"""The failure a request gets back whose recording was refused for the context window and then
retried: the server's numbers are not in the trace, only that it refused."""


def is_trace(path: Path, data: bytes | None = None) -> bool:
    """Whether `path` (or `data`, its bytes read already) holds a trace rather than a script of
    replies: its first line is a record (a JSON object with a `kind`), which no script line can
    be. False when it cannot be read (loading it as a script then says why)."""
    try:
        with path.open("rb") if data is None else io.BytesIO(data) as stream:
            lines = lines_of(stream)
            first = next((line for line in lines if line.text is None or line.text.strip()), None)
    except OSError:
        return False
    if first is None:
        return False
    if first.text is None:
        return True  # longer than any trace's line: reading it as a trace says so in a line
    try:
        value = json.loads(first.text)
    except (ValueError, RecursionError):  # ValueError: also a number of 4,300 digits
        return False
    return isinstance(value, dict) and isinstance(value.get("kind"), str)


def script_from_trace(path: Path, data: bytes | None = None) -> ScriptedModel:
    """The scripted model that plays back the replies `path` recorded (`data`: its bytes, read
    already). Raises TraceError for a file that is no trace, or one that recorded no reply."""
    trace = read_trace(path, data=data)
    played = recorded_replies(trace)
    wire = recorded_wire(trace)
    if not played:
        raise TraceError(f"{path} recorded no model reply to play")
    if wire is None:  # replies after requests that were not recorded: an edited trace
        raise TraceError(f"{path} recorded no request its replies answered")
    recording = Recording(path=path, wire=wire, strategy=recorded_strategy(trace))
    return ScriptedModel(played, recording=recording)


def recorded_wire(trace: Trace) -> WireFormat | None:
    """The format the recording's first request asked its replies in."""
    for record in trace.records:
        if record["kind"] == "iteration_started" and isinstance(record.get("request"), dict):
            return WireFormat.of(record["request"])
    return None


def recorded_strategy(trace: Trace) -> str:
    """The flags that choose the strategy the trace was recorded with."""
    settings = (trace.header or {}).get("settings") or {}
    name = settings.get("strategy")
    if not isinstance(name, str):
        started = next((r for r in trace.records if r["kind"] == "run_started"), {})
        name = str(started.get("strategy", "?"))
    if name == "schema" and settings.get("schema_mode"):
        return f"--strategy schema --schema-mode {settings['schema_mode']}"
    if name == "stream" and settings.get("stream_mode"):
        return f"--strategy stream --stream-mode {settings['stream_mode']}"
    return f"--strategy {name}"


@dataclass
class _Request:
    """One recorded request and what came back for it."""

    iteration: int
    body: dict[str, Any]
    native: bool | None
    """The recording strategy reads native calls, so a whole reply's `raw` is its message as
    JSON; None: the trace does not say (it has no header), and `raw` shows which."""
    chunks: list[Record] = field(default_factory=list)
    replied: Record | None = None
    failed: Record | None = None


def recorded_replies(trace: Trace) -> list[RecordedReply]:
    """Each recorded request's reply, in order. A request whose reply never came to an end (a
    run interrupted while the model was answering) has none to play."""
    played: list[RecordedReply] = []
    pending: _Request | None = None
    strategy = ""
    for record in trace.records:
        kind = record["kind"]
        if kind == "run_started":
            strategy = str(record.get("strategy", ""))
        elif kind == "iteration_started":
            request = _request(record, strategy, trace.header)
            if pending is not None:
                played += _reply(pending, retried=request.iteration == pending.iteration)
            pending = request
        elif pending is None:
            continue
        elif kind == "model_chunk":
            pending.chunks.append(record)
        elif kind == "model_replied":
            pending.replied = record
        elif kind in ("model_failed", "reply_not_read"):
            pending.failed = record
        elif kind == "run_finished":
            played += _reply(pending, retried=False)
            pending = None
    if pending is not None:
        played += _reply(pending, retried=False)
    return played


def _request(record: Record, strategy: str, header: Record | None) -> _Request:
    body = record.get("request")
    body = body if isinstance(body, dict) else {}
    iteration = record.get("iteration")
    return _Request(
        iteration=iteration if isinstance(iteration, int) else 0,
        body=body,
        native=_reads_native_calls(strategy, header),
    )


def _reads_native_calls(strategy: str, header: Record | None) -> bool | None:
    """Whether the strategy keeps a whole reply's message as its `raw` (schema in its native
    modes, which never streams); None for a trace without a header, which does not say."""
    if strategy != "schema":
        return False
    if header is None:
        return None
    mode = (header.get("settings") or {}).get("schema_mode", "tools")
    return bool(mode != "json")


def _reply(request: _Request, *, retried: bool) -> list[RecordedReply]:
    streamed = bool(request.body.get("stream"))
    failure = _failure(request.failed)
    if request.replied is None and failure is None:
        if retried:  # refused as too long for the context window, then sent again
            return [RecordedReply((), streamed, (REFUSED_AS_TOO_LONG, "context_length"))]
        return []
    if streamed:
        chunks = tuple(_chunk(record, request.body) for record in request.chunks)
    elif request.replied is not None:
        chunks = (_completion(request.replied, request),)
    else:
        chunks = ()
    said = request.failed.get("said") if request.failed is not None else None
    return [RecordedReply(chunks, streamed, failure, said if isinstance(said, str) else "")]


def _failure(failed: Record | None) -> tuple[str, str] | None:
    """The model's own failure; None where there was none, or the loop failed the reply itself
    (it said nothing, it ran too long): the reply played back will be judged so again."""
    if failed is None:
        return None
    message = str(failed.get("message", "the model failed"))
    if judged_by_the_loop(message):
        return None
    if failed["kind"] == "reply_not_read":
        return message, UNREADABLE_REPLY
    return message, str(failed.get("error_kind", "protocol"))


def _chunk(record: Record, body: dict[str, Any]) -> dict[str, Any]:
    """A `model_chunk` record as the chunk it was read from."""
    delta = record.get("delta") if isinstance(record.get("delta"), dict) else {}
    finish = record.get("finish_reason")
    chunk: dict[str, Any] = {
        "id": "chatcmpl-recorded",
        "object": "chat.completion.chunk",
        "model": body.get("model", ""),
        # A chunk with nothing in its choice came without one (the usage chunk at the end).
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        if delta or finish is not None
        else [],
    }
    if isinstance(record.get("usage"), dict):
        chunk["usage"] = record["usage"]
    return chunk


def _completion(replied: Record, request: _Request) -> dict[str, Any]:
    """The `chat.completion` a whole (not streamed) reply was read from."""
    completion: dict[str, Any] = {
        "id": "chatcmpl-recorded",
        "object": "chat.completion",
        "model": request.body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": _message(replied, request.native),
                "finish_reason": replied.get("finish_reason"),
            }
        ],
    }
    if replied.get("usage"):
        completion["usage"] = replied["usage"]
    return completion


def _message(replied: Record, native: bool | None) -> dict[str, Any]:
    """The assistant message: a native strategy recorded it whole as its `raw` (JSON); the
    others recorded its content, and the reasoning that came apart from it."""
    raw = str(replied.get("raw") or "")
    if native is not False:
        message = _json_message(raw)
        if message is not None:
            return message
    message = {"role": "assistant", "content": raw or None}
    reasoning = str(replied.get("reasoning") or "")
    if reasoning and reasoning not in raw:  # `<think>` text is in the content already
        message["reasoning_content"] = reasoning
    return message


def _json_message(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # ValueError: also a number of 4,300 digits
        return None
    if isinstance(value, dict) and value.get("role") == "assistant":
        return value
    return None
