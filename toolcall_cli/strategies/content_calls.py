"""Tool calls a native-calling model wrote as JSON text in its content instead of `tool_calls`.

Small models (Qwen2.5-0.5B on llama-server, among others) often answer a function-calling
request with `{"name": ..., "arguments": {...}}` as plain content; vLLM and Ollama read that as
a call for several model families, and so does toolcall. Only the assistant's own content is
read this way: tool results are never parsed for calls.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from toolcall_cli.events import ParserEvent, ToolCallParsed
from toolcall_cli.messages import ToolCall
from toolcall_cli.strategies._native import wire_call
from toolcall_cli.strategies._repair import unique_keys
from toolcall_cli.strategies.base import Reply, ReplyParser
from toolcall_cli.strategies.text_parser import parse_text
from toolcall_cli.strategies.text_prompt import CALL_OPEN

CALL_KEYS = frozenset({"name", "arguments", "parameters", "function", "type", "id"})
"""The keys of a call object, and nothing else: `{"name": "Ann", "age": 3}` is data."""


class ContentCallReader:
    """A native reply parser that also reads the calls a model wrote in its content, once the
    reply is complete: they come out of `close()` as parsed calls, like any other."""

    def __init__(self, parser: ReplyParser, call_id_prefix: str, tools: Collection[str]) -> None:
        self._parser = parser
        self._prefix = call_id_prefix
        self._tools = tools
        self._reply: Reply | None = None

    def feed(self, chunk: dict[str, Any]) -> Sequence[ParserEvent]:
        return self._parser.feed(chunk)

    def close(self) -> Sequence[ParserEvent]:
        events = list(self._parser.close())
        self._reply = read_content_calls(self._parser.reply(), self._prefix, self._tools)
        if self._reply.calls_from_content:
            events += [ToolCallParsed(call=call) for call in self._reply.calls]
        return events

    def reply(self) -> Reply:
        return self._reply if self._reply is not None else self._parser.reply()


def read_content_calls(reply: Reply, call_id_prefix: str, known: Collection[str]) -> Reply:
    """The reply with the calls in its content as its own (`calls_from_content`), when it made
    none through `tool_calls`.

    The content must be call JSON and nothing else (after an optional ```json fence), or hold
    `<tool_call>` tags, Qwen's own format, which its template sometimes leaks into content."""
    if reply.native is None or reply.calls or reply.errors or not reply.text.strip():
        return reply
    if reply.from_answer_tool:
        # The text came as final_answer's argument: running it as a call would let a model
        # reach any tool through the one that is never run.
        return reply
    text = reply.text.strip()
    parsed = parse_text(text, call_id_prefix)
    tagged = CALL_OPEN in text
    calls = parsed.calls if parsed.calls and (tagged or not parsed.text.strip()) else ()
    if not calls:
        bare = bare_call(text, known, f"{call_id_prefix}0")
        calls = (bare,) if bare is not None else ()
    if calls:
        prose = parsed.text.strip() if tagged else ""
        return replace(as_native_calls(reply, calls, prose), calls_from_content=True)
    if parsed.errors and not parsed.text.strip():
        return replace(reply, unreadable=parsed.errors[0].message)
    return reply


def bare_call(text: str, known: Collection[str], call_id: str) -> ToolCall | None:
    """`{"name": "get_time"}`: a call without arguments, when it names a known tool. A key
    written twice (`{"name": "a", "name": "b"}`) makes no call: which one was meant is a guess,
    as everywhere a call is read."""
    try:
        value = json.loads(text, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError):  # a repeated key's JsonProblem is a ValueError too
        return None
    if not (isinstance(value, dict) and set(value) <= CALL_KEYS):
        return None
    name = value.get("name")
    if not isinstance(name, str) or name.strip() not in known:
        return None
    return ToolCall(id=call_id, name=name.strip(), arguments={}, raw=text)


def as_native_calls(reply: Reply, calls: tuple[ToolCall, ...], prose: str) -> Reply:
    """The reply as if the server had sent `calls` as `tool_calls`: the history keeps the
    assistant message with the calls and their ids, so each tool message answers a known id."""
    wire = [wire_call(call.id, call.name, call.arguments_json()) for call in calls]
    return replace(
        reply, text=prose, calls=calls, native={"content": prose or None, "tool_calls": wire}
    )


def looks_like_call_json(text: str) -> bool:
    """Text that is a call object (or a list of them) written as JSON: not an answer, whether
    or not it could be read as a call."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").strip()
        body = body[4:] if body[:4].casefold() == "json" else body
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return False
    items = value if isinstance(value, list) and value else [value]
    return all(_call_shaped(item) for item in items)


def _call_shaped(value: Any) -> bool:
    if not isinstance(value, dict) or not set(value) <= CALL_KEYS:
        return False
    return isinstance(value.get("name"), str) or isinstance(value.get("function"), dict)
