"""The chat-completions wire writer: an assistant reply as one `chat.completion` object, or as
the `chat.completion.chunk` stream a server sends (text pieces, tool-call deltas keyed by index,
finish_reason, usage). The offline and scripted models write through it, as a server would."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

CREATED = 1_735_689_600
"""A fixed `created` timestamp: the same request must give the same bytes."""


@dataclass(frozen=True)
class WireCall:
    """A native tool call as it goes on the wire: `arguments` is the JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class AssistantOutput:
    """The assistant message in wire terms, before it is cut into chunks."""

    content: str | None
    tool_calls: tuple[WireCall, ...] = ()
    finish_reason: str = "stop"
    cuts: tuple[int, ...] = ()
    """Offsets in `content` where a stream chunk must end (a fault splitting tags on purpose)."""


def output_length(output: AssistantOutput) -> int:
    return len(output.content or "") + sum(
        len(c.name) + len(c.arguments) for c in output.tool_calls
    )


def estimate_usage(body: dict[str, Any], output: AssistantOutput) -> dict[str, int]:
    """Token counts estimated as characters / 4, the usual rough rule."""
    prompt = len(json.dumps(body.get("messages", []), ensure_ascii=False))
    prompt += len(json.dumps(body.get("tools", []), ensure_ascii=False))
    prompt_tokens = max(1, prompt // 4)
    completion_tokens = max(1, output_length(output) // 4)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def wire_message(output: AssistantOutput) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": output.content}
    if output.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in output.tool_calls
        ]
    return message


def completion(
    output: AssistantOutput, *, response_id: str, model: str, usage: dict[str, int]
) -> dict[str, Any]:
    """One `chat.completion` object, as a server answers a non-streaming request."""
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": wire_message(output),
                "logprobs": None,
                "finish_reason": output.finish_reason,
            }
        ],
        "usage": usage,
    }


def split_text(text: str, rng: random.Random, cuts: Sequence[int] = ()) -> list[str]:
    """Pieces of 1-12 characters, so tags and JSON get split anywhere; no piece spans a cut."""
    pieces: list[str] = []
    position = 0
    pending = sorted(c for c in set(cuts) if 0 < c < len(text))
    next_cut = 0
    while position < len(text):
        size = rng.randint(1, 12)
        while next_cut < len(pending) and pending[next_cut] <= position:
            next_cut += 1
        if next_cut < len(pending):
            size = min(size, pending[next_cut] - position)
        pieces.append(text[position : position + size])
        position += size
    return pieces


@dataclass(frozen=True)
class ChunkWriter:
    """Builds `chat.completion.chunk` objects that share one id, model and usage setting."""

    response_id: str
    model: str
    include_usage: bool

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.response_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        if self.include_usage:
            chunk["usage"] = None  # as OpenAI does: only the last, choice-less chunk carries usage
        return chunk

    def usage_chunk(self, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }


def chunks(
    output: AssistantOutput, writer: ChunkWriter, rng: random.Random, usage: dict[str, int]
) -> Iterator[dict[str, Any]]:
    """The stream a server sends: role, content pieces, tool-call deltas by index, finish, usage."""
    if output.tool_calls:
        yield from tool_call_chunks(output, writer, rng)
    else:
        yield writer.chunk({"role": "assistant", "content": ""})
        for piece in split_text(output.content or "", rng, output.cuts):
            yield writer.chunk({"content": piece})
    yield writer.chunk({}, output.finish_reason)
    if writer.include_usage:
        yield writer.usage_chunk(usage)


def tool_call_chunks(
    output: AssistantOutput, writer: ChunkWriter, rng: random.Random
) -> Iterator[dict[str, Any]]:
    yield writer.chunk({"role": "assistant", "content": None})
    for piece in split_text(output.content or "", rng, output.cuts):
        yield writer.chunk({"content": piece})
    for index, call in enumerate(output.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield writer.chunk({"tool_calls": [head]})
        for piece in split_text(call.arguments, rng):
            yield writer.chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})


def respond(
    body: dict[str, Any], output: AssistantOutput, *, response_id: str, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """The output in the shape the request asked for."""
    model = str(body.get("model") or "offline")
    usage = estimate_usage(body, output)
    if not body.get("stream"):
        yield completion(output, response_id=response_id, model=model, usage=usage)
        return
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    yield from chunks(output, ChunkWriter(response_id, model, include_usage), rng, usage)
