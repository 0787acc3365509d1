"""A model that replays given replies in order: the test double at the model boundary.

Each reply is the assistant's content text, or a whole assistant `message` dict (for
`tool_calls`; an optional `finish_reason` key overrides the default). It answers in
whatever shape the request asks for, like a real server.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toolcall_cli.models.base import ModelError, ModelRequest
from toolcall_cli.models.completions import AssistantOutput, WireCall, respond

Reply = str | dict[str, Any]


class ScriptedModel:
    """Replays `replies`, one per request; `requests` keeps every body it was sent."""

    name = "scripted"

    def __init__(self, replies: Sequence[Reply]) -> None:
        for reply in replies:
            if not isinstance(reply, (str, dict)):
                raise ValueError(f"a scripted reply must be a string or an object, got {reply!r}")
        self.replies: list[Reply] = list(replies)
        self.requests: list[dict[str, Any]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Replies from a JSON list, or JSONL with one reply (a JSON string or object) a line."""
        return cls(parse_script(Path(path).read_text(encoding="utf-8")))

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        number = len(self.requests) + 1
        self.requests.append(request.body)
        if number > len(self.replies):
            raise ModelError(f"the script has no reply left for request {number}", kind="protocol")
        output = scripted_output(self.replies[number - 1], number)
        # Chunking is fixed per request number, so a replay splits the same way every time.
        rng = random.Random(f"scripted:{number}")
        yield from respond(request.body, output, response_id=f"chatcmpl-scripted-{number}", rng=rng)

    def assert_complete(self) -> None:
        """Fail when replies are left over: the run stopped earlier than the script expected."""
        left = len(self.replies) - len(self.requests)
        if left > 0:
            raise AssertionError(
                f"{left} scripted repl{'y' if left == 1 else 'ies'} never requested"
            )


def parse_script(text: str) -> list[Reply]:
    """A JSON list of replies, or JSONL; raises ValueError naming the bad line."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError as error:
            raise ValueError(f"not a valid JSON list: {error}") from None
        return [check_reply(item, f"item {i + 1}") for i, item in enumerate(value)]
    replies: list[Reply] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            replies.append(check_reply(json.loads(line), f"line {number}"))
        except json.JSONDecodeError as error:
            raise ValueError(f"line {number} is not JSON: {error.msg}") from None
    return replies


def check_reply(value: Any, where: str) -> Reply:
    if isinstance(value, (str, dict)):
        return value
    raise ValueError(
        f"{where}: a reply must be a JSON string or object, got {type(value).__name__}"
    )


def scripted_output(reply: Reply, number: int) -> AssistantOutput:
    if isinstance(reply, str):
        return AssistantOutput(reply)
    content = reply.get("content")
    calls = tuple(
        wire_call(entry, f"call_scripted_{number}_{index}")
        for index, entry in enumerate(reply.get("tool_calls") or [])
        if isinstance(entry, dict)
    )
    text = content if isinstance(content, str) else None
    # A script may force a finish_reason, e.g. "length" to play a reply cut by max_tokens.
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return AssistantOutput(text, calls, str(finish))


def wire_call(entry: dict[str, Any], default_id: str) -> WireCall:
    """A scripted call; `arguments` may be written as an object for convenience."""
    found = entry.get("function")
    function: dict[str, Any] = found if isinstance(found, dict) else entry
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return WireCall(str(entry.get("id") or default_id), str(function.get("name") or ""), arguments)
