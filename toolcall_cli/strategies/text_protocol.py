"""The text protocol (`--strategy regex`): tools are described in the system prompt, and calls
come back as tagged text, `<tool_call>{json}</tool_call>`, read by a JSON-aware scanner (not a
regular expression; the flag keeps the name the interview question gives it).

The reply is parsed once it has fully arrived. The stream strategy uses the same parser core
(text_parser.CallTextParser) incrementally, so the two always agree on what a reply contains.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from toolcall_cli.events import ParserEvent
from toolcall_cli.messages import Message, ToolSpec
from toolcall_cli.strategies.base import Reply
from toolcall_cli.strategies.replies import ChunkReader, text_protocol_wire
from toolcall_cli.strategies.text_parser import CallTextParser
from toolcall_cli.strategies.text_prompt import PromptStyle, system_prompt
from toolcall_cli.wire import NO_SAMPLING, ModelRequest, Sampling


class TextReplyParser(ChunkReader):
    """Pulls the content text out of OpenAI completions or chunks and feeds it to the parser."""

    def __init__(self, call_id_prefix: str) -> None:
        super().__init__()
        self._calls = CallTextParser(call_id_prefix)
        self._raw: list[str] = []

    def read_part(self, part: dict[str, Any], choice: dict[str, Any]) -> Sequence[ParserEvent]:
        content = part.get("content")
        if not isinstance(content, str) or not content:
            return ()
        self._raw.append(content)
        return self._calls.feed(content)

    def close(self) -> Sequence[ParserEvent]:
        return self._calls.close()

    def reply(self) -> Reply:
        return Reply(
            raw="".join(self._raw),
            text=self._calls.text.strip(),
            calls=tuple(self._calls.calls),
            errors=tuple(self._calls.errors),
            reasoning=self.reasoning + self._calls.reasoning,
            finish_reason=self.finish_reason,
            usage=self.usage,
        )


class TextProtocolStrategy:
    """Calls as `<tool_call>{json}</tool_call>` text, parsed once the reply is complete."""

    name = "regex"
    mode = ""
    streaming = False

    def __init__(
        self,
        *,
        dag: bool = False,
        prompt_style: PromptStyle = "full",
        sampling: Sampling = NO_SAMPLING,
    ) -> None:
        self.dag = dag
        """With --dag the prompt says how a call names itself and uses another's result."""
        self.prompt_style = prompt_style
        self.sampling = sampling

    def build_request(
        self, history: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> ModelRequest:
        prompt = system_prompt(tools, dag=self.dag, style=self.prompt_style)
        messages = [{"role": "system", "content": prompt}, *self.to_wire(history)]
        return ModelRequest(self.sampling.on({"model": model, "messages": messages}))

    def parser(self, call_id_prefix: str, tools: Collection[str] = ()) -> TextReplyParser:
        return TextReplyParser(call_id_prefix)

    def to_wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return text_protocol_wire(messages)
