"""The chat-completions wire writer: an assistant reply as one `chat.completion` object, or as
the `chat.completion.chunk` stream a server sends (text pieces, tool-call deltas keyed by index,
finish_reason, usage). The offline and scripted models write through it, as a server would."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
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


CHARS_PER_TOKEN = 4
"""The usual rough rule: how usage is estimated, and where max_tokens cuts a reply."""


def written_chars(output: AssistantOutput) -> int:
    """How much the model wrote: its text, and each call's name and arguments."""
    return len(output.content or "") + sum(len(c.name + c.arguments) for c in output.tool_calls)


def estimate_usage(body: dict[str, Any], output: AssistantOutput) -> dict[str, int]:
    """Token counts estimated as characters / CHARS_PER_TOKEN."""
    prompt = len(json.dumps(body.get("messages", []), ensure_ascii=False))
    prompt += len(json.dumps(body.get("tools", []), ensure_ascii=False))
    prompt_tokens = max(1, prompt // CHARS_PER_TOKEN)
    completion_tokens = max(1, written_chars(output) // CHARS_PER_TOKEN)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def within(output: AssistantOutput, body: dict[str, Any]) -> AssistantOutput:
    """The reply as a server holds it to the request's bounds: its first call only with
    `parallel_tool_calls: false` (as vLLM keeps it), and stopped at `max_tokens` (or
    `max_completion_tokens`, the smaller), with finish_reason "length"."""
    if body.get("parallel_tool_calls") is False and len(output.tool_calls) > 1:
        output = replace(output, tool_calls=output.tool_calls[:1])
    asked = [body.get("max_tokens"), body.get("max_completion_tokens")]
    most = min((n for n in asked if isinstance(n, int) and n > 0), default=None)
    return output if most is None else cut_at(output, CHARS_PER_TOKEN * most)


def cut_at(output: AssistantOutput, left: int) -> AssistantOutput:
    """The reply cut after `left` characters (as its usage counts them): the text first, then
    each call's name and arguments in turn; whole when it fits."""
    if written_chars(output) <= left:
        return output
    content = None if output.content is None else output.content[:left]
    left -= len(content or "")
    kept: list[WireCall] = []
    for call in output.tool_calls:
        if left <= len(call.name):
            break
        kept.append(replace(call, arguments=call.arguments[: left - len(call.name)]))
        left -= len(call.name + kept[-1].arguments)
    return AssistantOutput(content if kept else content or "", tuple(kept), "length", output.cuts)


def completion(
    output: AssistantOutput, *, response_id: str, model: str, usage: dict[str, int]
) -> dict[str, Any]:
    """One `chat.completion` object, as a server answers a non-streaming request."""
    message: dict[str, Any] = {"role": "assistant", "content": output.content}
    if output.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in output.tool_calls
        ]
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": output.finish_reason,
    }
    return {**head("chat.completion", response_id, model), "choices": [choice], "usage": usage}


def head(kind: str, response_id: str, model: str) -> dict[str, Any]:
    """The fields every object of one answer begins with."""
    return {"id": response_id, "object": kind, "created": CREATED, "model": model}


def split_text(text: str, rng: random.Random, cuts: Sequence[int] = ()) -> list[str]:
    """Pieces of 1-12 characters, so tags and JSON get split anywhere; no piece spans a cut."""
    pieces: list[str] = []
    position = 0
    pending = sorted(c for c in set(cuts) if 0 < c < len(text))
    while position < len(text):
        size = rng.randint(1, 12)
        while pending and pending[0] <= position:
            pending.pop(0)
        if pending:
            size = min(size, pending[0] - position)
        pieces.append(text[position : position + size])
        position += size
    return pieces


def chunks(
    output: AssistantOutput, head: dict[str, Any], rng: random.Random, usage: dict[str, int] | None
) -> Iterator[dict[str, Any]]:
    """The stream a server sends: role, content pieces, tool-call deltas by index, finish, and
    the usage when the request asked for it (`usage` not None)."""

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        # As OpenAI does: with usage asked for, only the last, choice-less chunk carries it.
        return {**head, "choices": [choice], **({"usage": None} if usage else {})}

    yield chunk({"role": "assistant", "content": None if output.tool_calls else ""})
    for piece in split_text(output.content or "", rng, output.cuts):
        yield chunk({"content": piece})
    for index, call in enumerate(output.tool_calls):
        function = {"name": call.name, "arguments": ""}
        yield chunk(
            {
                "tool_calls": [
                    {"index": index, "id": call.id, "type": "function", "function": function}
                ]
            }
        )
        for piece in split_text(call.arguments, rng):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, output.finish_reason)
    if usage:
        yield {**head, "choices": [], "usage": usage}


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
    wanted = isinstance(options, dict) and bool(options.get("include_usage"))
    each = head("chat.completion.chunk", response_id, model)
    yield from chunks(output, each, rng, usage if wanted else None)
