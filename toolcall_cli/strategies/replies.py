"""What the strategies share: reading a reply's chunks (usage, finish reason, reasoning, checked
shapes) and putting the history on the wire as a plain chat model sees it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from toolcall_cli.events import ParserEvent, ReasoningDelta
from toolcall_cli.messages import Message
from toolcall_cli.strategies.text_prompt import tool_result_block
from toolcall_cli.strictjson import nesting_depth
from toolcall_cli.wire import ModelError

MAX_REPLY_DEPTH = 100
"""Deepest nesting taken in one completion or chunk, from any model. A real one is under ten
levels deep, and arguments sent as an object add at most _repair.MAX_DEPTH; a delta nested 500
deep once broke the trace writer. Past this, the model has failed before anything reads or
records the reply."""


def usage_counts(usage: dict[str, Any]) -> dict[str, int]:
    """The integer token counts of an OpenAI `usage` object (nested details are dropped)."""
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}


def text_protocol_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """History as a plain chat model sees it: results become user messages of result blocks.

    Consecutive tool results are grouped into one user message, each block tied to its call id.
    """
    wire: list[dict[str, Any]] = []
    for results, group in groupby(messages, key=lambda message: message.role == "tool"):
        if results:
            blocks = [
                tool_result_block(m.tool_call_id or "", m.name or "", m.content or "")
                for m in group
            ]
            wire.append({"role": "user", "content": "\n".join(blocks)})
        else:
            wire += [{"role": m.role, "content": m.content or ""} for m in group]
    return wire


class ChunkReader:
    """What reading a reply takes in every wire format: walking the choices of completions or
    chunks, keeping usage and the finish reason, and setting reasoning apart (thinking text is
    shown, never parsed for calls). Subclasses read the content."""

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage: dict[str, int] = {}
        self._reasoning: list[str] = []

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    def feed(self, chunk: dict[str, Any]) -> Sequence[ParserEvent]:
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage_counts(chunk["usage"])
        events: list[ParserEvent] = []
        for choice in checked_choices(chunk):
            part = choice.get("message") or choice.get("delta") or {}
            thinking = part.get("reasoning_content") or part.get("reasoning")
            if isinstance(thinking, str) and thinking:
                self._reasoning.append(thinking)
                events.append(ReasoningDelta(text=thinking))
            events += self.read_part(part, choice)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
                events += self.on_finish()
        return events

    def read_part(self, part: dict[str, Any], choice: dict[str, Any]) -> Sequence[ParserEvent]:
        """The content of one message or delta."""
        return ()

    def on_finish(self) -> list[ParserEvent]:
        """A finish reason arrived."""
        return []


def reply_chars(chunk: dict[str, Any]) -> int:
    """How many characters the model wrote in one completion or chunk: content, reasoning, and
    tool-call names and arguments. Read before the shapes are checked, so it trusts none."""
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return 0
    total = 0
    for choice in choices:
        part = (choice.get("message") or choice.get("delta")) if isinstance(choice, dict) else None
        if not isinstance(part, dict):
            continue
        total += _text_length(part, ("content", "reasoning_content", "reasoning"))
        calls = part.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                total += _text_length(function, ("name", "arguments"))
    return total


def check_depth(chunk: dict[str, Any]) -> None:
    """Raise the model's failure for a completion or chunk nested past MAX_REPLY_DEPTH (measured
    without recursion, so any depth can be measured)."""
    if nesting_depth(chunk, MAX_REPLY_DEPTH + 1) > MAX_REPLY_DEPTH:
        raise malformed(f"it is nested more than {MAX_REPLY_DEPTH} levels deep")


def _text_length(holder: dict[str, Any], keys: tuple[str, ...]) -> int:
    return sum(len(value) for key in keys if isinstance(value := holder.get(key), str))


def malformed(what: str) -> ModelError:
    return ModelError(f"malformed reply from the model: {what}", kind="protocol")


def checked_choices(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """The choices of a completion or chunk, after checking the shapes this code relies on.

    A wrong shape is the server's fault, reported as a protocol error, never a crash."""
    choices = chunk.get("choices")
    if choices is None:
        return []
    if not isinstance(choices, list):
        raise malformed("`choices` is not a list")
    for choice in choices:
        _check_choice(choice)
    return choices


def _check_choice(choice: Any) -> None:
    if not isinstance(choice, dict):
        raise malformed("a choice is not an object")
    part = choice.get("message") or choice.get("delta") or {}
    if not isinstance(part, dict):
        raise malformed("`message`/`delta` is not an object")
    content = part.get("content")
    if content is not None and not isinstance(content, str):
        raise malformed("`content` is not a string")
    finish = choice.get("finish_reason")
    if finish is not None and not (isinstance(finish, str) and len(finish) <= 64):
        raise malformed("`finish_reason` is not a short string")
    _check_tool_calls(part.get("tool_calls"))


def _check_tool_calls(tool_calls: Any) -> None:
    if tool_calls is not None and not isinstance(tool_calls, list):
        raise malformed("`tool_calls` is not a list")
    for entry in tool_calls or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("function") or {}, dict):
            raise malformed("a tool call (or its `function`) is not an object")
