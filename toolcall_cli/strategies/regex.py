"""The regex strategy: tools described in the system prompt, calls come back as tagged text.

The reply is parsed once it has fully arrived. The stream strategy uses the same parser core
(textcalls.CallTextParser) incrementally, so the two always agree on what a reply contains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcall_cli.events import ParseError, ParserEvent, ReasoningDelta
from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.models.base import ModelRequest
from toolcall_cli.strategies.base import Reply
from toolcall_cli.strategies.prompt import system_prompt
from toolcall_cli.strategies.textcalls import CallTextParser
from toolcall_cli.strategies.wire import text_protocol_wire, usage_counts


class TextReplyParser:
    """Pulls the content text out of OpenAI completions or chunks and feeds it to the parser."""

    def __init__(self, call_id_prefix: str) -> None:
        self._calls = CallTextParser(call_id_prefix)
        self._raw: list[str] = []
        self._reasoning: list[str] = []
        self._finish_reason: str | None = None
        self._usage: dict[str, int] = {}

    def feed(self, chunk: dict[str, Any]) -> list[ParserEvent]:
        events: list[ParserEvent] = []
        if isinstance(chunk.get("usage"), dict):
            self._usage = usage_counts(chunk["usage"])
        for choice in chunk.get("choices") or []:
            part = choice.get("message") or choice.get("delta") or {}
            self._finish_reason = choice.get("finish_reason") or self._finish_reason
            thinking = part.get("reasoning_content") or part.get("reasoning")
            if isinstance(thinking, str) and thinking:
                # Thinking text is shown apart and never parsed for calls.
                self._reasoning.append(thinking)
                events.append(ReasoningDelta(text=thinking))
            content = part.get("content")
            if isinstance(content, str) and content:
                self._raw.append(content)
                events += self._calls.feed(content)
        return events

    def close(self) -> list[ParserEvent]:
        return self._calls.close()

    def reply(self) -> Reply:
        reasoning = "".join(self._reasoning) + self._calls.reasoning
        errors: tuple[ParseError, ...] = tuple(self._calls.errors)
        return Reply(
            raw="".join(self._raw),
            text=self._calls.text.strip(),
            calls=tuple(self._calls.calls),
            errors=errors,
            reasoning=reasoning,
            finish_reason=self._finish_reason,
            usage=self._usage,
        )


class RegexStrategy:
    """Calls as `<tool_call>{json}</tool_call>` text, parsed once the reply is complete."""

    name = "regex"
    streaming = False

    def build_request(
        self, history: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> ModelRequest:
        messages = [{"role": "system", "content": system_prompt(tools)}, *self.to_wire(history)]
        return ModelRequest({"model": model, "messages": messages})

    def parser(self, call_id_prefix: str) -> TextReplyParser:
        return TextReplyParser(call_id_prefix)

    def to_wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return text_protocol_wire(messages)
