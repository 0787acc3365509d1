"""`--system-prompt FILE`: the user's own system prompt in place of the strategy's, to try a
prompt change on the same questions (and replay a trace with it)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.strategies.base import ReplyParser, Strategy
from toolcall_cli.wire import ModelRequest


class OwnSystemPrompt:
    """A strategy whose requests carry `text` as their system message; everything else (the
    tools JSON, response_format, the parser) is the wrapped strategy's.

    A request without tools (tools withdrawn, or the last request at the iteration limit) keeps
    the strategy's own: a prompt written to teach calls would invite one where none may be made.
    """

    def __init__(self, strategy: Strategy, text: str) -> None:
        self._strategy = strategy
        self.text = text
        self.name = strategy.name
        self.mode = strategy.mode
        self.streaming = strategy.streaming
        self.sampling = strategy.sampling

    def build_request(
        self, history: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> ModelRequest:
        request = self._strategy.build_request(history, tools, model)
        if not tools:
            return request
        return ModelRequest({**request.body, "messages": self._replaced(request.body["messages"])})

    def _replaced(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # The strategy's system message is the first, where it sends one (native calling in the
        # full style sends none: the tools describe themselves); the user's goes there.
        own = {"role": "system", "content": self.text}
        if messages and messages[0].get("role") == "system":
            return [own, *messages[1:]]
        return [own, *messages]

    def parser(self, call_id_prefix: str, tools: Collection[str] = ()) -> ReplyParser:
        return self._strategy.parser(call_id_prefix, tools)

    def to_wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return self._strategy.to_wire(messages)
