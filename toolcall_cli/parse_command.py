"""`toolcall parse`: what the parsers make of a saved model output, as one JSON object (a stable
interface, documented in the README: `calls`, `text`, `errors`, `reasoning` and `chunks`)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from toolcall_cli.events import ParseError
from toolcall_cli.messages import ToolCall
from toolcall_cli.strategies.schema import NativeReplyParser
from toolcall_cli.strategies.text_parser import CallTextParser
from toolcall_cli.strategies.text_protocol import TextReplyParser
from toolcall_cli.wire import ModelError
from toolcall_cli.wire.sse import sse_data, sse_lines


class SseInputError(ValueError):
    """The input is not what the parser was told to expect (an SSE stream, a JSON message)."""


def random_chunks(text: str, seed: int, largest: int = 16) -> Iterator[str]:
    rng = random.Random(seed)
    start = 0
    while start < len(text):
        size = rng.randint(1, largest)
        yield text[start : start + size]
        start += size


def parse_output(text: str, *, chunk: int | None = None, seed: int | None = None) -> dict[str, Any]:
    """Parse tagged text in one piece (regex), or in chunks (stream) of a fixed or random size."""
    if chunk is not None:
        pieces = [text[start : start + chunk] for start in range(0, len(text), chunk)]
    elif seed is not None:
        pieces = list(random_chunks(text, seed))
    else:
        pieces = [text]
    parser = CallTextParser("call_")
    for piece in pieces:
        parser.feed(piece)
    parser.close()
    return result_json(parser.calls, parser.errors, parser.text, parser.reasoning, len(pieces))


def parse_sse(stream_text: str) -> dict[str, Any]:
    """Parse an OpenAI SSE stream: native `tool_calls` deltas and tagged calls in content alike.

    Every event goes through both reply parsers the strategies use: the text one reads tagged
    calls and reasoning from the content, the native one assembles `tool_calls` deltas."""
    tagged = TextReplyParser("call_")
    native = NativeReplyParser("call_")
    count = 0
    for data in sse_data(iter(sse_lines(stream_text))):
        if data == "[DONE]":
            break
        count += 1
        event = sse_event(data)
        try:
            tagged.feed(event)
            native.feed(event)
        except ModelError as error:
            raise SseInputError(str(error)) from None
    if count == 0:
        raise SseInputError("no SSE `data:` lines with events were found in the input")
    tagged.close()
    native.close()
    text, calls = tagged.reply(), native.reply()
    return result_json(
        [*calls.calls, *text.calls], [*calls.errors, *text.errors], text.text, text.reasoning, count
    )


def parse_message(text: str) -> dict[str, Any]:
    """Parse a native reply: an assistant message with `tool_calls`, or a whole chat.completion."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SseInputError(f"the input is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise SseInputError("the input is not a JSON object (an assistant message or a completion)")
    completion = value if "choices" in value else {"choices": [{"index": 0, "message": value}]}
    parser = NativeReplyParser("call_")
    try:
        parser.feed(completion)
    except ModelError as error:
        raise SseInputError(str(error)) from None
    parser.close()
    reply = parser.reply()
    return result_json(list(reply.calls), list(reply.errors), reply.text, reply.reasoning, 1)


def sse_event(data: str) -> dict[str, Any]:
    try:
        event = json.loads(data)
    except json.JSONDecodeError:
        raise SseInputError(f"an SSE data line is not JSON: {data[:80]!r}") from None
    if not isinstance(event, dict):
        raise SseInputError(f"an SSE event is not a JSON object: {data[:80]!r}")
    return event


def result_json(
    calls: list[ToolCall], errors: list[ParseError], text: str, reasoning: str, chunks: int
) -> dict[str, Any]:
    return {
        "calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "repaired": c.repaired}
            for c in calls
        ],
        "text": text.strip(),
        "errors": [
            {"call_id": e.call_id, "message": e.message, "raw": e.raw, "truncated": e.truncated}
            for e in errors
        ],
        "reasoning": reasoning.strip(),
        "chunks": chunks,
    }
